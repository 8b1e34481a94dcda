"""tmux: what a user sees of prompt caching (issue 36): ``showCacheMissNotices``' transcript notices for a cache
refresh and a cache miss, ``/session``'s warming status, the ``/settings`` rows, and the Anthropic extra-usage
warning (``warnings.anthropicExtraUsage``)."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import Rig, pi_rig

from pi_core.testing.fake_server import RecordedRequest, Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SCALE = 5  # PI_CACHE_WARMING_TIME_SCALE: a refresh of a 20-second cache is due after 10 s, 2 s here
PROMPT_TOKENS = 400_000
COST = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}


def warming_models(home: Path, base_url: str) -> None:
    model = {"id": "fake-model", "contextWindow": 1_000_000, "maxTokens": 4096, "cost": COST,
             "promptCache": {"short": 20}}
    (home / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": base_url, "api": "anthropic-messages", "apiKey": "test-key", "models": [model]}}}))


def refresh_reply(request: RecordedRequest) -> Reply:
    return Reply(text=".", input_tokens=0, cache_read_tokens=PROMPT_TOKENS, output_tokens=1)


def first_answer_warmed(rig: Rig, *, notices: bool) -> None:
    """pi with a warmable model and fast warming time, after one answer whose prompt is worth keeping warm."""
    warming_models(rig.home, rig.server.base_url_for("anthropic-messages"))
    (rig.home / "settings.json").write_text(json.dumps({"showCacheMissNotices": notices}))
    rig.server.responder = refresh_reply
    rig.start(env={"PI_CACHE_WARMING_TIME_SCALE": str(SCALE)})
    rig.tmux.wait_for("(fake) fake-model")
    rig.server.add(Reply(text="first answer", input_tokens=10, cache_write_tokens=PROMPT_TOKENS))
    rig.command("hello")
    rig.tmux.wait_for("first answer")


def test_notices_show_a_refresh_and_a_miss_and_session_shows_the_next_decision(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "cache-notices") as rig:
        first_answer_warmed(rig, notices=True)
        rig.tmux.wait_for("Cache warmed: $0.120015", limit=20)  # 400k cached tokens read, one written

        rig.command("/session")
        screen = rig.tmux.wait_for("Refresh cost", flat=True)
        assert "Cache warming" in screen and ("idle: Decision in" in screen or "idle: Warming cache" in screen), screen
        assert "15% continuation probability" in screen and "-> warm" in screen, screen

        # The provider lost the cache: the next reply writes the whole prompt again.
        rig.server.add(Reply(text="second answer", input_tokens=10, cache_write_tokens=PROMPT_TOKENS))
        rig.command("again")
        rig.tmux.wait_for("second answer")
        rig.tmux.wait_for("Cache miss: 400k tokens re-billed (~$1.38)")

        # Resumed, the transcript shows both again: refreshes are stored, misses found again.
        rig.tmux.keys("C-d")
        rig.tmux.wait_for("EXITED=0")
        rig.start("--continue")
        screen = rig.tmux.wait_for("second answer", flat=True)
        assert "Cache warmed: $0.120015" in screen and "Cache miss: 400k tokens re-billed (~$1.38)" in screen
        assert screen.index("first answer") < screen.index("Cache warmed") < screen.index("Cache miss")


def test_without_notices_a_refresh_leaves_the_transcript_alone(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "cache-quiet") as rig:
        first_answer_warmed(rig, notices=False)
        deadline = time.monotonic() + 20
        while len(rig.server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(rig.server.requests) >= 2 and rig.server.requests[1].body["max_tokens"] == 1
        rig.command("/session")
        screen = rig.tmux.wait_for("Refresh cost", flat=True)
        assert "Cache warmed" not in screen


def test_settings_rows_change_cache_warming_and_the_notices(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "cache-settings") as rig:
        rig.start()
        rig.tmux.wait_for("(fake) fake-model")
        rig.command("/settings")
        rig.tmux.wait_for("Theme", visible=True)
        rig.tmux.keys("Up")  # the list wraps: its last rows
        rig.tmux.wait_for("Anthropic extra usage warning", visible=True)
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("Saved warnings.anthropicExtraUsage = off")
        rig.tmux.keys("Up")
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("Saved showCacheMissNotices = on")
        rig.tmux.keys("Up")
        rig.tmux.keys("Enter")
        rig.tmux.wait_for("Saved cacheWarming = streaming")
        saved = (rig.home / "settings.toml").read_text()
        assert 'cacheWarming = "streaming"' in saved and "showCacheMissNotices = true" in saved
        assert "anthropicExtraUsage = false" in saved


@pytest.mark.parametrize("warn", [True, False])
def test_an_anthropic_subscription_sign_in_is_warned_about_unless_turned_off(tmp_path: Path, warn: bool) -> None:
    with pi_rig(tmp_path, f"extra-usage-{warn}") as rig:
        models = {"providers": {"anthropic": {"baseUrl": rig.server.url, "models": [
            {"id": "claude-test", "contextWindow": 200000, "maxTokens": 4096}]}}}
        (rig.home / "models.json").write_text(json.dumps(models))
        (rig.home / "settings.json").write_text(json.dumps({"warnings": {"anthropicExtraUsage": warn}}))
        rig.start("--provider", "anthropic", "--model", "claude-test",
                  env={"ANTHROPIC_OAUTH_TOKEN": "sk-ant-oat01-test"})
        screen = rig.tmux.wait_for("(anthropic) claude-test", flat=True)
        assert ("Claude subscription" in screen) is warn, screen
