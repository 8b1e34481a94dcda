"""Every non-prompt RPC command in-process: state, models, thinking, queue modes, bash, sessions, errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcError
from pi_core.testing.fake_provider import reply
from pi_core.types import Cost, Usage
from tests.rpc.conftest import FAKE, FAKE_REASONING, Rig


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


# --- state ------------------------------------------------------------------------------------------


def test_get_state_at_start(rig: Rig) -> None:
    client = rig.start()
    state = client.get_state()
    assert state["model"]["provider"] == "fake" and state["model"]["id"] == "fake-1"
    assert state["model"]["contextWindow"] == 100_000
    assert state["isStreaming"] is False and state["isCompacting"] is False
    assert state["messageCount"] == 0 and state["pendingMessageCount"] == 0
    assert state["steeringMode"] == "one-at-a-time" and state["followUpMode"] == "one-at-a-time"
    assert state["thinkingLevel"] == "off" and state["autoCompactionEnabled"] is True
    assert state["sessionFile"].endswith(".jsonl") and state["sessionId"]
    assert "sessionName" not in state


def test_get_state_in_memory_session_omits_file_and_model(rig: Rig) -> None:
    client = rig.start(model=None, persist=False)
    state = client.get_state()
    assert "sessionFile" not in state and "model" not in state
    assert state["sessionId"]


def test_get_messages_returns_the_context(rig: Rig) -> None:
    client = rig.start(reply("pong"))
    assert client.get_messages() == []
    client.prompt_and_wait("ping")
    messages = client.get_messages()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["content"] == [{"type": "text", "text": "pong"}]


def test_last_assistant_text_absent_before_any_prompt(rig: Rig) -> None:
    client = rig.start(reply("  the token XYZZY  "))
    response = client.send({"type": "get_last_assistant_text"})
    assert response["data"] == {}
    client.prompt_and_wait("say the token")
    assert client.get_last_assistant_text() == "the token XYZZY"


def test_session_stats_after_a_prompt(rig: Rig) -> None:
    done = reply("done")
    done.usage = Usage(input=50, output=10, cost=Cost(total=0.25))
    client = rig.start(reply(tool_calls=[("gate", {"value": "a"})]), done)
    rig.gate.release.set()
    client.prompt_and_wait("go")
    stats = client.get_session_stats()
    assert stats["sessionFile"] == client.get_state()["sessionFile"] and stats["sessionId"]
    assert stats["userMessages"] == 1 and stats["assistantMessages"] == 2
    assert stats["toolCalls"] == 1 and stats["toolResults"] == 1 and stats["totalMessages"] == 4
    assert stats["tokens"] == {"input": 50, "output": 10, "cacheRead": 0, "cacheWrite": 0, "total": 60}
    assert stats["cost"] == 0.25
    assert stats["contextUsage"] == {"tokens": 60, "contextWindow": 100_000, "percent": 0.06}


# --- models and thinking ------------------------------------------------------------------------------


def test_available_models_are_the_credentialed_ones(rig: Rig) -> None:
    client = rig.start()
    models = client.get_available_models()
    assert [(m["provider"], m["id"]) for m in models] == [("fake", "fake-1"), ("fake", "fake-think")]
    assert all(m["contextWindow"] > 0 and isinstance(m["reasoning"], bool) for m in models)


def test_set_model_switches_and_unknown_model_fails(rig: Rig) -> None:
    client = rig.start(reply("hi"))
    response = client.send({"id": "m", "type": "set_model", "provider": "other", "modelId": "other-1"})
    assert response == {"id": "m", "type": "response", "command": "set_model", "success": False,
                        "error": "Model not found: other/other-1"}
    model = client.set_model("fake", "fake-think")
    assert model["id"] == "fake-think" and model["reasoning"] is True
    assert client.get_state()["model"]["id"] == "fake-think"
    client.prompt_and_wait("hello")
    records = entries(rig.session_files()[0])
    assert {"provider": "fake", "modelId": "fake-think"}.items() <= next(
        r for r in records if r["type"] == "model_change").items()


def test_cycle_model_wraps_around(rig: Rig) -> None:
    client = rig.start()
    first = client.cycle_model()
    assert first["model"]["id"] == "fake-think" and first["isScoped"] is False
    assert first["thinkingLevel"] == "off"
    second = client.cycle_model()
    assert second["model"]["id"] == "fake-1"


def test_cycle_model_with_one_candidate_is_null(rig: Rig) -> None:
    client = rig.start(registry=rig.registry([FAKE]))
    response = client.send({"type": "cycle_model"})
    assert response["success"] is True and response["data"] is None


def test_thinking_level_set_and_cycle_on_reasoning_model(rig: Rig) -> None:
    client = rig.start(model=FAKE_REASONING)
    start = client.event_count()
    client.set_thinking_level("high")
    assert client.get_state()["thinkingLevel"] == "high"
    assert client.wait_for_event("thinking_level_changed", after=start)["level"] == "high"
    cycled = client.cycle_thinking_level()
    assert cycled["level"] != "high"
    assert client.get_state()["thinkingLevel"] == cycled["level"]
    client.set_thinking_level("xhigh")  # not mapped by this model: clamps down to high
    assert client.get_state()["thinkingLevel"] == "high"


def test_thinking_level_on_non_reasoning_model_stays_off(rig: Rig) -> None:
    client = rig.start()
    client.set_thinking_level("high")
    assert client.get_state()["thinkingLevel"] == "off"
    assert client.send({"type": "cycle_thinking_level"})["data"] is None
    assert not any(e["type"] == "thinking_level_changed" for e in client.events)


# --- queue modes and toggles ----------------------------------------------------------------------------


def test_queue_modes_and_toggles(rig: Rig) -> None:
    client = rig.start()
    client.set_steering_mode("all")
    client.set_follow_up_mode("all")
    client.set_auto_compaction(False)
    client.set_auto_retry(False)
    client.abort_retry()
    state = client.get_state()
    assert state["steeringMode"] == "all" and state["followUpMode"] == "all"
    assert state["autoCompactionEnabled"] is False
    with pytest.raises(RpcError, match='Invalid mode "sometimes"'):
        client.set_steering_mode("sometimes")


def test_steer_and_follow_up_while_idle_wait_for_the_next_run(rig: Rig) -> None:
    client = rig.start(reply("one"), reply("two"))
    client.follow_up("later please")
    assert client.get_state()["pendingMessageCount"] == 1
    client.prompt_and_wait("now")
    assert [m.text() for m in rig.provider.contexts[1].messages if m.role == "user"][-1] == "later please"


# --- bash -----------------------------------------------------------------------------------------------


def test_bash_result_is_recorded_and_reaches_the_next_prompt(rig: Rig) -> None:
    client = rig.start(reply("seen"))
    result = client.bash("echo hello")
    assert result["output"].strip() == "hello"
    assert result["exitCode"] == 0 and result["cancelled"] is False and result["truncated"] is False
    client.prompt_and_wait("what did it print?")
    sent = [m.text() for m in rig.provider.contexts[0].messages if m.role == "user"]
    assert sent[0].startswith("Ran `echo hello`\n```\nhello")
    records = entries(rig.session_files()[0])
    bash = [r["message"] for r in records if r["type"] == "message" and r["message"]["role"] == "bashExecution"]
    assert len(bash) == 1 and "hello" in bash[0]["output"]


def test_bash_failure_exit_code(rig: Rig) -> None:
    client = rig.start()
    result = client.bash("echo oops >&2; exit 3")
    assert result["exitCode"] == 3 and "oops" in result["output"]


def test_abort_bash_cancels_the_running_command(rig: Rig) -> None:
    client = rig.start()
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(client.bash("echo started; sleep 30")))
    runner.start()
    assert client.get_state()["isStreaming"] is False  # answered while bash runs: commands are concurrent
    # abort_bash only reaches a command that has started, and there is no event for that: keep asking.
    while runner.is_alive():
        client.abort_bash()
        runner.join(0.05)
    assert outcome["cancelled"] is True and "exitCode" not in outcome


# --- sessions -------------------------------------------------------------------------------------------


def test_new_session_resets_messages(rig: Rig) -> None:
    client = rig.start(reply("hi"))
    client.prompt_and_wait("hello")
    old = client.get_state()
    assert old["messageCount"] == 2
    assert client.new_session() == {"cancelled": False}
    new = client.get_state()
    assert new["messageCount"] == 0 and new["sessionId"] != old["sessionId"]
    assert new["sessionFile"] != old["sessionFile"]


def test_set_session_name(rig: Rig) -> None:
    client = rig.start(reply("hi"))
    with pytest.raises(RpcError, match="Session name cannot be empty"):
        client.set_session_name("   ")
    start = client.event_count()
    client.set_session_name("  My work  ")
    assert client.get_state()["sessionName"] == "My work"
    assert client.wait_for_event("session_info_changed", after=start)["name"] == "My work"
    client.prompt_and_wait("hello")
    infos = [r for r in entries(rig.session_files()[0]) if r["type"] == "session_info"]
    assert [i["name"] for i in infos] == ["My work"]


def test_fork_messages_fork_and_clone(rig: Rig) -> None:
    client = rig.start(reply("one"), reply("two"))
    client.prompt_and_wait("first question")
    client.prompt_and_wait("second question")
    forkable = client.get_fork_messages()
    assert [m["text"] for m in forkable] == ["first question", "second question"]
    before = client.get_state()["sessionFile"]
    result = client.fork(forkable[1]["entryId"])
    assert result == {"text": "second question", "cancelled": False}
    state = client.get_state()
    assert state["messageCount"] == 2 and state["sessionFile"] != before
    assert client.clone() == {"cancelled": False}
    assert client.get_state()["messageCount"] == 2
    response = client.send({"id": "f", "type": "fork", "entryId": "nope"})
    assert response == {"id": "f", "type": "response", "command": "fork", "success": False,
                        "error": "Invalid entry ID for forking"}


def test_clone_without_entries_fails(rig: Rig) -> None:
    client = rig.start()
    with pytest.raises(RpcError, match="Cannot clone session: no current entry selected"):
        client.clone()


def test_switch_session_loads_another_file(rig: Rig) -> None:
    client = rig.start(reply("remember BLUE"))
    client.prompt_and_wait("colour?")
    first = client.get_state()["sessionFile"]
    client.new_session()
    assert client.get_state()["messageCount"] == 0
    assert client.switch_session(first) == {"cancelled": False}
    state = client.get_state()
    assert state["sessionFile"] == first and state["messageCount"] == 2
    assert client.get_last_assistant_text() == "remember BLUE"


def test_get_commands_without_resources_is_empty(rig: Rig) -> None:
    client = rig.start()
    assert client.get_commands() == []


# --- errors ---------------------------------------------------------------------------------------------


def test_malformed_lines_answer_errors_and_serving_continues(rig: Rig) -> None:
    client = rig.start()
    client.send_raw("not json\n")
    client.send_raw('{"type":"get_state", "id": "trunc"\n')
    client.send_raw("[1,2]\n")
    client.send_raw('{"id":"u","type":"frobnicate"}\n')
    client.send_raw('{"id":"crlf","type":"get_state"}\r\n')
    response = client.send({"id": "after", "type": "get_state"})
    assert response["success"] is True
    parse = [r for r in client.responses if r["command"] == "parse"]
    assert len(parse) == 3 and all("id" not in r and r["error"].startswith("Failed to parse command: ")
                                   for r in parse)
    unknown = next(r for r in client.responses if r["command"] == "frobnicate")
    assert unknown == {"id": "u", "type": "response", "command": "frobnicate", "success": False,
                       "error": "Unknown command: frobnicate"}  # the id echoed (issue 16 item 15; Pi 0.73.1 drops it)
    assert any(r.get("id") == "crlf" and r["success"] for r in client.responses)


def test_unknown_command_response_reaches_the_waiting_sender(rig: Rig) -> None:
    client = rig.start()
    response = client.send({"type": "no_such_thing"})
    assert response["error"] == "Unknown command: no_such_thing" and response["id"].startswith("req-")


@pytest.mark.parametrize(("command", "error"), [
    ({"type": "prompt"}, 'Missing required field "message" (a string)'),
    ({"type": "prompt", "message": 5}, 'Field "message" must be a string, got a number'),
    ({"type": "set_model", "provider": "fake"}, 'Missing required field "modelId" (a string)'),
    ({"type": "set_auto_compaction", "enabled": "yes"}, 'Field "enabled" must be a boolean, got a string'),
    ({"type": "prompt", "message": "x", "streamingBehavior": "later"},
     'Invalid streamingBehavior "later". Valid values: steer, followUp'),
    ({"type": "prompt", "message": "x", "images": [{"data": 1}]},
     'images[0] must be {"type":"image","data":<base64>,"mimeType":<string>}'),
])
def test_bad_parameters_answer_the_command_error(rig: Rig, command: dict, error: str) -> None:
    client = rig.start()
    response = client.send({"id": "bad", **command})
    assert response == {"id": "bad", "type": "response", "command": command["type"], "success": False,
                        "error": error}
    assert client.get_state()["messageCount"] == 0


def test_export_html_of_in_memory_session_fails(rig: Rig) -> None:
    client = rig.start(persist=False)
    with pytest.raises(RpcError, match="Cannot export in-memory session to HTML"):
        client.export_html()


def test_switch_to_a_missing_path_starts_a_new_session_there(rig: Rig) -> None:
    client = rig.start(reply("hi"))
    client.prompt_and_wait("hello")
    target = rig.tmp_path / "elsewhere" / "fresh.jsonl"
    assert client.switch_session(str(target)) == {"cancelled": False}
    state = client.get_state()
    assert state["sessionFile"] == str(target) and state["messageCount"] == 0
