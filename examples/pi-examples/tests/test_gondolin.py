"""gondolin: the tools and the user's ``!`` commands go to a VM through the JSON-lines bridge. No QEMU here: a fake
``gondolin-bridge`` on PATH plays the VM, mapping /workspace onto the host project folder (in file requests, in
exec argv and cwd, and back in exec output) and logging every request it gets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pi_core.modes.rpc.client import RpcError
from pi_core.testing.fake_script import Reply
from pi_core.testing.fakebin import FakeBin

FAKE_BRIDGE = (Path(__file__).parent / "fake_gondolin_bridge.py").read_text()


class Bridge:
    """The fake bridge's folder on PATH and its request log."""

    def __init__(self, tmp_path: Path) -> None:
        self.bins = FakeBin(tmp_path / "bin")
        self.bins.add("gondolin-bridge", FAKE_BRIDGE)

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": self.bins.env()["PATH"], **extra}

    def requests(self, op: str | None = None) -> list[dict[str, Any]]:
        path = self.bins.directory / "gondolin.requests.jsonl"
        lines = path.read_text().splitlines() if path.is_file() else []
        return [r for r in map(json.loads, lines) if op is None or r["op"] == op]


def events_call(events: list[dict[str, Any]], index: int) -> str:
    """The tool-call id of the ``index``-th tool execution (1-based) in JSON-mode events."""
    return [e["toolCallId"] for e in events if e["type"] == "tool_execution_start"][index - 1]


def test_the_model_s_tools_run_in_the_vm(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    (example.cwd / "src").mkdir()
    (example.cwd / "src" / "notes.md").write_text("alpha\nthe needle is here\nomega\n")
    (example.cwd / "node_modules").mkdir()
    (example.cwd / "node_modules" / "dep.md").write_text("needle in a dependency\n")
    example.server.add(
        Reply(tool_calls=[("bash", {"command": "pwd; echo to-stderr >&2"})]),
        Reply(tool_calls=[("write", {"path": "a.txt", "content": "hello vm\n"})]),
        Reply(tool_calls=[("edit", {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "bye"}]})]),
        Reply(tool_calls=[("read", {"path": "/workspace/a.txt"})]),
        Reply(tool_calls=[("grep", {"pattern": "needle", "context": 1})]),
        Reply(tool_calls=[("find", {"pattern": "*.md"})]),
        Reply(tool_calls=[("ls", {})]),
        Reply(tool_calls=[("read", {"path": "missing.txt"})]),
        Reply(tool_calls=[("bash", {"command": "echo started; sleep 30", "timeout": 1})]),
        Reply(text="done"))
    done = example.run("gondolin", "--no-session", "--mode", "json", "--tools", "read,bash,edit,write,grep,find,ls",
                       "go", env=bridge.env())
    assert done.returncode == 0, done.stderr
    # stdout and stderr are two streams: the bridge may deliver them in either order
    assert sorted(example.tool_results(1)[0].splitlines()) == ["/workspace", "to-stderr"]
    assert (example.cwd / "a.txt").read_text() == "bye vm\n", "writes land in the host folder through the mount"
    writes = bridge.requests("writeFile")
    assert [w["path"] for w in writes] == ["/workspace/a.txt", "/workspace/a.txt"]
    assert example.tool_results(4)[0] == "bye vm\n"
    assert example.tool_results(5)[0] == "src/notes.md-1- alpha\nsrc/notes.md:2: the needle is here\nsrc/notes.md-3- omega"
    assert example.tool_results(6)[0] == "src/notes.md"
    assert example.tool_results(7)[0].split("\n") == ["a.txt", "node_modules/", "src/"]
    assert example.tool_results(8)[0] == "ENOENT: no such file or directory, access '/workspace/missing.txt'"
    assert example.tool_results(9)[0] == "started\n\n\nCommand timed out after 1 seconds"
    events = [json.loads(line) for line in done.stdout.splitlines()]
    partial = [e for e in events if e["type"] == "tool_execution_update" and e["toolCallId"] == events_call(events, 9)]
    assert any("started" in json.dumps(e["partialResult"]) for e in partial), "guest output reaches the partial results"
    sleeper = next(r for r in bridge.requests("exec") if "sleep 30" in r["argv"][-1])
    assert [r["target"] for r in bridge.requests("signal")] == [sleeper["id"]]
    prompt = example.system_prompt(0)
    assert prompt.count(f"Current working directory: /workspace (Gondolin VM; host workspace mounted from "
                        f"{example.cwd})") == 1
    assert f"Current working directory: {example.cwd}\n" not in prompt
    start, probe = bridge.requests()[:2]
    assert start["op"] == "start" and start["mounts"] == {"/workspace": str(example.cwd)}
    assert probe["argv"] == ["/bin/sh", "-lc", "command -v bash || true"]
    bash = next(r for r in bridge.requests("exec") if r["argv"][-1].startswith("pwd"))
    assert bash["argv"][1:] == ["-lc", "pwd; echo to-stderr >&2"] and bash["argv"][0].endswith("bash")
    assert bash["cwd"] == "/workspace"
    assert bridge.requests()[-1]["op"] == "close", "the VM stops with the session"


