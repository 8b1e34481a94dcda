"""subagent: the parent pi delegates to child ``pi --mode json -p --no-session`` processes that reach the same
fake model server; a callable reply tells the children (by their appended system prompt) from the parent.

Every child is a full pi start-up, so each test runs at most three of them.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_examples.subagent import render

from pi_core.testing.fake_server import RecordedRequest, Reply
from pi_core.tools import ToolResult
from pi_core.tui import strip_ansi
from pi_core.types import TextContent
from pi_core.ui import PlainTheme

SCOUT = "You are SCOUT-7, a test scout."
PLANNER = "You are PLANNER-9, a test planner."
PLAIN = PlainTheme()  # the rows drawn uncoloured


def write_agent(folder: Path, name: str, prompt: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: the {name} of the tests\n{extra}---\n\n{prompt}\n")
    return path


def system_of(request: RecordedRequest) -> str:
    system = request.body.get("system") or []
    return system if isinstance(system, str) else "".join(block.get("text", "") for block in system)


def last_user_text(request: RecordedRequest) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def route(example: Any, parent: list[Reply], children: dict[str, Callable[[RecordedRequest], Reply]]) -> None:
    """Answer every request: a child's by the first marker its system prompt holds, the parent's from ``parent``."""

    def respond(request: RecordedRequest) -> Reply:
        system = system_of(request)
        for marker, reply in children.items():
            if marker in system:
                return reply(request)
        return parent.pop(0)

    example.server.responder = respond


def split_requests(example: Any, *markers: str) -> tuple[list[int], list[RecordedRequest]]:
    """(indexes of the parent's requests, the children's requests in arrival order)."""
    parent, children = [], []
    for index, request in enumerate(example.server.requests):
        if any(marker in system_of(request) for marker in markers):
            children.append(request)
        else:
            parent.append(index)
    return parent, children


def tool_result_block(example: Any, request: int) -> dict[str, Any]:
    blocks = example.server.requests[request].body["messages"][-1]["content"]
    return next(b for b in blocks if b.get("type") == "tool_result")


def test_single_agent_streams_and_returns_the_child_reply(example: Any) -> None:
    write_agent(example.home / "agents", "scout", SCOUT, "tools: read, ls\n")
    route(example, [Reply(tool_calls=[("subagent", {"agent": "nope", "task": "x"})]),
                    Reply(tool_calls=[("subagent", {"agent": "scout", "task": "find the parser"})]),
                    Reply(text="all done")],
          {"SCOUT-7": lambda _: Reply(text="## Found\n\n`parser.py` lines 1-9")})

    done = example.run("subagent", "--mode", "json", "-p", "go", timeout=120)

    assert done.returncode == 0, done.stderr
    parent, children = split_requests(example, "SCOUT-7")
    assert len(parent) == 3 and len(children) == 1
    unknown = tool_result_block(example, parent[1])
    assert example.tool_results(parent[1]) == ['Agent failed: Error: Unknown agent: "nope". Available agents: "scout".']
    assert unknown.get("is_error") is True
    assert example.tool_results(parent[2]) == ["## Found\n\n`parser.py` lines 1-9"]
    assert tool_result_block(example, parent[2]).get("is_error") in (None, False)
    child = children[0]
    assert last_user_text(child) == "Task: find the parser"
    assert [tool["name"] for tool in child.body["tools"]] == ["read", "ls"]  # the agent's own tool list
    assert child.body["model"] == "fake-model"  # inherited from the dispatching session

    events = [json.loads(line) for line in done.stdout.splitlines()]
    updates = [e["partialResult"] for e in events if e["type"] == "tool_execution_update"]
    assert updates[0]["content"][0]["text"] == "(running...)"
    assert updates[0]["details"]["results"][0]["status"] == "running"
    assert updates[-1]["content"][0]["text"] == "## Found\n\n`parser.py` lines 1-9"
    end = [e for e in events if e["type"] == "tool_execution_end"][-1]
    details = end["result"]["details"]
    first = details["results"][0]
    assert (details["mode"], details["isError"], first["status"], first["exitCode"]) == ("single", False, "completed", 0)
    assert first["usage"]["turns"] == 1 and first["usage"]["input"] == 10 and first["usage"]["output"] == 5
    assert first["stderr"] == "" and first["model"] == "fake/fake-model"

    # The renderer gets the final result as the end event carries it (a dict) and partials as ToolResults.
    collapsed = strip_ansi(render.render_result(end["result"], False, False, PLAIN))
    result = ToolResult(content=[TextContent(text=end["result"]["content"][0]["text"])], details=details)
    assert collapsed.splitlines()[0] == "✓ scout (user)"
    assert collapsed.splitlines()[-1] == "1 turn ↑10 ↓5 $0.0001 ctx:15 fake/fake-model"
    expanded = [strip_ansi(line).strip() for line in render.render_result(result, False, True, PLAIN).render(80)]
    assert "─── Task ───" in expanded and "find the parser" in expanded
    assert any(line.startswith("Found") for line in expanded)  # the heading drawn as Markdown, not as "## Found"
    assert not any(line.startswith("##") for line in expanded)
    assert strip_ansi(render.render_call({"agent": "scout", "task": "find the parser"}, PLAIN)) == \
        "subagent scout [user]\n  find the parser"


def test_parallel_tasks_return_every_output(example: Any) -> None:
    write_agent(example.home / "agents", "scout", SCOUT)
    nine = [{"agent": "scout", "task": f"t{i}"} for i in range(9)]
    two = [{"agent": "scout", "task": "alpha"}, {"agent": "scout", "task": "beta"}]
    route(example, [Reply(tool_calls=[("subagent", {"tasks": nine})]),
                    Reply(tool_calls=[("subagent", {"agent": "scout", "task": "x", "tasks": two})]),
                    Reply(tool_calls=[("subagent", {"tasks": two})]),
                    Reply(tool_calls=[("subagent", {"agent": "scout", "task": "lost", "cwd": "missing"})]),
                    Reply(text="done")],
          {"SCOUT-7": lambda request: Reply(text=last_user_text(request).removeprefix("Task: ").upper() + "-OUT")})

    done = example.run("subagent", "--mode", "json", "-p", "go", timeout=120)

    assert done.returncode == 0, done.stderr
    parent, children = split_requests(example, "SCOUT-7")
    assert len(children) == 2
    assert example.tool_results(parent[1]) == ["Too many parallel tasks (9). Max is 8."]
    assert example.tool_results(parent[2]) == [("Invalid parameters. Provide exactly one mode.\n"
                                               "Available agents: scout (user)")]
    assert example.tool_results(parent[3]) == [("Parallel: 2/2 succeeded\n\n### [scout] completed\n\nALPHA-OUT"
                                               "\n\n---\n\n### [scout] completed\n\nBETA-OUT")]
    assert sorted(last_user_text(c) for c in children) == ["Task: alpha", "Task: beta"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    ends = [e["result"] for e in events if e["type"] == "tool_execution_end"]
    lines = strip_ansi(render.render_result(ends[2], False, False, PLAIN)).splitlines()
    assert lines[0] == "✓ parallel 2/2 tasks"
    assert "Total: 2 turns ↑20 ↓10 $0.0002" in lines  # the children's usage summed, as Pi shows it
    progress = [e["partialResult"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_update"]
    assert progress[0] == "Parallel: 0/2 done, 1 running, 1 pending..."
    assert "Parallel: 2/2 done, 0 running, 0 pending..." in progress
    missing = example.cwd / "missing"  # a task cwd that does not exist: the spawn error, not a traceback
    assert example.tool_results(parent[4]) == [(f"Agent failed: Error: Failed to spawn subagent: "
                                               f"No such file or directory: {missing}")]


def test_chain_passes_previous_and_stops_at_a_failing_step(example: Any) -> None:
    agents = example.home / "agents"
    write_agent(agents, "scout", SCOUT)
    write_agent(agents, "planner", PLANNER)
    chain = [{"agent": "scout", "task": "look at auth"}, {"agent": "planner", "task": "plan from: {previous}"}]
    route(example, [Reply(tool_calls=[("subagent", {"chain": chain})]),
                    Reply(tool_calls=[("subagent", {"chain": [{"agent": "ghost", "task": "boo"}]})]),
                    Reply(text="done")],
          {"SCOUT-7": lambda _: Reply(text="auth lives in auth.py"),
           "PLANNER-9": lambda request: Reply(text="PLAN <" + last_user_text(request) + ">")})

    # The shipped workflow prompt arrives as a prompt template while the plugin is on.
    done = example.run("subagent", "--mode", "json", "-p", "/scout-and-plan the login flow", timeout=120)

    assert done.returncode == 0, done.stderr
    parent, children = split_requests(example, "SCOUT-7", "PLANNER-9")
    expanded = example.user_text(parent[0])
    assert "the login flow" in expanded and '"scout"' in expanded and '"planner"' in expanded
    assert "{previous}" in expanded and "$@" not in expanded
    assert [last_user_text(c) for c in children] == ["Task: look at auth", "Task: plan from: auth lives in auth.py"]
    assert example.tool_results(parent[1]) == ["PLAN <Task: plan from: auth lives in auth.py>"]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    steps = [[(r["step"], r["agent"], r["status"]) for r in e["partialResult"]["details"]["results"]]
             for e in events if e["type"] == "tool_execution_update"]
    assert steps[0] == [(1, "scout", "running")]
    assert [(1, "scout", "completed"), (2, "planner", "running")] in steps  # later steps stream with the earlier
    assert example.tool_results(parent[2]) == [('Chain stopped at step 1 (ghost): Error: Unknown agent: "ghost". '
                                               'Available agents: "planner", "scout".')]


def _pids_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_project_agents_are_confirmed_and_abort_kills_the_child(example: Any, ui: Any) -> None:
    write_agent(example.home / "agents", "scout", SCOUT)
    own = write_agent(example.cwd / ".pi" / "agents", "scout", "You are PROJECT-SCOUT.")
    other = write_agent(example.cwd / "sub" / ".pi" / "agents", "scout", "You are OTHER-SCOUT.")
    marker = f"stall-{os.getpid()}-{time.monotonic_ns()}"
    route(example, [Reply(tool_calls=[("subagent", {"agent": "scout", "task": "x", "agentScope": "both",
                                                    "cwd": "sub"})]),
                    Reply(tool_calls=[("subagent", {"agent": "scout", "task": marker, "agentScope": "both"})]),
                    Reply(text="never reached")],
          {"PROJECT-SCOUT": lambda _: Reply(text="partial", stall_after=1, stall_s=60)})
    client = example.rpc("subagent")

    client.prompt("go")
    # Agents from another folder's .pi/agents are repo-controlled: the user is asked, here says no.
    ask = ui(client, "confirm", title="Run project-local agents?", timeout=60)
    assert f"- scout: {other}" in ask["message"]
    client.respond_ui(ask["id"], confirmed=False)
    declined = client.wait_for_event("tool_execution_end", timeout=60)
    assert declined["result"]["content"][0]["text"] == "Canceled: project-local agents not approved."
    mark = client.event_count()

    # The session's own (trusted) project agents run without a question; abort takes the child down.
    running = client.wait_for_event(lambda e: e.get("type") == "tool_execution_update" and any(
        m.get("role") == "user" for m in e["partialResult"]["details"]["results"][0]["messages"]),
        after=mark, timeout=60)
    assert running["partialResult"]["details"]["results"][0]["agentSource"] == "project"
    pids = _pids_with(marker)
    assert pids, "the child pi should be running"
    client.abort()
    end = client.wait_for_event("tool_execution_end", after=mark, timeout=30)
    assert end["result"]["content"][0]["text"].startswith("Agent aborted")
    assert end["result"]["details"]["results"][0]["status"] == "aborted"
    deadline = time.monotonic() + 10
    while _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_with(marker) == []
    assert len(example.ui_requests(client, "confirm")) == 1
    assert own.exists()


def test_a_session_that_ends_kills_its_own_children_only(example: Any, sdk_sessions: Any) -> None:
    write_agent(example.home / "agents", "scout", SCOUT)
    marker = f"stall-{os.getpid()}-{time.monotonic_ns()}"
    route(example, [Reply(tool_calls=[("subagent", {"agent": "scout", "task": marker})]), Reply(text="stopped")],
          {"SCOUT-7": lambda _: Reply(text="partial", stall_after=1, stall_s=60)})
    asyncio.run(_two_sessions(example, sdk_sessions, marker))


async def _two_sessions(example: Any, sdk_sessions: Any, marker: str) -> None:
    async with sdk_sessions("subagent") as (first, second):
        run = asyncio.ensure_future(first.prompt("go"))
        deadline = time.monotonic() + 60  # until the child has asked the model (it then stalls)
        while not split_requests(example, SCOUT)[1] and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert _pids_with(marker), "the first session's child pi should be running"
        await second.dispose()  # the other session's shutdown leaves this child alone
        await asyncio.sleep(0.5)
        assert _pids_with(marker)
        await first.dispose()  # ending its own session aborts the call, which takes the child down
        await run
    deadline = time.monotonic() + 10
    while _pids_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert _pids_with(marker) == []
