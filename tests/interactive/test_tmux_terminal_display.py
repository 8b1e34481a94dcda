"""tmux: inline images, OSC 8 links, ``outputPad`` and ``terminal.clearOnShrink`` (issue 36), as a user's terminal
receives them: the raw stream pi writes (``pipe-pane``; tmux cannot show images) and the screen."""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import Rig, pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

KITTY = re.compile(r"\x1b_Ga=T,f=100,q=2,C=1,c=(\d+),r=(\d+)")
ITERM2 = re.compile(r"\x1b\]1337;File=inline=1;size=\d+;width=(\d+);height=auto")
LINK = re.compile(r"\x1b\]8;[^;\x1b]*;(file://[^\x1b]+)\x1b\\")
BARE = {"TERM": "xterm-256color"}


def png(path: Path, size: tuple[int, int] = (400, 200)) -> Path:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, "red").save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    return path


def raw_run(rig: Rig, tmp_path: Path, settings: dict[str, object], env: dict[str, str], *, tool: tuple[str, dict],
            wait: str, tui_mode: str = "regular") -> str:
    """Start pi with ``settings``, let the model call ``tool``, and return all pi wrote until ``wait`` showed."""
    (rig.home / "settings.json").write_text(json.dumps(settings))
    raw = tmp_path / "raw-output"
    rig.start(env=env, tui_mode=tui_mode, outside_tmux=True)  # in tmux pi draws no images (as Pi)
    rig.tmux.run("pipe-pane", "-o", "-t", rig.tmux.session, f"cat >> {raw}")
    rig.tmux.wait_for("(fake) fake-model")
    rig.server.add(Reply(tool_calls=[tool]), Reply(text="All done here."))
    rig.command("look at it")
    rig.tmux.wait_for(wait)
    time.sleep(0.5)  # the frame after the answer reaches the pipe
    return raw.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize(("env", "protocol"), [({"TERM_PROGRAM": "iTerm.app"}, "iterm2"),
                                               ({"KITTY_WINDOW_ID": "1"}, "kitty")])
def test_an_image_read_by_the_read_tool_reaches_the_terminal_in_its_protocol(tmp_path: Path, env: dict[str, str],
                                                                            protocol: str) -> None:
    with pi_rig(tmp_path, f"image-{protocol}") as rig:
        png(rig.cwd / "red.png")
        written = raw_run(rig, tmp_path, {"terminal": {"imageWidthCells": 30}}, {**BARE, **env},
                          tool=("read", {"path": "red.png"}), wait="All done here.")
        pattern = KITTY if protocol == "kitty" else ITERM2
        other = ITERM2 if protocol == "kitty" else KITTY
        found = pattern.search(written)
        assert found is not None and other.search(written) is None, written[-3000:]
        assert found.group(1) == "30"  # the width the setting asks for (400x200 fits 30 columns)
        assert "[Image:" not in rig.tmux.screen()


def test_image_width_cells_changes_the_width_the_image_is_drawn_at(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "image-width") as rig:
        png(rig.cwd / "red.png")
        written = raw_run(rig, tmp_path, {"terminal": {"imageWidthCells": 12}}, {**BARE, "KITTY_WINDOW_ID": "3"},
                          tool=("read", {"path": "red.png"}), wait="All done here.")
        found = KITTY.search(written)
        assert found is not None and found.groups() == ("12", "3"), written[-2000:]  # 400x200 px in 12x3 cells


@pytest.mark.parametrize("settings", [{"terminal": {"showImages": False}}, {"terminal": {"images": False}}, {}])
def test_without_images_the_tool_output_shows_the_image_as_a_text_line(tmp_path: Path,
                                                                      settings: dict[str, object]) -> None:
    """showImages off, the protocol turned off, or a terminal without one (plain xterm): the text line."""
    env = {**BARE, "TERM_PROGRAM": "iTerm.app"} if settings else BARE
    with pi_rig(tmp_path, f"image-off-{len(json.dumps(settings))}") as rig:
        png(rig.cwd / "red.png")
        written = raw_run(rig, tmp_path, settings, env, tool=("ls", {"path": "."}), wait="All done here.")
        rig.tmux.keys("C-o")  # tool output expanded: the read shows its text
        rig.server.add(Reply(tool_calls=[("read", {"path": "red.png"})]), Reply(text="Second look."))
        rig.command("again")
        rig.tmux.wait_for("Second look.")
        rig.tmux.wait_for("[Image: [image/png] 400x200]")
        written = (tmp_path / "raw-output").read_bytes().decode("utf-8", "replace")
        assert KITTY.search(written) is None and ITERM2.search(written) is None


@pytest.mark.parametrize("links", [True, False])
def test_paths_in_tool_titles_are_osc_8_links_to_the_file(tmp_path: Path, links: bool) -> None:
    with pi_rig(tmp_path, f"links-{links}") as rig:
        (rig.cwd / "notes.txt").write_text("one\ntwo\n")
        written = raw_run(rig, tmp_path, {"terminal": {"hyperlinks": links}}, {},  # xterm: the setting decides
                          tool=("read", {"path": "notes.txt"}), wait="All done here.")
        urls = LINK.findall(written)
        if links:
            assert (rig.cwd / "notes.txt").as_uri() in urls, written[-2000:]
            assert re.search(r"\x1b\]8;[^\x1b]*\x1b\\(?:\x1b\[[0-9;]*m)*notes\.txt", written)
        else:
            assert urls == []


