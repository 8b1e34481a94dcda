"""modal_editor in tmux: Escape to normal mode, h/x edit there, i back to insert; the border names the mode."""

from __future__ import annotations

import json

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")


def test_vim_like_modes(example) -> None:
    with tmux_pi(example, "modal-editor") as tui:
        tmux = tui.tmux
        tui.start("modal_editor")
        tmux.wait_for(" INSERT", visible=True)
        tmux.type("abc")
        tmux.wait_for("abc", visible=True)
        tmux.keys("Escape")
        tmux.wait_for(" NORMAL", visible=True)
        tmux.type("q")  # printable keys do nothing in normal mode
        tmux.type("h")
        tmux.type("x")  # deletes the "c" under the cursor
        tmux.type("i")
        tmux.wait_for(" INSERT", visible=True)
        tmux.type("Z")
        tmux.wait_for("abZ", visible=True)
        example.server.add(Reply(text="got it"))
        tmux.keys("Enter")
        tmux.wait_for("got it")
        assert '"abZ"' in json.dumps(example.server.requests[-1].body["messages"][-1])
