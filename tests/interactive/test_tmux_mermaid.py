"""tmux: ``markdown.mermaid`` (issue 36): a mermaid block of a reply drawn as a Unicode diagram in both TUI modes,
during the stream too with ``streaming`` (Pi 1.6.0's default), only once the reply is complete with ``final``, never
with ``off``; a diagram kind nothing draws keeps its code block."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import Rig, pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

FLOWCHART = "flowchart LR\n  A[Parse input] --> B[Write output]"
REPLY = f"Here is the plan:\n\n```mermaid\n{FLOWCHART}\n```\n\nDONE-MARK"


def _start(rig: Rig, settings: dict[str, object], tui_mode: str = "regular") -> None:
    (rig.home / "settings.json").write_text(json.dumps(settings))
    rig.start(tui_mode=tui_mode)
    rig.tmux.wait_for("(fake) fake-model")


def _box_row(screen: str) -> bool:
    """The diagram's middle row: both labels in their boxes, joined by an arrow."""
    return any("│  Parse input  ├" in line and "►│  Write output  │" in line for line in screen.splitlines())


def _drawn_after(rig: Rig, text: str) -> str:
    """The screen once ``text`` is on it and the finished reply had time to be drawn again."""
    screen = rig.tmux.wait_for(text)
    deadline = time.monotonic() + 10
    while not _box_row(screen) and time.monotonic() < deadline:
        time.sleep(0.2)
        screen = rig.tmux.screen()
    return screen


@pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])
def test_final_draws_the_diagram_of_a_finished_reply(tmp_path: Path, tui_mode: str) -> None:
    with pi_rig(tmp_path, f"mermaid-final-{tui_mode}") as rig:
        _start(rig, {"markdown": {"mermaid": "final"}}, tui_mode)
        rig.server.add(Reply(text=REPLY))
        rig.command("draw it")
        screen = _drawn_after(rig, "DONE-MARK")
        assert _box_row(screen), screen
        assert "┌───────────────┐" in screen and "└───────────────┘" in screen
        assert "```mermaid" not in screen and "A[Parse input]" not in screen


def test_streaming_draws_the_diagram_while_the_reply_still_arrives(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mermaid-streaming") as rig:
        _start(rig, {})  # Pi's default: streaming
        tail = " and then some more words" * 12
        rig.server.add(Reply(text=REPLY + tail + " END-OF-REPLY", chunk_size=4, chunk_delay=0.1))
        rig.command("draw it")
        screen = rig.tmux.wait_for("DONE-MARK")
        assert "END-OF-REPLY" not in screen  # still streaming ...
        assert _box_row(screen), screen  # ... and the diagram is already drawn
        assert "```mermaid" not in screen


def test_final_keeps_the_code_while_streaming_and_draws_at_the_end(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mermaid-final-stream") as rig:
        _start(rig, {"markdown": {"mermaid": "final"}})
        tail = " and then some more words" * 12
        rig.server.add(Reply(text=REPLY + tail + " END-OF-REPLY", chunk_size=4, chunk_delay=0.1))
        rig.command("draw it")
        screen = rig.tmux.wait_for("DONE-MARK")
        assert "END-OF-REPLY" not in screen and "```mermaid" in screen and "A[Parse input]" in screen
        assert not _box_row(screen)
        screen = _drawn_after(rig, "END-OF-REPLY")
        assert _box_row(screen), screen


def test_off_leaves_the_fenced_code(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mermaid-off") as rig:
        _start(rig, {"markdown": {"mermaid": "off"}})
        rig.server.add(Reply(text=REPLY))
        rig.command("draw it")
        screen = rig.tmux.wait_for("DONE-MARK")
        time.sleep(0.5)
        screen = rig.tmux.screen()
        assert "```mermaid" in screen and "A[Parse input] --> B[Write output]" in screen
        assert "┌" not in screen.split("draw it", 1)[1].split("DONE-MARK", 1)[0]


def test_a_kind_nothing_draws_keeps_its_code_block(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mermaid-unknown") as rig:
        _start(rig, {"markdown": {"mermaid": "final"}})
        rig.server.add(Reply(text="See:\n\n```mermaid\nsankey-beta\n  Input,Output,5\n```\n\nDONE-MARK"))
        rig.command("draw it")
        rig.tmux.wait_for("DONE-MARK")
        time.sleep(0.5)  # the finished reply drawn again
        screen = rig.tmux.screen()
        assert "```mermaid" in screen and "Input,Output,5" in screen


def test_the_settings_panel_turns_diagrams_off_at_once(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "mermaid-panel") as rig:
        _start(rig, {})
        rig.command("/settings")
        rig.tmux.wait_for("Mermaid diagrams", visible=True)
        for _ in range(2):
            rig.tmux.keys("Down")
        rig.tmux.keys("Enter")  # streaming -> off
        rig.tmux.wait_for("Saved markdown.mermaid = off")
        rig.tmux.keys("Escape")
        rig.tmux.wait_gone("Mermaid diagrams")
        assert '[markdown]\nmermaid = "off"' in (rig.home / "settings.toml").read_text()
        rig.server.add(Reply(text=REPLY))
        rig.command("draw it")
        rig.tmux.wait_for("DONE-MARK")
        time.sleep(0.5)
        screen = rig.tmux.screen()
        assert "```mermaid" in screen and "A[Parse input] --> B[Write output]" in screen and not _box_row(screen)
