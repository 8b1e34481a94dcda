"""Pi's ``settings.json`` lies under pi's ``settings.toml`` in the same folder (issue 36): once pi has written a
setting, the user's later edits to ``settings.json`` still take effect, and pi's file holds only what pi wrote.
Snake_case spellings of Pi's keys are reported as unknown, as Pi ignores them."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import CLI, PiRunner, pi_runner


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, "openai-completions") as runner:
        skill = runner.home / "skills" / "demo" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: demo\ndescription: A demo skill\n---\nDEMO SKILL BODY\n")
        yield runner


def _skill_expanded(pi: PiRunner) -> bool:
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "/skill:demo go")
    assert result.returncode == 0 and result.stdout == "answer\n", result.stderr
    assert result.stderr == ""
    return "DEMO SKILL BODY" in json.dumps(pi.server.requests[-1].body["messages"])


def _set_steering_mode(pi: PiRunner, mode: str) -> dict[str, object]:
    from pi_core.modes.rpc.client import RpcClient

    with RpcClient(command=CLI, provider="fake", model="fake-model", cwd=pi.cwd, env=pi.env()) as client:
        client.set_steering_mode(mode)
        return client.get_state()


def test_settings_json_edits_take_effect_after_pi_wrote_its_toml(pi: PiRunner) -> None:
    json_file = pi.home / "settings.json"
    json_file.write_text(json.dumps({"enableSkillCommands": True, "retry": {"provider": {"timeoutMs": 90000}}}))
    assert _skill_expanded(pi)

    state = _set_steering_mode(pi, "all")
    assert state["steeringMode"] == "all"
    toml_file = pi.home / "settings.toml"
    assert tomllib.loads(toml_file.read_text()) == {"steeringMode": "all"}  # only the key pi changed

    json_file.write_text(json.dumps({"enableSkillCommands": False, "steeringMode": "one-at-a-time"}))
    assert not _skill_expanded(pi)  # the edit of settings.json is seen
    from pi_core.modes.rpc.client import RpcClient

    with RpcClient(command=CLI, provider="fake", model="fake-model", cwd=pi.cwd, env=pi.env()) as client:
        assert client.get_state()["steeringMode"] == "all"  # pi's own file wins a key both set
    assert json.loads(json_file.read_text()) == {"enableSkillCommands": False, "steeringMode": "one-at-a-time"}


def test_a_nested_table_merges_key_by_key_across_the_two_files(pi: PiRunner) -> None:
    (pi.home / "settings.json").write_text(json.dumps({"retry": {"maxRetries": 1, "provider": {"maxRetries": 0}}}))
    pi.settings("[retry]\nbaseDelayMs = 1\n")  # were the JSON's table replaced: 3 agent-level retries, 2 s apart
    pi.server.add(*[Reply(status=503, error_message="overloaded") for _ in range(4)])
    result = pi.run("--mode", "json", "-p", "hi")
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [e["attempt"] for e in events if e.get("type") == "auto_retry_start"] == [1], result.stderr
    assert len(pi.server.requests) == 2


def test_a_broken_settings_json_is_reported_and_the_toml_still_applies(pi: PiRunner) -> None:
    (pi.home / "settings.json").write_text('{"enableSkillCommands": tru')
    pi.settings("enableSkillCommands = false\n")
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "/skill:demo go")
    assert result.returncode == 0, result.stderr
    assert f"Warning: Invalid settings file {pi.home / 'settings.json'}: " in result.stderr
    assert "DEMO SKILL BODY" not in json.dumps(pi.server.requests[-1].body["messages"])


def test_snake_case_spellings_of_pi_keys_are_unknown_settings(pi: PiRunner) -> None:
    (pi.home / "settings.json").write_text(json.dumps({"enable_skill_commands": False,
                                                       "retry": {"max_retries": 9}}))
    pi.server.add(Reply(text="answer"))
    result = pi.run("-p", "/skill:demo go")
    assert result.returncode == 0, result.stderr
    path = pi.home / "settings.json"
    assert result.stderr.count(f'Warning: {path}: unknown setting "enable_skill_commands"\n') == 1
    assert result.stderr.count(f'Warning: {path}: unknown setting "retry.max_retries"\n') == 1
    assert "DEMO SKILL BODY" in json.dumps(pi.server.requests[-1].body["messages"])  # the default still applies
