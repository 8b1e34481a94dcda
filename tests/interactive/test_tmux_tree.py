"""tmux: /tree on a session Pi itself wrote, as Pi has it: it opens at the current leaf, hides model and thinking
changes by default, filters, folds, sets and clears labels, and leaving a branch asks "Summarize branch?" and
writes a branch_summary entry. ``treeFilterMode`` sets the filter it opens with."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_tmux_look import keep
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
PI_SESSION = Path(__file__).parents[1] / "export" / "fixtures" / "branched-with-summary.jsonl"


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def tree_part(screen: str) -> str:
    return screen.split("Session tree", 1)[-1]


def selected_line(screen: str) -> str:
    return next(line for line in screen.splitlines() if line.startswith("› "))


def test_tree_navigation_labels_and_branch_summary(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "tree") as rig:
        tmux = rig.tmux
        session = tmp_path / "sessions" / "pi-made.jsonl"
        session.parent.mkdir()
        shutil.copy(PI_SESSION, session)
        rig.start("--session", str(session), "--session-dir", str(session.parent))
        tmux.wait_for("(fake) fake-model")  # the footer: the app reads keys now
        assert "third turn done" in tmux.screen()
        rig.command("/tree")
        screen = tmux.wait_for("Session tree", visible=True)
        keep("tree", tmux.visible())
        assert "third turn done" in selected_line(screen)  # opens at the current leaf
        assert "[model:" not in screen and "[thinking:" not in screen
        assert "├─ • [branch summary]" in screen and "└─ user: TURN2 run a command" in screen

        tmux.keys("C-a")  # all entries, model and thinking changes included
        screen = tmux.wait_for("[filter: all]", visible=True)
        assert "[model: fake-model]" in screen and "[thinking: off]" in screen
        tmux.keys("C-u")  # user messages only (the leaf is not one)
        screen = tmux.wait_for("[filter: user-only]", visible=True)
        assert "assistant:" not in tree_part(screen).split("[filter", 1)[0]
        tmux.keys("C-d")
        tmux.wait_gone("[filter:")

        # Fold the summary's branch segment, unfold it again.
        tmux.type("branch summary")
        tmux.wait_for("[search: branch summary]", visible=True)
        tmux.keys("Escape")  # clears the search, keeps the selection
        screen = tmux.wait_gone("[search:")
        assert "[branch summary]" in selected_line(screen)
        tmux.keys("C-Left")
        screen = tmux.wait_for("⊞", visible=True)
        assert "TURN3 on the branch" not in tree_part(screen)
        tmux.keys("C-Right")
        tmux.wait_for("TURN3 on the branch", visible=True)

        # A label on TURN2, shown in the tree and kept in the file; then cleared again.
        tmux.type("TURN2")
        tmux.wait_for("[search: TURN2]", visible=True)
        tmux.type("L")  # Shift+L
        tmux.wait_for("Label (empty to remove):", visible=True)
        tmux.type("side-quest")
        tmux.keys("Enter")
        screen = tmux.wait_for("[side-quest] user: TURN2", visible=True)
        assert [e["label"] for e in entries(session) if e["type"] == "label"] == ["side-quest"]
        tmux.type("L")  # Shift+L
        tmux.wait_for("Label (empty to remove):", visible=True)
        tmux.keys(*["BSpace"] * len("side-quest"), "Enter")
        tmux.wait_gone("Label (empty to remove):")
        assert "[side-quest]" not in tmux.wait_for("user: TURN2 run a command", visible=True)
        labels = [e for e in entries(session) if e["type"] == "label"]
        assert len(labels) == 2 and not labels[-1].get("label")

        # Leave the branch for "second turn done": summarize what is left behind.
        tmux.keys(*["BSpace"] * len("TURN2"))
        tmux.wait_gone("[search:")
        tmux.type("second turn")
        tmux.wait_for("[search: second turn]", visible=True)
        rig.server.add(Reply(text="## Goal\nThe TURN3 exploration, summarized."))
        tmux.keys("Enter")
        tmux.wait_for("Summarize branch?", visible=True)
        tmux.keys("Down", "Enter")
        tmux.wait_for("Navigated to selected point (branch summarized)")
        summaries = [e for e in entries(session) if e["type"] == "branch_summary"]
        assert len(summaries) == 2 and "The TURN3 exploration, summarized." in summaries[-1]["summary"]
        assert summaries[-1]["parentId"] == "5e209602"  # hangs from the entry continued from
        assert "third turn done" in json.dumps(rig.server.requests[-1].body)  # the abandoned branch was sent
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")

        # treeFilterMode: /tree opens with that filter.
        toml = rig.home / "settings.toml"  # pi wrote it already (settings.toml wins over settings.json)
        toml.write_text(toml.read_text() + 'treeFilterMode = "user-only"\n')
        rig.start("--session", str(session), "--session-dir", str(session.parent))
        tmux.wait_for("(fake) fake-model")
        rig.command("/tree")
        tmux.wait_for("[filter: user-only]", visible=True)
        tmux.keys("Escape")
        tmux.wait_gone("Session tree")
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
