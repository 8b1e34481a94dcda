"""Mermaid diagrams as Unicode box-drawing art, for the terminal transcript and the HTML export
(``markdown.mermaid``, docs/interactive.md#mermaid-diagrams). termaid draws them; this module decides what it
is given and keeps what it drew.

A source is drawn only when its header names a kind termaid draws (``flowchart``/``graph``,
``sequenceDiagram``, ``pie``, ``classDiagram``, ``stateDiagram``, ``erDiagram``, ``gitGraph``, ``mindmap``,
``timeline`` ...): termaid reads any other text as a flowchart, and a ``sankey-beta`` block would come out as
one box of nonsense. A source that draws nothing (blank, or not one statement parsed) and one over
``MAX_STATEMENTS`` lines (Pi caps diagrams at 128 nodes; termaid's layout slows down sharply past that) are
left to the caller, which shows the code block. Each drawing is cached by source: a streaming reply redraws
the same diagram many times a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Header word -> kind; termaid's own dispatch (termaid/__init__.py) names these.
KINDS = {
    "graph": "flowchart", "flowchart": "flowchart", "flowchart-elk": "flowchart",
    "sequenceDiagram": "sequence", "classDiagram": "class", "classDiagram-v2": "class",
    "stateDiagram": "state", "stateDiagram-v2": "state", "erDiagram": "er", "pie": "pie",
    "gitGraph": "gitgraph", "mindmap": "mindmap", "timeline": "timeline", "gantt": "gantt",
    "journey": "journey", "block": "block", "block-beta": "block", "packet": "packet", "packet-beta": "packet",
    "xychart": "xychart", "xychart-beta": "xychart", "quadrantChart": "quadrant", "kanban": "kanban",
    "treemap": "treemap", "treemap-beta": "treemap", "architecture": "architecture",
    "architecture-beta": "architecture",
}
MAX_STATEMENTS = 128
_FRONTMATTER = re.compile(r"\A\s*---[ \t]*\n.*?\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_HEADER = re.compile(r"[A-Za-z][\w-]*")

# termaid's style keys (termaid/output/styled.py) -> the theme roles Pi colours a diagram with.
_ROLES = {"label": "text", "bold_label": "text", "italic_label": "text", "edge_label": "text",
          "edge": "accent", "arrow": "accent", "subgraph_label": "accent"}


@dataclass(frozen=True)
class Diagram:
    """A drawn diagram: rows of ``(text, role)`` runs (role: a theme colour role, ``""`` for blank filler)."""

    kind: str
    rows: tuple[tuple[tuple[str, str], ...], ...]
    width: int

    @property
    def plain(self) -> list[str]:
        return ["".join(text for text, _ in row) for row in self.rows]


def diagram_body(source: str) -> tuple[str, str] | None:
    """``(kind, source from its header line on)``, or None when no header names a kind termaid draws.
    Front matter, ``%%`` comments and ``%%{init}%%`` directives before the header are skipped."""
    lines = _FRONTMATTER.sub("", source, count=1).splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%%"):
            continue
        header = _HEADER.match(stripped)
        kind = KINDS.get(header.group(0)) if header else None
        return (kind, "\n".join(lines[index:])) if kind else None
    return None


def _role(style: str) -> str:
    if style == "default":
        return ""
    if style.startswith("linkstyle:"):
        return "accent"
    return _ROLES.get(style, "borderMuted")  # boxes, frames, author-styled nodes, chart sections


@lru_cache(maxsize=64)
def draw(source: str) -> Diagram | None:
    """The diagram of a mermaid block's source, or None to show the code instead."""
    found = diagram_body(source)
    if found is None or source.count("\n") > MAX_STATEMENTS:
        return None
    kind, body = found
    import termaid

    try:
        document = termaid.render_styled(body)
    except Exception:  # noqa: BLE001 (a half-typed diagram may trip any parser: the code block stays)
        return None
    rows = tuple(tuple((chunk["text"], _role(chunk["style"])) for chunk in line) for line in document["lines"])
    while rows and not "".join(text for text, _ in rows[-1]).strip():
        rows = rows[:-1]
    if not any(text.strip() for row in rows for text, _ in row):
        return None
    from pi_core.tui.width import visible_width

    width = max(visible_width("".join(text for text, _ in row)) for row in rows)
    return Diagram(kind, rows, width)
