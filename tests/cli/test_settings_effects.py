"""Issue 36's model settings through the real ``pi`` command and the fake server: ``modelThinkingLevels`` picks
the start-up thinking level per model, ``compaction.modelOverrides`` the compaction tokens per model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.pi_home import write_models
from pi_core.testing.runner import PiRunner, pi_runner


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, "anthropic-messages") as runner:
        write_models(runner.home, runner.server.base_url_for("anthropic-messages"), "anthropic-messages",
                     reasoning=True)
        yield runner


def _levels(pi: PiRunner) -> list[str]:
    [session] = pi.session_files()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]


@pytest.mark.parametrize(("key", "expected"), [("fake/fake-model", "high"), ("fake/other-model", "low")])
def test_model_thinking_levels_choose_the_start_up_level_of_that_model(pi: PiRunner, key: str,
                                                                       expected: str) -> None:
    pi.settings(f'defaultThinkingLevel = "low"\n[modelThinkingLevels]\n"{key}" = "high"\n')
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "hi")
    assert result.returncode == 0 and result.stdout == "answer\n", result.stderr
    assert _levels(pi) == [expected]
    thinking = pi.server.requests[0].body.get("thinking") or {}
    assert thinking.get("type") in ("enabled", "adaptive")


@pytest.mark.parametrize("overridden", [True, False])
def test_compaction_model_overrides_apply_to_their_model_only(pi: PiRunner, overridden: bool) -> None:
    key = "fake/fake-model" if overridden else "fake/other-model"
    # 90000 of 100000 tokens used: the ordinary 1000 reserved tokens leave room, the override's 20000 do not.
    pi.settings(f'[compaction]\nreserveTokens = 1000\nkeepRecentTokens = 10\n'
                f'[compaction.modelOverrides."{key}"]\nreserveTokens = 20000\n')
    pi.server.add(Reply(text="a long answer " * 20, input_tokens=90000),
                  *([Reply(text="## Goal\nSUMMARY OF EARLIER WORK")] if overridden else []),
                  Reply(text="second answer"))
    result = pi.run("-p", "first question", "second question")
    assert result.returncode == 0 and result.stdout == "second answer\n", result.stderr
    assert len(pi.server.requests) == (3 if overridden else 2)
    assert ("SUMMARY OF EARLIER WORK" in json.dumps(pi.server.requests[-1].body["messages"])) is overridden


def test_switching_to_a_model_takes_its_thinking_level(pi: PiRunner) -> None:
    from pi_core.modes.rpc.client import RpcClient
    from pi_core.testing.runner import CLI

    models = json.loads((pi.home / "models.json").read_text())
    [provider] = models["providers"].values()
    provider["models"].append({**provider["models"][0], "id": "fake-deep", "name": "Fake Deep"})
    (pi.home / "models.json").write_text(json.dumps(models))
    pi.settings('defaultThinkingLevel = "low"\n[modelThinkingLevels]\n"fake/fake-deep" = "high"\n')
    with RpcClient(command=CLI, provider="fake", model="fake-model", cwd=pi.cwd, env=pi.env()) as client:
        assert client.get_state()["thinkingLevel"] == "low"
        client.set_model("fake", "fake-deep")
        assert client.get_state()["thinkingLevel"] == "high"
        client.set_model("fake", "fake-model")  # no level of its own: the current one stays
        assert client.get_state()["thinkingLevel"] == "high"


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                   "no_proxy")


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again: a proxy there refuses


@pytest.mark.parametrize("from_environment", [False, True])
def test_http_proxy_routes_provider_requests_unless_the_environment_names_one(pi: PiRunner,
                                                                             from_environment: bool) -> None:
    import subprocess

    setting, environment = _closed_port(), _closed_port()
    pi.settings(f'httpProxy = "http://127.0.0.1:{setting}"\n')
    env = {k: v for k, v in pi.env().items() if k not in PROXY_VARIABLES}
    if from_environment:
        env["HTTP_PROXY"] = f"http://127.0.0.1:{environment}"
    result = subprocess.run(pi.command("-p", "hi"), capture_output=True, text=True, cwd=pi.cwd, env=env, timeout=60,
                            check=False)
    used = environment if from_environment else setting
    assert result.returncode != 0 and pi.server.requests == []
    assert f"the proxy http://127.0.0.1:{used} refused the connection" in result.stderr, result.stderr


@pytest.mark.parametrize("enabled", [True, False])
def test_enable_skill_commands_decides_whether_slash_skill_expands(pi: PiRunner, enabled: bool) -> None:
    skill = pi.home / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: demo\ndescription: A demo skill\n---\nDEMO SKILL BODY\n")
    pi.settings(f"enableSkillCommands = {'true' if enabled else 'false'}\n")
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "/skill:demo go")
    assert result.returncode == 0 and result.stdout == "answer\n", result.stderr
    body = pi.server.requests[0].body
    sent = json.dumps(body["messages"])
    assert ("DEMO SKILL BODY" in sent) is enabled
    assert ("/skill:demo go" in sent) is not enabled
    assert "A demo skill" in json.dumps(body["system"])  # the model still sees the skill either way