def test_user_bash_and_the_command_over_rpc(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    client = example.rpc("gondolin", "--no-session", env=bridge.env())
    ready = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert ready["message"] == f"Gondolin VM ready. {example.cwd} is mounted at /workspace."
    statuses = [s["statusText"] for s in example.ui_requests(client, "setStatus")]
    assert "Gondolin: starting /workspace" in statuses[0]
    assert "Gondolin: f00dfeed (/workspace)" in statuses[1]
    result = client.bash("echo $PWD; ls /workspace")
    assert result["output"].split("\n")[0] == "/workspace"
    assert result["exitCode"] == 0
    assert bridge.requests("exec")[-1]["argv"][-1] == "echo $PWD; ls /workspace"
    client.prompt("/gondolin")
    info = client.wait_for_event(lambda e: e.get("method") == "notify" and "Gondolin VM:" in e["message"])
    lines = info["message"].split("\n")
    assert lines[:3] == ["Gondolin VM: f00dfeed-0000-4000-8000-gondolinfake", f"Host workspace: {example.cwd}",
                         "Guest workspace: /workspace"]
    assert re.fullmatch(r"Shell: /\S*bash", lines[3]), "the shell the start-up probe found in the guest"
    assert len(bridge.requests("start")) == 1, "one VM for the whole session"
    mark = len(client.events)
    client.new_session()
    client.wait_for_event(lambda e: e.get("method") == "notify" and "ready" in e["message"], after=mark)
    assert [r["op"] for r in bridge.requests() if r["op"] in ("start", "close")] == ["start", "close", "start"]
    client.stop()
    assert bridge.requests()[-1]["op"] == "close"


def test_a_missing_bridge_is_a_clear_error(example, tmp_path: Path) -> None:
    example.server.add(Reply(tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "where", env={"PI_GONDOLIN_BRIDGE": "no-such-gondolin"})
    assert done.returncode == 0, done.stderr
    expected = ("Gondolin bridge not found: 'no-such-gondolin' is not on PATH. Install a bridge for the Gondolin VM "
                "or point --gondolin-bridge / PI_GONDOLIN_BRIDGE at one.")
    assert example.tool_results(1) == [expected]
    assert "Extension error (gondolin, pi_session_start): " in done.stderr and expected in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(example.cwd.iterdir()), "nothing ran on the host"


def test_garbage_from_the_bridge_is_reported_to_the_user_and_the_model(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    program = bridge.bins.directory / "gondolin-bridge"
    client = example.rpc("gondolin", "--no-session", "--gondolin-bridge", str(program),
                         env={"FAKE_GONDOLIN_MODE": "garbage"})
    broke = (f"Gondolin bridge '{program}' broke the JSON-lines protocol: "
             "it sent 'qemu-system-x86_64: -accel kvm: not JSON at all', which is not JSON (is it a pi bridge? "
             "The Gondolin CLI itself is not one; see --gondolin-bridge or PI_GONDOLIN_BRIDGE)")
    error = client.wait_for_event(lambda e: e.get("type") == "extension_error")
    assert error["event"] == "session_start" and broke in error["error"]
    status = client.wait_for_event(lambda e: e.get("method") == "setStatus" and "unavailable" in e["statusText"])
    assert "Gondolin: unavailable" in status["statusText"]
    with pytest.raises(RpcError) as refused:
        client.bash("touch made-on-the-host")
    assert 'Plugin "gondolin" failed on this command (pi_user_bash): ' + broke in str(refused.value)
    assert not (example.cwd / "made-on-the-host").exists(), "a failed VM never falls back to the host"
    example.server.add(Reply(tool_calls=[("read", {"path": "x"})]), Reply(text="done"))
    client.prompt_and_wait("read x")
    assert example.tool_results(1)[0] == broke
    assert bridge.requests()[0]["op"] == "start", "the flag chose the bridge"
    assert "Traceback" not in client.stderr


def test_a_bridge_that_dies_fails_the_call_with_its_last_words(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    example.server.add(Reply(tool_calls=[("write", {"path": "a.txt", "content": "x"})]),
                       Reply(tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "write", env=bridge.env(FAKE_GONDOLIN_MODE="die-on-write"))
    assert done.returncode == 0, done.stderr
    died = "Gondolin bridge 'gondolin-bridge' exited with code 3: qemu-system-x86_64: guest panicked"
    assert example.tool_results(1) == [died]
    assert example.tool_results(2) == [died]
    assert not (example.cwd / "a.txt").exists()
    assert "Traceback" not in done.stderr
