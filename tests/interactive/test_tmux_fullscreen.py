"""tmux: fullscreen mode (Pi 1.6.0's ``tuiMode: "fullscreen"``, ``--tui-mode``): the transcript scrolls in a pane
above the fixed editor (keys, wheel, jumps, search), a drag copies through OSC 52 (tmux keeps it as a paste
buffer), panels take the scroll keys, a resize re-wraps, and the exit output is the transcript or a resume hint."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tmux_kit import Rig, pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
HEIGHT = 30
NO_CLIPBOARD_TOOLS = {"DISPLAY": "", "WAYLAND_DISPLAY": ""}  # the copy goes out as OSC 52


def long_reply(name: str, rows: int = 40) -> Reply:
    return Reply(text=f"{name} begins\n\n" + "\n".join(f"- {name} row {i:02d}" for i in range(rows)))


def start(rig: Rig, settings: dict[str, object], *args: str) -> None:
    (rig.home / "settings.toml").unlink(missing_ok=True)  # a run before wrote one; it would win over the JSON
    (rig.home / "settings.json").write_text(json.dumps(settings))
    rig.start(*args, env=NO_CLIPBOARD_TOOLS, height=HEIGHT, tui_mode=None)
    rig.tmux.wait_for("(fake) fake-model")


def converse(rig: Rig, *names: str) -> None:
    for name in names:
        rig.server.add(long_reply(name))
        rig.command(f"ask {name}")
        rig.tmux.wait_for(f"{name} row 39")


def first_line(rig: Rig) -> str:
    return rig.tmux.visible().split("\n")[0].rstrip(" │┃")


def alternate_screen(rig: Rig) -> bool:
    return rig.tmux.run("display-message", "-p", "-t", rig.tmux.session, "#{alternate_on}").strip() == "1"


def wait_until(check: object, what: str, limit: float = 15.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(what)


def mouse(rig: Rig, button: int, x: int, y: int, release: bool = False) -> None:
    """An SGR mouse report (1-based cells), as a terminal sends it with mouse tracking on."""
    rig.tmux.raw(f"\x1b[<{button};{x};{y}{'m' if release else 'M'}")


def drag(rig: Rig, start: tuple[int, int], end: tuple[int, int]) -> None:
    """Press at ``start``, drag to ``end`` and release there (0-based column, row)."""
    mouse(rig, 0, start[0] + 1, start[1] + 1)
    mouse(rig, 32, end[0] + 1, end[1] + 1)
    mouse(rig, 0, end[0] + 1, end[1] + 1, release=True)


def find(lines: list[str], text: str) -> tuple[int, int]:
    """(column, row) of ``text`` on screen."""
    row = next(i for i, line in enumerate(lines) if text in line)
    return lines[row].index(text), row


def test_scrolling_keys_wheel_and_prompt_jumps(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-scroll") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen", "fullscreenWheelScrollLines": 3})
        assert alternate_screen(rig)
        converse(rig, "alpha", "beta")
        screen = tmux.visible()
        assert "beta row 39" in screen and "Jump to latest message" not in screen
        assert screen.rstrip().split("\n")[-1].endswith("(fake) fake-model")  # the footer stays at the bottom

        tmux.keys("PageUp")
        screen = tmux.wait_for("Jump to latest message · Ctrl+End", visible=True)
        assert "beta row 39" not in screen and "beta row 1" in screen
        tmux.keys("PageDown")
        wait_until(lambda: "beta row 39" in tmux.visible() and "Jump to latest" not in tmux.visible(),
                   "PageDown back at the end follows again")

        tmux.keys("C-Home")  # the very top: the header
        wait_until(lambda: first_line(rig) == "" and "pi v" in tmux.visible().split("\n")[1], "Ctrl+Home")
        before = tmux.visible().split("\n")
        mouse(rig, 65, 10, 5)  # wheel down: fullscreenWheelScrollLines rows
        wait_until(lambda: tmux.visible().split("\n")[0] == before[3], "the wheel moves three rows")
        mouse(rig, 64, 10, 5)
        wait_until(lambda: tmux.visible().split("\n")[0] == before[0], "and back up")

        tmux.keys("C-End")
        wait_until(lambda: "beta row 39" in tmux.visible(), "Ctrl+End")
        tmux.keys("C-S-Up")  # the previous user message at the top of the pane
        wait_until(lambda: first_line(rig).strip() == "ask beta", "previous prompt")
        tmux.keys("C-S-Up")
        wait_until(lambda: first_line(rig).strip() == "ask alpha", "the one before")
        tmux.keys("C-S-Down")
        wait_until(lambda: first_line(rig).strip() == "ask beta", "next prompt")
        tmux.keys("C-S-Down")  # past the last one: the end, following
        wait_until(lambda: "beta row 39" in tmux.visible() and "Jump to latest" not in tmux.visible(), "end")

        # new output while scrolled up does not move the view; Ctrl+End follows it again
        tmux.keys("PageUp")
        tmux.wait_for("Jump to latest message", visible=True)
        top = first_line(rig)
        rig.server.add(Reply(text="gamma arrived"))
        rig.command("ask gamma")
        wait_until(lambda: len(rig.server.requests) == 3, "the third request")
        time.sleep(0.5)
        assert first_line(rig) == top
        tmux.keys("C-End")
        tmux.wait_for("gamma arrived", visible=True)


def test_search_steps_through_matches(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-search") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "regular"}, "--tui-mode", "fullscreen")
        converse(rig, "alpha", "beta")
        tmux.raw("\x1b[102;6u")  # Ctrl+Shift+F (kitty/CSI u form)
        tmux.type("alpha row 1")
        screen = tmux.wait_for("1/10", visible=True)  # rows 10-19
        assert "↑ Shift+Enter · ↓ Enter" in screen
        assert "alpha row 10" in screen  # the view moved to the first match
        coloured = tmux.visible(colours=True)
        assert re.search(r"\x1b\[1;7m(\x1b\[[0-9;]*m)*alpha row 1\b", coloured)  # the selected match, reversed
        tmux.keys("Enter")  # the next match; the editor gets no Enter
        tmux.wait_for("2/10", visible=True)
        tmux.keys("C-g")
        tmux.wait_for("3/10", visible=True)
        tmux.raw("\x1b[13;2u")  # Shift+Enter: back
        tmux.wait_for("2/10", visible=True)
        tmux.keys("Escape")
        wait_until(lambda: "Shift+Enter · ↓ Enter" not in tmux.visible(), "Escape closes the search")
        assert len(rig.server.requests) == 2
        tmux.type("typed after search")  # the editor has the keys again
        tmux.wait_for("typed after search", visible=True)


def test_selection_copies_through_osc52(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-copy") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen"})
        tmux.run("set-option", "-g", "set-clipboard", "on")  # OSC 52 from the app becomes a tmux paste buffer
        rig.server.add(Reply(text="copy me please\n\nand this second line"))
        rig.command("hello")
        lines = tmux.wait_for("and this second line", visible=True).split("\n")
        column, row = find(lines, "copy me please")
        drag(rig, (column, row), (column + 6, row))
        wait_until(lambda: tmux.run("show-buffer").strip() == "copy me", "the selection reaches the clipboard")
        tmux.wait_for("Copied the selection (OSC 52)", visible=True)

        # over two rows
        second = find(lines, "and this second")[1]
        drag(rig, (column + 5, row), (column + 2, second))
        wanted = f"me please\n\n{' ' * column}and"  # from the row's start: outputPad's cells too
        wait_until(lambda: tmux.run("show-buffer").strip("\n") == wanted, "a selection over rows")

        # a double click takes the word
        for _ in range(2):
            mouse(rig, 0, column + 9, row + 1)
            mouse(rig, 0, column + 9, row + 1, release=True)
        wait_until(lambda: tmux.run("show-buffer").strip() == "please", "a double click selects the word")


def test_copy_on_select_off_copies_with_ctrl_x(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-copyx") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen", "fullscreenCopyOnSelect": False})
        tmux.run("set-option", "-g", "set-clipboard", "on")
        rig.server.add(Reply(text="select this text"))
        rig.command("hello")
        lines = tmux.wait_for("select this text", visible=True).split("\n")
        column, row = find(lines, "select this text")
        drag(rig, (column, row), (column + 5, row))
        time.sleep(0.5)
        assert "Copied the selection" not in tmux.visible()
        tmux.keys("C-x")
        wait_until(lambda: tmux.run("show-buffer").strip() == "select", "Ctrl+X copies the selection")


def test_panels_and_the_menu_take_the_scroll_keys(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-panel") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen"})
        converse(rig, "alpha")
        rig.command("/model")
        tmux.wait_for("Fake Model Three", visible=True)
        tmux.keys("PageDown")
        time.sleep(0.3)
        tmux.keys("PageUp")  # the picker's own page keys: the transcript stays at the end
        time.sleep(0.5)
        assert "Jump to latest message" not in tmux.visible()
        tmux.keys("Escape")
        wait_until(lambda: "Fake Model Three" not in tmux.visible(), "the picker closes")
        tmux.type("/")  # the completion menu pages too
        before = tmux.wait_for("/model", visible=True)
        tmux.keys("PageDown")
        wait_until(lambda: tmux.visible() != before, "the menu pages")
        assert "Jump to latest message" not in tmux.visible()
        tmux.keys("Escape", "C-c")
        tmux.keys("PageUp")
        tmux.wait_for("Jump to latest message", visible=True)


def test_a_plugin_overlay_takes_the_scroll_keys(tmp_path: Path) -> None:
    pytest.importorskip("pi_examples.overlay_test")  # the ported example pack (examples/pi-examples)
    with pi_rig(tmp_path, "fs-overlay") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen"}, "-e", "plugin:overlay_test")
        converse(rig, "alpha")
        rig.command("/overlay-test")
        tmux.wait_for("🧪 Overlay Test", visible=True)
        tmux.keys("PageUp", "Down")  # the overlay has the keys: the transcript stays at the end
        tmux.wait_for("▶ Run:", visible=True)
        time.sleep(0.3)
        assert "Jump to latest message" not in tmux.visible()
        tmux.keys("Escape")
        tmux.wait_gone("🧪 Overlay Test")
        tmux.keys("PageUp")
        tmux.wait_for("Jump to latest message", visible=True)


def test_resize_rewraps_and_keeps_the_end(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-resize") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen"})
        rig.server.add(Reply(text="word " * 60 + "\n\nthe very end"))
        rig.command("hello")
        tmux.wait_for("the very end", visible=True)
        tmux.run("resize-window", "-t", tmux.session, "-x", "60", "-y", str(HEIGHT))
        wait_until(lambda: all(len(line) <= 60 for line in tmux.visible().split("\n"))
                   and "the very end" in tmux.visible(), "re-wrapped at 60 columns, still at the end")
        assert "/100k" in tmux.visible().rstrip().split("\n")[-1]  # the footer still closes the screen


def test_exit_prints_the_transcript_and_the_resume_hint(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-exit") as rig:
        tmux = rig.tmux
        start(rig, {"tuiMode": "fullscreen"})
        converse(rig, "alpha")
        tmux.keys("C-d")
        screen = tmux.wait_for("EXITED=0")
        assert not alternate_screen(rig)
        assert "ask alpha" in screen and "alpha row 00" in screen and "alpha row 39" in screen
        hint = screen[screen.index("To resume this session:"):].split("\n")
        session = next(rig.home.glob("sessions/*/*.jsonl"))
        assert hint[1].strip() == f"pi --session {session.stem.split('_')[-1]}"

        start(rig, {"tuiMode": "fullscreen", "fullscreenExitOutput": "resume-hint"})
        converse(rig, "beta")
        tmux.keys("C-d")
        screen = tmux.wait_for("EXITED=0")
        assert "To resume this session:" in screen and "beta row 00" not in screen


def test_the_mode_by_default_flag_and_setting(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-modes") as rig:
        start(rig, {})  # Pi's default
        assert alternate_screen(rig)
        start(rig, {"tuiMode": "regular"})
        assert not alternate_screen(rig)
        start(rig, {"tuiMode": "fullscreen"}, "--tui-mode", "regular")  # the flag wins
        assert not alternate_screen(rig)
        start(rig, {"tuiMode": "sideways"})
        # the settings check names the file and the key, and the default mode runs
        rig.tmux.wait_for('settings.json: tuiMode must be one of "regular", "fullscreen", not "sideways"; ignored',
                          flat=True)
        assert alternate_screen(rig)


def test_bad_tui_mode_is_refused(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "--tui-mode", "bogus",
                           "-p", "hi"], check=False, capture_output=True, text=True, timeout=60,
                          env={"PI_CODING_AGENT_DIR": str(tmp_path), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    assert 'Error: Invalid TUI mode "bogus". Valid values: regular, fullscreen' in done.stderr
