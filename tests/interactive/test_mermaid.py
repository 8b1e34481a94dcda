"""Mermaid diagrams in a reply as the transcript draws them (rich's recording console): which kinds are drawn, what
stays a code block (too wide, too large, a kind nothing draws, not a reply), and the theme's colours."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from pi_plugins.interactive import diagrams, style
from rich.console import Console

from pi_core.tui.mermaid import MAX_STATEMENTS


@pytest.fixture(autouse=True)
def streaming_mode() -> Iterator[None]:
    yield
    diagrams.mode = "streaming"


def drawn(markdown: str, width: int = 100, *, reply: bool = True, streaming: bool = False) -> str:
    console = Console(record=True, file=io.StringIO(), width=width, color_system="truecolor")
    console.print(style.markdown(markdown, reply=reply, streaming=streaming))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


def block(source: str) -> str:
    return f"Look:\n\n```mermaid\n{source}\n```\n"


def test_a_pie_chart_shows_each_slice_with_its_share() -> None:
    text = drawn(block('pie title Pets\n  "Dogs" : 75\n  "Cats" : 25'))
    assert "Dogs" in text and "Cats" in text and "75" in text and "25" in text
    assert "█" in text and "```mermaid" not in text


def test_a_sequence_diagram_after_front_matter_and_a_directive() -> None:
    text = drawn(block("---\ntitle: Greeting\n---\n%%{init: {'theme': 'dark'}}%%\nsequenceDiagram\n"
                       "  Alice->>Bob: Hello\n  Bob-->>Alice: Hi"))
    lines = text.splitlines()
    assert any("│  Alice  │" in line and "│  Bob  │" in line for line in lines), text
    assert "Hello" in text and "►" in text and "◄" in text and "sequenceDiagram" not in text


@pytest.mark.parametrize("source", [
    "sankey-beta\n  a,b,1",  # termaid would read it as a flowchart
    "flowchart LR",  # a header, nothing to draw yet
    "graph TD\n" + "\n".join(f"  N{i} --> N{i + 1}" for i in range(MAX_STATEMENTS + 1)),
])
def test_what_draws_nothing_useful_stays_a_code_block(source: str) -> None:
    text = drawn(block(source))
    assert "```mermaid" in text and source.splitlines()[0] in text and "┌" not in text


def test_a_diagram_wider_than_the_transcript_stays_code() -> None:
    source = "flowchart LR\n  A[First step] --> B[Second step] --> C[Third step]"
    assert "│  First step  ├" in drawn(block(source), width=100)
    narrow = drawn(block(source), width=40)
    assert "```mermaid" in narrow and "┌" not in narrow


def test_modes_and_surfaces() -> None:
    source = block("flowchart LR\n  A[Start] --> B[Done]")
    assert "│  Start  ├" in drawn(source, streaming=True)  # streaming, Pi's default
    assert "```mermaid" in drawn(source, reply=False)  # a changelog or other non-reply Markdown
    diagrams.mode = "final"
    assert "```mermaid" in drawn(source, streaming=True) and "│  Start  ├" in drawn(source)
    diagrams.mode = "off"
    assert "```mermaid" in drawn(source) and "┌" not in drawn(source)


def test_the_diagram_takes_the_theme_s_colours() -> None:
    console = Console(record=True, file=io.StringIO(), width=80, color_system="truecolor")
    console.print(style.markdown(block("flowchart LR\n  A[Start] --> B[Done]"), reply=True))
    coloured = console.export_text(styles=True)
    accent = style.current().color("accent").lstrip("#")
    rgb = ";".join(str(int(accent[i:i + 2], 16)) for i in (0, 2, 4))
    assert f"38;2;{rgb}m───" in coloured  # the edge in the accent colour
