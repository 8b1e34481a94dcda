"""pi_core.tui.terminal: the terminal's image protocol and OSC 8 links, detected from the environment as Pi 1.6.0
detects them, and the image encodings a plugin renderer or the UI writes."""

from __future__ import annotations

import base64
import io

import pytest

from pi_core.tui import terminal
from pi_core.tui.terminal import Capabilities, detect


def never() -> bool:
    raise AssertionError("tmux was asked outside tmux")


@pytest.mark.parametrize(("env", "found"), [
    ({"KITTY_WINDOW_ID": "4"}, Capabilities("kitty", True)),
    ({"TERM_PROGRAM": "ghostty"}, Capabilities("kitty", True)),
    ({"TERM": "xterm-ghostty"}, Capabilities("kitty", True)),
    ({"WEZTERM_PANE": "0"}, Capabilities("kitty", True)),
    ({"TERM_PROGRAM": "WarpTerminal"}, Capabilities("kitty", True)),
    ({"TERM_PROGRAM": "herdr", "KITTY_WINDOW_ID": "1"}, Capabilities("kitty", True)),
    ({"TERM_PROGRAM": "orca"}, Capabilities(None, False)),  # an Orca that does not advertise kitty graphics
    ({"TERM_PROGRAM": "orca", "ORCA_IMAGE_PROTOCOL": "kitty"}, Capabilities("kitty", True)),
    ({"TERM_PROGRAM": "iTerm.app"}, Capabilities("iterm2", True)),
    ({"ITERM_SESSION_ID": "w0t0p0"}, Capabilities("iterm2", True)),
    ({"WT_SESSION": "x"}, Capabilities(None, True)),
    ({"ALACRITTY_WINDOW_ID": "1"}, Capabilities(None, True)),
    ({"TERM_PROGRAM": "vscode"}, Capabilities(None, True)),
    ({"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, Capabilities(None, False)),
    ({"TERM": "screen-256color", "KITTY_WINDOW_ID": "1"}, Capabilities(None, False)),
    ({"TERM": "xterm-256color"}, Capabilities(None, False)),
])
def test_the_terminal_is_told_by_its_environment(env: dict[str, str], found: Capabilities) -> None:
    assert detect(env, tmux_links=never) == found


@pytest.mark.parametrize("forwards", [True, False])
def test_in_tmux_links_follow_the_attached_client_and_images_stay_off(forwards: bool) -> None:
    env = {"TMUX": "/tmp/tmux-0/default,1,0", "KITTY_WINDOW_ID": "1"}
    assert detect(env, tmux_links=lambda: forwards) == Capabilities(None, forwards)


def test_pi_variables_override_the_detection() -> None:
    assert detect({"TERM_PROGRAM": "iTerm.app", "PI_IMAGE_PROTOCOL": "kitty"}, tmux_links=never).images == "kitty"
    assert detect({"KITTY_WINDOW_ID": "1", "PI_IMAGE_PROTOCOL": "none"}, tmux_links=never).images is None
    assert detect({"KITTY_WINDOW_ID": "1", "PI_HYPERLINKS": "0"}, tmux_links=never).hyperlinks is False
    assert detect({"TMUX": "x", "PI_HYPERLINKS": "1"}, tmux_links=never).hyperlinks is True  # tmux not asked


def test_settings_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    for name in ("TMUX", "PI_IMAGE_PROTOCOL", "PI_HYPERLINKS", "KITTY_WINDOW_ID", "ITERM_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)
    try:
        terminal.configure(images="auto", hyperlinks="auto")
        assert terminal.capabilities() == Capabilities("iterm2", True)
        terminal.configure(images=False, hyperlinks=False)
        assert terminal.capabilities() == Capabilities(None, False)
        assert terminal.link_path("a.txt", "a.txt", "/tmp") == "a.txt"
        terminal.configure(images="kitty", hyperlinks=True)
        assert terminal.capabilities() == Capabilities("kitty", True)
        assert terminal.link_path("a.txt", "a.txt", "/tmp") == "\x1b]8;;file:///tmp/a.txt\x1b\\a.txt\x1b]8;;\x1b\\"
    finally:
        terminal.configure()


def image(size: tuple[int, int], kind: str) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, "blue").save(buffer, kind)
    return base64.b64encode(buffer.getvalue()).decode()


def test_images_keep_their_aspect_within_the_width_asked_for() -> None:
    assert terminal.image_cells((400, 200), 30) == (30, 8)
    assert terminal.image_cells((10, 10), 30) == (30, 15)  # a small one is drawn as wide as asked, as Pi
    assert terminal.image_cells((100, 4000), 60)[1] == 30  # a tall one stops at the rows its width allows


def test_kitty_gets_png_in_chunks_and_iterm2_the_file_itself() -> None:
    jpeg = image((900, 90), "JPEG")
    kitty = terminal.encode_image(jpeg, "image/jpeg", 50, "kitty", image_id=7)
    assert kitty is not None and kitty.sequence.startswith("\x1b_Ga=T,f=100,q=2,C=1,c=50,r=3,i=7")
    payload = "".join(part.split(";", 1)[1] for part in kitty.sequence.split("\x1b\\") if part)
    assert base64.b64decode(payload).startswith(b"\x89PNG")  # converted: kitty takes PNG only
    chunks = terminal.kitty_transmit("A" * 10000, "a=T,f=100").split("\x1b\\")[:-1]
    assert [chunk.split(";")[0] for chunk in chunks] == ["\x1b_Ga=T,f=100,m=1", "\x1b_Gm=1", "\x1b_Gm=0"]
    iterm = terminal.encode_image(jpeg, "image/jpeg", 50, "iterm2")
    assert iterm is not None and iterm.sequence.startswith("\x1b]1337;File=inline=1;size=")
    assert f":{jpeg}\x07" in iterm.sequence and ";width=50;" in iterm.sequence
    assert terminal.encode_image("bm90IGFuIGltYWdl", "image/png", 50, "kitty") is None  # not an image


def test_an_image_that_cannot_be_drawn_is_named_by_its_type_and_size() -> None:
    assert terminal.image_fallback("image/png", (800, 600)) == "[Image: [image/png] 800x600]"
    assert terminal.image_fallback("image/webp") == "[Image: [image/webp]]"
