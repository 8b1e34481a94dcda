"""Issue 16 item 1: after an abort no model request is made until the user sends something; the run
ends with the aborted results recorded (in RPC, and in print mode on Ctrl-C)."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_provider import reply
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner
from pi_core.tools import Tool, ToolContext

from .conftest import Rig


def _stubborn_tools(started: threading.Event, ran: list[str]) -> list[Tool]:
    """``stubborn`` ignores the abort and finishes normally; ``mark`` records that it ran."""

    def stubborn(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        time.sleep(0.6)  # deliberately deaf to ctx.signal
        return "stubborn finished"

    def mark(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append("mark")
        return "marked"

    schema = {"type": "object", "properties": {}}
    return [Tool(name="stubborn", description="Ignores aborts.", parameters=schema, execute=stubborn,
                 execution_mode="sequential"),
            Tool(name="mark", description="Records a call.", parameters=schema, execute=mark)]


def test_abort_while_a_tool_ignores_it_makes_no_further_request(rig: Rig) -> None:
    started, ran = threading.Event(), []
    client = rig.start(reply(tool_calls=[("stubborn", {}), ("mark", {})]), reply("must never be asked"),
                       tools=_stubborn_tools(started, ran))
    client.prompt("go")
    assert started.wait(10)
    client.abort()
    client.wait_for_event("agent_end")
    assert len(rig.provider.contexts) == 1  # the stream function was never called again
    assert ran == []  # the call queued behind the aborted one did not run
    messages = client.get_messages()
    results = [(m["toolName"], m["content"][0]["text"], m["isError"]) for m in messages if m["role"] == "toolResult"]
    assert results == [("stubborn", "stubborn finished", False), ("mark", "Operation aborted", True)]
    last = messages[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted" and last["content"] == []
    assert last["errorMessage"] == "Request was aborted"

    # the next prompt from the user is answered normally
    rig.provider.replies[:] = [reply("back again")]
    client.prompt_and_wait("again")
    assert client.get_last_assistant_text() == "back again"
    assert len(rig.provider.contexts) == 2


@pytest.mark.parametrize("mode", [("-p",), ("--mode", "json")])
def test_ctrl_c_in_print_mode_during_a_tool_makes_no_further_request(tmp_path: Path, mode: tuple[str, ...]) -> None:
    with pi_runner(tmp_path) as pi:
        (pi.cwd / "ext.py").write_text(
            "import time\nfrom pi_core import Tool, hookimpl\n"
            "def execute(args, ctx):\n"
            "    open('started', 'w').close()\n"
            "    time.sleep(1.0)\n"
            "    return 'done anyway'\n"
            "@hookimpl\n"
            "def pi_tools():\n"
            "    return [Tool(name='stubborn', description='Ignores aborts.', parameters={'type': 'object'},\n"
            "                 execute=execute)]\n")
        pi.server.add(Reply(tool_calls=[("stubborn", {})]), Reply(text="must never be asked"))
        process = pi.popen("-e", "ext.py", *mode, "go")
        deadline = time.monotonic() + 60
        while not (pi.cwd / "started").exists():
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        assert len(pi.server.requests) == 1
