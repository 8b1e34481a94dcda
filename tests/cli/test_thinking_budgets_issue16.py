"""Issue 16 item 4: the ``thinkingBudgets`` setting reaches the request (Pi sends 7777 for ``high = 7777``)."""

from __future__ import annotations

from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import pi_runner


def test_thinking_budgets_setting_sets_the_anthropic_budget(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        path = write_models(pi.home, pi.server.base_url_for("anthropic-messages"), "anthropic-messages",
                            reasoning=True)
        path.write_text(path.read_text().replace('"maxTokens": 4096', '"maxTokens": 64000'))
        pi.settings("[thinkingBudgets]\nhigh = 7777\nlow = 1500\n")
        pi.server.add(Reply(text="one"), Reply(text="two"))
        assert pi.run("--thinking", "high", "-p", "hi").returncode == 0
        assert pi.run("--thinking", "medium", "-p", "hi").returncode == 0
    high, medium = (r.body["thinking"] for r in pi.server.requests)
    assert high["type"] == "enabled" and high["budget_tokens"] == 7777
    assert medium["budget_tokens"] == 8192  # levels the setting leaves out keep Pi's defaults
