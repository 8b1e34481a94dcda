"""tmux: /resume across every project with rename, delete and sort; /clone; /import; /export to JSONL;
/scoped-models with Ctrl+S; /changelog; and Ctrl+V's message when no clipboard tool is installed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def old_session(cwd: Path, sessions: Path, text: str, name: str | None = None) -> Path:
    sm = SessionManager.create(str(cwd), sessions)
    sm.append_message({"role": "user", "content": text, "timestamp": 1})
    sm.append_message({"role": "assistant", "content": [{"type": "text", "text": f"answer to {text}"}],
                       "provider": "fake", "model": "fake-model", "usage": {}, "stopReason": "stop", "timestamp": 2})
    if name:
        sm.append_session_info(name)
    assert sm.session_file is not None
    return sm.session_file


def test_resume_clone_import_scoped_models_and_changelog(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "sessions") as rig:
        tmux = rig.tmux
        root = rig.home / "sessions"
        here = old_session(rig.cwd, root / "--here--", "local question")
        other_cwd = tmp_path / "other-project"
        other_cwd.mkdir()
        elsewhere = old_session(other_cwd, root / "--other--", "far away question", name="far work")
        outside = old_session(tmp_path, tmp_path / "outside", "imported question")
        rig.start("--session-dir", str(root / "--here--"), env={"PATH": "/usr/bin:/bin"})
        tmux.wait_for("(fake) fake-model")
        tmux.keys("C-v")  # no wl-paste, xclip or pbpaste on this PATH
        tmux.wait_for("No clipboard tool found: install wl-clipboard (Wayland), xclip (X11)")

        # /resume: this project first; Tab lists every project; rename, sort and delete from the list.
        rig.command("/resume")
        tmux.wait_for("Resume Session (Current Folder)", visible=True)
        screen = tmux.wait_for("local question", visible=True)
        assert "far work" not in screen
        tmux.keys("Tab")
        tmux.wait_for("Resume Session (All)", visible=True)
        screen = tmux.wait_for("far work", visible=True)
        assert str(tmp_path) in next(line for line in screen.splitlines() if "far work" in line)  # its project
        tmux.type("far")
        tmux.wait_for("> far", visible=True)
        tmux.keys("C-r")
        tmux.wait_for("Session name", visible=True)
        tmux.keys(*["BSpace"] * len("far work"))
        tmux.type("renamed far work")
        tmux.keys("Enter")
        tmux.wait_for("Renamed to renamed far work", visible=True)
        assert SessionManager.open(elsewhere).session_name == "renamed far work"
        tmux.keys("C-s")
        tmux.wait_for("sort: Recent", visible=True)
        tmux.keys("C-d")
        tmux.wait_for("Delete session", visible=True)
        tmux.keys("Enter")  # Yes
        tmux.wait_for("Deleted", visible=True)
        assert not elsewhere.exists()
        tmux.keys(*["BSpace"] * 3)
        tmux.wait_for("local question", visible=True)
        tmux.type("local")
        tmux.keys("Enter")
        tmux.wait_for(f"Resumed {here}", flat=True)
        assert "answer to local question" in tmux.screen()

        # /clone: a new file with the same conversation; /export to JSONL copies the session file.
        rig.command("/clone")
        tmux.wait_for("Cloned ")
        clones = sorted((root / "--here--").glob("*.jsonl"))
        assert len(clones) == 2
        rig.command("/export copy.jsonl")
        tmux.wait_for("Exported to:")
        copy = (rig.cwd / "copy.jsonl").read_text()
        assert "local question" in copy and copy == next(p for p in clones if p != here).read_text()

        # /export to HTML: the viewer in the theme in force, with this run's system prompt and tools.
        rig.command("/export page.html")
        tmux.wait_for(f"Exported to: {rig.cwd / 'page.html'}", flat=True)
        page = (rig.cwd / "page.html").read_text()
        from pi_core.resources.themes import builtin_themes

        assert f"--exportPageBg:{builtin_themes()['dark'].export['pageBg']}" in page
        assert "System Prompt" in page and "Available Tools" in page and "local question" in page

        # /import: Pi keeps the file's id and working directory; the copy lands in this project's sessions.
        rig.command(f"/import {outside}")
        tmux.wait_for("Replace current session with", visible=True)
        tmux.keys("Enter")
        tmux.wait_for(f"Session imported from: {outside}", flat=True)
        imported = root / "--here--" / outside.name
        assert imported.read_text() == outside.read_text()
        assert "answer to imported question" in tmux.screen()

        # /scoped-models: two models in order, saved with Ctrl+S; Ctrl+P then cycles between them only.
        rig.command("/scoped-models")
        tmux.wait_for("Scoped models", visible=True)
        tmux.keys("Down", "Down")  # fake-model-3
        tmux.type(" ")
        tmux.wait_for("[1] fake/fake-model-3", visible=True)  # enabled ones move to the top, in cycle order
        tmux.type(" ")  # the cursor row is now fake-model-2
        screen = tmux.wait_for("[2] fake/fake-model-2", visible=True)
        assert "[ ] fake/fake-model\n" in screen or "[ ] fake/fake-model " in screen
        tmux.keys("C-s")
        tmux.wait_for("Saved enabledModels (2 models)", visible=True)
        tmux.keys("Enter")
        tmux.wait_for("Cycling through 2 models")
        saved = (rig.home / "settings.toml").read_text()
        assert "enabledModels" in saved and "fake/fake-model-3" in saved
        rig.server.add(Reply(text="unused"))
        tmux.keys("C-p")
        tmux.keys("C-p")
        tmux.wait_for("Model: fake/fake-model-3", visible=True)

        # /changelog: the package's own CHANGELOG.md.
        rig.command("/changelog")
        tmux.wait_for("HTML export")
        assert "The export is a viewer like Pi's" in tmux.screen()
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
        assert json.loads(imported.read_text().splitlines()[0])["cwd"] == str(tmp_path)