def test_links_are_detected_from_the_terminal_and_pi_hyperlinks_overrides(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "links-auto") as rig:
        (rig.cwd / "notes.txt").write_text("one\n")
        written = raw_run(rig, tmp_path, {}, {**BARE, "TERM_PROGRAM": "WezTerm"}, tool=("read", {"path": "notes.txt"}),
                          wait="All done here.")
        assert (rig.cwd / "notes.txt").as_uri() in LINK.findall(written)
    (tmp_path / "off").mkdir()
    with pi_rig(tmp_path / "off", "links-env-off") as rig:
        (rig.cwd / "notes.txt").write_text("one\n")
        written = raw_run(rig, tmp_path / "off", {}, {**BARE, "TERM_PROGRAM": "WezTerm", "PI_HYPERLINKS": "0"},
                          tool=("read", {"path": "notes.txt"}), wait="All done here.")
        assert LINK.findall(written) == []


def columns_of(screen: str, text: str) -> int:
    """The column of the row that holds only ``text`` (the command's output, not its ``$ echo`` title)."""
    line = next(line for line in screen.splitlines() if line.strip() == text)
    return line.index(text)


@pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])
def test_output_pad_moves_messages_and_tool_output_off_the_left_edge(tmp_path: Path, tui_mode: str) -> None:
    found: dict[int, dict[str, int]] = {}
    for pad in (0, 1):
        (tmp_path / str(pad)).mkdir()
        with pi_rig(tmp_path / str(pad), f"pad-{pad}-{tui_mode}") as rig:
            (rig.home / "settings.json").write_text(json.dumps({"outputPad": pad}))
            rig.start(tui_mode=tui_mode)
            rig.tmux.wait_for("(fake) fake-model")
            rig.server.add(Reply(tool_calls=[("bash", {"command": "echo tool-said-this"})]),
                           Reply(text="Model answered."))
            rig.command("user asks")
            screen = rig.tmux.wait_for("Model answered.")
            found[pad] = {text: columns_of(screen, text) for text in
                          ("user asks", "tool-said-this", "Model answered.")}
    assert found[0] == {"user asks": 0, "tool-said-this": 0, "Model answered.": 0}, found
    assert found[1] == {"user asks": 1, "tool-said-this": 1, "Model answered.": 1}, found


@pytest.mark.parametrize("clear", [True, False])
def test_clear_on_shrink_redraws_so_no_empty_rows_are_left_under_the_footer(tmp_path: Path, clear: bool) -> None:
    with pi_rig(tmp_path, f"shrink-{clear}") as rig:
        (rig.home / "settings.json").write_text(json.dumps({"terminal": {"clearOnShrink": clear}}))
        rig.start(height=14)
        rig.tmux.wait_for("(fake) fake-model")
        rig.server.add(Reply(text="\n\n".join(f"Paragraph {n}." for n in range(12))))
        rig.command("a long answer")  # the transcript fills the screen
        rig.tmux.wait_for("Paragraph 11.")
        rig.command("/settings")  # taller than the terminal: it scrolls
        rig.tmux.wait_for("Settings", visible=True)
        rig.tmux.keys("Escape")
        rig.tmux.wait_gone("enter/space")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            rows = rig.tmux.visible().rstrip("\n").split("\n")
            if not clear or rows[-1].strip():
                break
            time.sleep(0.2)
        time.sleep(0.5)
        rows = rig.tmux.visible().split("\n")[:14]
        assert bool(rows[-1].strip()) is clear, "\n".join(rows)


@pytest.mark.parametrize(("env", "pattern"), [({"KITTY_WINDOW_ID": "1"}, r"\x1b_Ga=p,i=\d+,p=1,c=20,r=5,C=1"),
                                              ({"TERM_PROGRAM": "iTerm.app"}, ITERM2.pattern)])
def test_the_fullscreen_pane_draws_images_over_their_rows(tmp_path: Path, env: dict[str, str], pattern: str) -> None:
    with pi_rig(tmp_path, f"fs-image-{len(pattern)}") as rig:
        png(rig.cwd / "red.png")
        written = raw_run(rig, tmp_path, {"terminal": {"imageWidthCells": 20}}, {**BARE, **env},
                          tool=("read", {"path": "red.png"}), wait="All done here.", tui_mode="fullscreen")
        assert re.search(pattern, written), written[-3000:]
        assert "[Image:" not in rig.tmux.visible()


def test_the_fullscreen_pane_links_paths_in_tool_titles(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "fs-links") as rig:
        (rig.cwd / "notes.txt").write_text("one\n")
        written = raw_run(rig, tmp_path, {"terminal": {"hyperlinks": True}}, {}, tool=("read", {"path": "notes.txt"}),
                          wait="All done here.", tui_mode="fullscreen")
        url = (rig.cwd / "notes.txt").as_uri()
        assert f"\x1b]8;;{url}\x1b\\" in written, written[-2000:]
        assert re.search(re.escape(f"\x1b]8;;{url}\x1b\\") + r"(?:\x1b\[[0-9;]*m)*notes\.txt", written)
        screen = rig.tmux.visible()
        assert "8;;" not in screen and "read notes.txt" in screen  # the escape itself never shows as text


@pytest.mark.parametrize("images", [True, False])
def test_settings_shows_the_image_rows_only_on_a_terminal_that_draws_images(tmp_path: Path, images: bool) -> None:
    with pi_rig(tmp_path, f"settings-rows-{images}") as rig:
        rig.start(env={**BARE, **({"KITTY_WINDOW_ID": "1"} if images else {})}, outside_tmux=True)
        rig.tmux.wait_for("(fake) fake-model")
        rig.command("/settings")
        rig.tmux.wait_for("Settings", visible=True)
        rig.tmux.keys("Up")  # to the last row: the list's end is in view
        screen = rig.tmux.wait_for("Skill commands", visible=True)
        assert "Output padding" in screen and "Clear on shrink" in screen
        assert ("Show images" in screen and "Image width" in screen) is images
        assert ("Show images" in screen or "Image width" in screen) is images
