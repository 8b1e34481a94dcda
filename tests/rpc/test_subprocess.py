"""``pi --mode rpc`` as a subprocess, driven by RpcClient against the fake model server."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcClient, RpcError
from pi_core.resources.ansi_theme import AnsiTheme
from pi_core.resources.themes import builtin_themes
from pi_core.testing.fake_server import FakeModelServer, Reply

# The Google wire is served by plain httpx2: no vendor SDK to import, so each pi process starts faster.
API = "google-generative-ai"
WAIT_FOR_RELEASE = "while [ ! -f release ]; do sleep 0.02; done; echo released"

ASKING_PLUGIN = '''
from pi_core import hookimpl
from pi_core.tools import Tool

print("a plugin printing to stdout at import")

async def execute(args, ctx):
    print("a tool printing to stdout")
    ui = ctx.extras["pi"].ui
    answer = await ui.select("Pick one", ["red", "blue"])
    ui.notify(f"picked {answer}")
    ui.set_status("pick", ui.theme.fg("accent", answer))
    return f"picked={answer}"

@hookimpl
def pi_tools():
    return [Tool(name="ask", description="Ask the user to pick.", parameters={"type": "object"}, execute=execute)]
'''


def write_models(home: Path, base_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    common = {"input": ["text", "image"], "contextWindow": 100000, "maxTokens": 4096,
              "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    models = {"providers": {"fake": {"baseUrl": base_url, "api": API, "apiKey": "test-key", "models": [
        {"id": "fake-model", "name": "Fake Model", "reasoning": False, **common},
        {"id": "fake-think", "name": "Fake Thinker", "reasoning": True, **common},
    ]}}}
    (home / "models.json").write_text(json.dumps(models))


class Env:
    def __init__(self, server: FakeModelServer, tmp_path: Path) -> None:
        self.server = server
        self.home = tmp_path / "agent"
        self.cwd = tmp_path / "project"
        self.cwd.mkdir()
        write_models(self.home, server.base_url_for(API))
        self.clients: list[RpcClient] = []

    def start(self, *args: str) -> RpcClient:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PI_CODING_AGENT_DIR"] = str(self.home)
        client = RpcClient([*args], command=[sys.executable, "-c", "from pi_core.app.cli import cli; cli()"],
                           provider="fake", model="fake-model", cwd=self.cwd, env=env)
        self.clients.append(client.start())
        return client

    def session_files(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("*.jsonl"))

    def entries(self) -> list[dict]:
        (path,) = self.session_files()
        return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]

    def request_texts(self, index: int) -> list[str]:
        """Every text the model was sent in request ``index``: text parts and tool outputs, in order."""
        texts: list[str] = []
        for content in self.server.requests[index].body["contents"]:
            for part in content["parts"]:
                if "text" in part:
                    texts.append(part["text"])
                elif "functionResponse" in part:
                    response = part["functionResponse"]["response"]
                    texts.append(response.get("output", response.get("error", "")))
        return texts


@pytest.fixture
def rpc(tmp_path: Path) -> Iterator[Env]:
    with FakeModelServer() as server:
        env = Env(server, tmp_path)
        yield env
        (env.cwd / "release").touch()
        for client in env.clients:
            client.stop()


def test_one_session_through_every_command(rpc: Env) -> None:
    """One process for the commands that need no slow tool: starting pi (and importing the provider
    SDK on the first prompt) costs seconds, so they share it."""
    rpc.server.add(
        Reply(text="I saw hello", input_tokens=900, output_tokens=100),
        Reply(text="big ok"),
        Reply(text="sep ok"),
        Reply(text="## Goal\nTalk about numbers."),
    )
    client = rpc.start()

    # get_state at start and get_last_assistant_text before any prompt
    state = client.get_state()
    assert state["model"]["provider"] == "fake" and state["model"]["id"] == "fake-model"
    assert state["isStreaming"] is False and state["messageCount"] == 0
    assert client.send({"type": "get_last_assistant_text"})["data"] == {}

    # malformed input answers errors and serving continues
    client.send_raw("this is not json\n")
    client.send_raw('{"type": "get_state"\n')
    client.send_raw('{"id":"u1","type":"no_such_command"}\n')
    client.send_raw('{"id":"crlf","type":"get_state"}\r\n')
    assert client.send({"type": "get_state"})["success"] is True
    parse = [r for r in client.responses if r["command"] == "parse"]
    assert len(parse) == 2 and all(r["error"].startswith("Failed to parse command:") for r in parse)
    unknown = next(r for r in client.responses if r["command"] == "no_such_command")
    assert unknown["error"] == "Unknown command: no_such_command" and unknown["id"] == "u1"
    assert any(r.get("id") == "crlf" and r["success"] for r in client.responses)

    # models and thinking
    models = client.get_available_models()
    assert [m["id"] for m in models] == ["fake-model", "fake-think"]
    assert all(m["provider"] == "fake" and m["contextWindow"] > 0 and isinstance(m["reasoning"], bool)
               for m in models)
    assert client.set_model("fake", "fake-think")["reasoning"] is True
    client.set_thinking_level("high")
    assert client.get_state()["thinkingLevel"] == "high"
    level = client.cycle_thinking_level()["level"]
    assert level != "high" and client.get_state()["thinkingLevel"] == level
    with pytest.raises(RpcError, match="Model not found: fake/missing"):
        client.set_model("fake", "missing")
    assert client.cycle_model()["model"]["id"] == "fake-model"

    # bash before a prompt is visible to the LLM and recorded; a name set early
    result = client.bash("echo hello")
    assert result["output"].strip() == "hello" and result["exitCode"] == 0 and result["cancelled"] is False
    client.set_session_name("numbers")
    events = client.prompt_and_wait("what did the command print?")
    assert sum(1 for e in events if e["type"] == "message_end") >= 2
    assert any(t.startswith("Ran `echo hello`") and "hello" in t for t in rpc.request_texts(0))
    assert client.get_last_assistant_text() == "I saw hello"

    # a 1 MB prompt and one with U+2028/U+2029 arrive intact
    big = ("abcdefghij" * 100_001)[:1_000_000] + "END"
    client.prompt_and_wait(big)
    assert rpc.request_texts(1)[-1] == big
    odd = "first\u2028second\u2029third"
    client.prompt_and_wait(odd)
    assert rpc.request_texts(2)[-1] == odd
    assert client.get_last_assistant_text() == "sep ok"

    # the session file and stats
    assert len(rpc.session_files()) == 1
    records = rpc.entries()
    assert records[0]["type"] == "session"
    roles = [r["message"]["role"] for r in records if r["type"] == "message"]
    assert {"user", "assistant"} <= set(roles) and roles.count("bashExecution") == 1
    assert [r["name"] for r in records if r["type"] == "session_info"] == ["numbers"]
    stats = client.get_session_stats()
    assert stats["sessionFile"] and stats["sessionId"]
    assert stats["userMessages"] >= 1 and stats["assistantMessages"] >= 1

    # compact and export
    compacted = client.compact()
    assert compacted["summary"] == "## Goal\nTalk about numbers." and compacted["tokensBefore"] > 0
    assert len([r for r in rpc.entries() if r["type"] == "compaction"]) == 1
    path = Path(client.export_html())
    assert path.is_file() and path.suffix == ".html"

    # new_session resets the context
    assert client.new_session() == {"cancelled": False}
    assert client.get_state()["messageCount"] == 0
    assert client.stop() == 0
    assert client.unparsed == []


def test_steer_then_abort_during_slow_tools(rpc: Env) -> None:
    rpc.server.add(Reply(tool_calls=[("bash", {"command": WAIT_FOR_RELEASE}), ("bash", {"command": "echo second"})]),
                   Reply(text="done"),
                   Reply(tool_calls=[("bash", {"command": "sleep 30"})]), Reply(text="never"))
    client = rpc.start()
    client.prompt("run the tools")
    client.wait_for_event("tool_execution_start")
    refused = client.send({"id": "p2", "type": "prompt", "message": "too early"})
    assert refused["success"] is False and refused["error"].startswith("Agent is already processing.")
    client.prompt("Stop, do this instead", streaming_behavior="steer")
    (rpc.cwd / "release").touch()
    client.wait_for_event("agent_end")
    texts = rpc.request_texts(1)
    assert texts[-1] == "Stop, do this instead"
    assert any("released" in t for t in texts[:-1]) and any("second" in t for t in texts[:-1])
    assert [r for r in client.responses if r.get("id") == "p2"] == [refused]

    # abort during a slow bash: the tool ends as an error and no further request is made
    start = client.event_count()
    client.prompt("wait")
    client.wait_for_event("tool_execution_start", after=start)
    client.abort()
    end = client.wait_for_event("tool_execution_end", after=start)
    assert end["isError"] is True
    client.wait_for_event("agent_end", after=start)
    assert len(rpc.server.requests) == 3
    assert client.get_state()["isStreaming"] is False


def test_eof_mid_run_exits_zero_and_keeps_the_session(rpc: Env) -> None:
    rpc.server.add(Reply(tool_calls=[("bash", {"command": WAIT_FOR_RELEASE})]), Reply(text="never"))
    client = rpc.start()
    client.prompt("wait")
    client.wait_for_event("tool_execution_start")
    client.close_stdin()
    assert client.wait() == 0
    assert len(rpc.server.requests) == 1
    results = [r["message"] for r in rpc.entries() if r["type"] == "message" and r["message"]["role"] == "toolResult"]
    assert len(results) == 1 and results[0]["isError"] is True


def test_sigterm_exits_143(rpc: Env) -> None:
    client = rpc.start()
    assert client.get_state()["isStreaming"] is False
    assert client.process is not None
    client.process.send_signal(signal.SIGTERM)
    assert client.wait() == 143


def test_extension_ui_and_stdout_reserved_for_protocol(rpc: Env, tmp_path: Path) -> None:
    plugin = tmp_path / "asker.py"
    plugin.write_text(ASKING_PLUGIN)
    (rpc.home / "settings.json").write_text(json.dumps({"theme": "light"}))
    rpc.server.add(Reply(tool_calls=[("ask", {})]), Reply(text="thanks"))
    client = rpc.start("-e", str(plugin), "--no-session")

    def answer(event: dict) -> None:
        if event.get("type") == "extension_ui_request" and event["method"] == "select":
            client.respond_ui(event["id"], value=event["options"][1])

    client.on_event(answer)
    client.prompt_and_wait("ask me")
    end = next(e for e in client.events if e["type"] == "tool_execution_end")
    assert end["result"]["content"][0]["text"] == "picked=blue"
    notify = next(e for e in client.events if e.get("method") == "notify")
    assert notify["message"] == "picked blue"
    # ctx.ui.theme styles with the user's theme and the ANSI travels to the client, as in Pi
    status = next(e for e in client.events if e.get("method") == "setStatus")
    assert status["statusText"] == AnsiTheme(builtin_themes()["light"]).fg("accent", "blue")
    assert status["statusText"].startswith("\x1b[38;2;") and status["statusText"].endswith("\x1b[39m")
    assert "sessionFile" not in client.get_state()
    assert client.stop() == 0
    assert "a tool printing to stdout" in client.stderr
    assert "a tool printing to stdout" not in client.unparsed


def test_plugin_printing_at_import_does_not_reach_stdout(rpc: Env, tmp_path: Path) -> None:
    plugin = tmp_path / "asker.py"
    plugin.write_text(ASKING_PLUGIN)
    client = rpc.start("-e", str(plugin), "--no-session")
    assert client.get_state()["isStreaming"] is False
    assert client.stop() == 0
    assert "a plugin printing to stdout at import" in client.stderr
    assert client.unparsed == []


def test_file_arguments_are_rejected_at_startup(rpc: Env) -> None:
    client = rpc.start("@notes.md")
    assert client.wait() == 1
    assert "@file arguments are not supported in RPC mode" in client.stderr
