"""tmux: /settings shows Pi's Transport row; switching it to sse sends the next Codex request over SSE."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_auth import store_codex_sign_in
from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_the_transport_row_switches_codex_to_sse(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "codexws") as rig:
        tmux, server = rig.tmux, rig.server
        store_codex_sign_in(rig.home, server.url)
        rig.start("--provider", "openai-codex", "--model", "gpt-5.6-sol")
        tmux.wait_for("gpt-5.6-sol")
        server.add(Reply(text="over the socket"), Reply(text="over sse now"))
        rig.command("first")
        tmux.wait_for("over the socket")

        rig.command("/settings")
        tmux.wait_for("Transport", visible=True)
        for _ in range(20):  # down to the Transport row, wherever other rows put it
            if "→ Transport" in tmux.visible():
                break
            tmux.keys("Down")
            time.sleep(0.1)
        assert "→ Transport                      auto" in tmux.visible()
        tmux.keys("Enter")
        tmux.wait_for("Saved transport = sse")
        tmux.keys("Escape")
        tmux.wait_gone("Double-escape action")
        assert 'transport = "sse"' in (rig.home / "settings.toml").read_text()

        rig.command("second")
        tmux.wait_for("over sse now")
        assert [r.method for r in server.requests] == ["WS", "POST"]
