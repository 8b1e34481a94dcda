"""tmux: the editor and transcript: images pasted from the clipboard or as a dropped path, Ctrl+O on every
collapsed output, Alt+Up, Shift+Ctrl+P, Tab on an @file, /session's whole path, and the settings
hideThinkingBlock, quietStartup "header", collapseChangelog with the post-update changelog."""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def png(path: Path, colour: str) -> Path:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (3, 2), colour).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path


def fake_wl_paste(bin_dir: Path, image: Path) -> None:
    bin_dir.mkdir()
    script = bin_dir / "wl-paste"
    script.write_text(f'#!/bin/sh\nif [ "$1" = "--list-types" ]; then echo text/plain; echo image/png; exit 0; fi\n'
                      f'if [ "$2" = "image/png" ]; then cat "{image}"; exit 0; fi\nexit 1\n')
    script.chmod(0o755)


def lines(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines()]


def images_sent(body: dict) -> int:
    last = body["messages"][-1]
    return sum(1 for block in last["content"] if isinstance(block, dict) and block.get("type") == "image")


def test_editor_images_queue_and_display_settings(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "editor") as rig:
        tmux = rig.tmux
        (rig.cwd / "notes.txt").write_text("remember the milk\n")
        fake_wl_paste(tmp_path / "bin", png(tmp_path / "clip.png", "red"))
        dropped = png(rig.cwd / "dropped pic.png", "blue")
        (rig.home / "settings.json").write_text(json.dumps({
            "hideThinkingBlock": True, "quietStartup": "header", "collapseChangelog": True,
            "lastChangelogVersion": "0.0.1"}))
        import os

        rig.start(env={"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "WAYLAND_DISPLAY": "wayland-test"})
        screen = tmux.wait_for("(fake) fake-model")
        assert "esc interrupt" in screen and "Plugins:" not in screen  # quietStartup "header"
        assert "Updated to pi 0.1.0. What's new:" in screen  # after an update: the new entries, condensed
        assert "Themes in Pi's JSON format" in screen and "while pi runs." not in screen
        assert 'lastChangelogVersion = "0.1.0"' in (rig.home / "settings.toml").read_text()

        # Ctrl+V: the clipboard's image becomes a chip and goes with the message.
        tmux.keys("C-v")
        tmux.wait_for("[Image #1]", visible=True)
        rig.server.add(Reply(thinking="secret pondering", text="A red picture."))
        rig.command("what is this")
        tmux.wait_for("A red picture.")
        assert images_sent(rig.server.requests[-1].body) == 1
        screen = tmux.screen()
        assert "Thinking… (ctrl+t to show)" in screen and "secret pondering" not in screen  # hideThinkingBlock
        assert "[Image #1]" not in tmux.visible()

        # A dropped (pasted) image path becomes a chip too; an empty message with a chip sends the image.
        tmux.paste(f"'{dropped}'")
        tmux.wait_for("[dropped pic.png]", visible=True)
        rig.server.add(Reply(text="A blue picture."))
        tmux.keys("Enter")
        tmux.wait_for("A blue picture.")
        assert images_sent(rig.server.requests[-1].body) == 1

        # Ctrl+O: every collapsed output opens, the older one too.
        first = "; ".join(f"echo first-{i}" for i in range(1, 13))
        second = "; ".join(f"echo second-{i}" for i in range(1, 13))
        rig.server.add(Reply(tool_calls=[("bash", {"command": first}), ("bash", {"command": second})]),
                       Reply(text="Both ran."))
        rig.command("run both")
        screen = tmux.wait_for("Both ran.")
        assert "first-1" not in lines(screen) and "second-1" not in lines(screen) and "earlier lines" in screen
        tmux.keys("C-o")
        tmux.wait_for("Tool output expanded")
        deadline = time.monotonic() + 30
        while "second-1" not in lines(tmux.screen()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "first-1" in lines(tmux.screen()) and "second-1" in lines(tmux.screen())

        # Alt+Up: queued messages come back into the editor.
        gate = rig.cwd / "go"
        command = "while [ ! -f go ]; do sleep 0.05; done; echo slow-done"
        rig.server.add(Reply(tool_calls=[("bash", {"command": command})]), Reply(text="Slow one finished."))
        rig.command("slow please")
        tmux.wait_for("$ " + command)
        rig.command("queued one")
        rig.command("queued two")
        tmux.wait_for("Steering: queued two")
        tmux.keys("M-Up")
        screen = tmux.wait_gone("Steering: queued two")
        assert "queued one" in lines(screen) and "queued two" in lines(screen) and "Steering: queued" not in screen
        gate.write_text("")
        tmux.wait_for("Slow one finished.")
        assert "queued one" not in json.dumps(rig.server.requests[-1].body)
        tmux.keys("C-c")

        # Shift+Ctrl+P cycles backwards (kitty protocol sequence); Ctrl+P forwards again.
        tmux.raw("\x1b[112;6u")
        tmux.wait_for("(fake) fake-model-3", visible=True)
        tmux.keys("C-p")
        tmux.wait_for("Model: fake/fake-model", visible=True)

        # Tab on an @file completes it and closes the menu.
        tmux.type("read @note")
        tmux.wait_for("notes.txt", visible=True)
        tmux.keys("Tab")
        screen = tmux.wait_for("read @notes.txt", visible=True)
        assert sum(1 for line in screen.splitlines() if line.strip() == "notes.txt") == 0
        tmux.keys("C-c")

        # /session: the whole file path, wrapped (no "…").
        rig.command("/session")
        tmux.wait_for("Directory")
        sessions = list((rig.home / "sessions").rglob("*.jsonl"))
        assert len(sessions) == 1 and len(str(sessions[0])) > 110
        screen = tmux.screen()
        assert "…" not in screen.split("File", 1)[1].split("Directory", 1)[0]
        assert str(sessions[0]) in "".join(screen.split())  # all of it, over wrapped lines
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
