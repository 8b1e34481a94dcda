"""tmux: /share in the interactive UI, with a fake ``gh`` on PATH: the confirmation names what the session
holds, No uploads nothing, Yes prints the viewer link; a signed-out gh is named."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from fake_gh import GIST_ID
from share_kit import FakeGh

sys.path.insert(0, str(Path(__file__).parents[1] / "interactive"))

from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_share_asks_then_prints_the_viewer_link(tmp_path: Path, fake_gh: FakeGh) -> None:
    with pi_rig(tmp_path, "sdkshare") as rig:
        tmux = rig.tmux
        rig.server.add(Reply(text="Shared answer here."))
        rig.start(env=fake_gh.env())
        tmux.wait_for("(fake) fake-model")
        rig.command("/share")
        tmux.wait_for("Nothing to share yet - start a conversation first", flat=True)
        rig.command("hello there")
        tmux.wait_for("Shared answer here.")

        rig.command("/share")
        tmux.wait_for("Share this session?", visible=True)
        screen = tmux.wait_for("file contents", flat=True, visible=True)
        assert "1 user, 1 assistant messages" in screen.replace("\n", " ")
        tmux.keys("Down", "Enter")  # No
        tmux.wait_for("Share cancelled", visible=True)
        assert [call[:2] for call in fake_gh.calls()] == [["auth", "status"]]

        rig.command("/share")
        tmux.wait_for("Share this session?", visible=True)
        tmux.keys("Enter")  # Yes
        tmux.wait_for(f"Share URL: https://pi.dev/session/#{GIST_ID}", flat=True)
        tmux.wait_for(f"Gist: https://gist.github.com/tester/{GIST_ID}", flat=True)
        assert fake_gh.calls()[-1][:3] == ["gist", "create", "--public=false"]
        page = fake_gh.uploaded.read_text()
        assert "Shared answer here." in page and "System Prompt" in page


def test_share_with_gh_signed_out(tmp_path: Path, fake_gh: FakeGh) -> None:
    with pi_rig(tmp_path, "sdkshare-out") as rig:
        rig.server.add(Reply(text="An answer."))
        rig.start(env=fake_gh.env("signed-out"))
        rig.tmux.wait_for("(fake) fake-model")
        rig.command("hi")
        rig.tmux.wait_for("An answer.")
        rig.command("/share")
        rig.tmux.wait_for("GitHub CLI is not logged in. Run 'gh auth login' first.", flat=True)
        assert not fake_gh.uploaded.exists()
