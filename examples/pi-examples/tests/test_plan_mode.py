"""plan_mode: --plan and /plan make the session read-only; a numbered plan is executed with [DONE:n] tracking."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_core.resources.ansi_theme import AnsiTheme
from pi_core.resources.themes import builtin_themes
from pi_core.testing.fake_script import Reply

MARKER = "[PLAN MODE ACTIVE]"
PLAN = "Plan:\n1. Read the file a.txt carefully\n2. Fix the bug in b.py"
STEP1, STEP2 = "File a.txt carefully", "Fix the bug in b.py"  # as Pi cleans them ("Read the " dropped)
EXECUTE = "Execute the plan (track progress)"
# The footer status is styled with the user's theme (dark by default) and reaches RPC clients with its ANSI, as in Pi.
THEME = AnsiTheme(builtin_themes()["dark"])
PLANNING = THEME.fg("warning", "⏸ plan")
HALF_DONE = THEME.fg("accent", "📋 1/2")


def todo(text: str) -> str:
    return THEME.fg("muted", "☐ ") + text


def ticked(text: str) -> str:
    return THEME.fg("success", "☑ ") + THEME.fg("muted", THEME.strikethrough(text))


def tools(example, request: int) -> list[str]:
    return [t["name"] for t in example.server.requests[request].body.get("tools", [])]


def texts(example, request: int) -> str:
    """Every text block the ``request``-th request sends, one per line."""
    out = []
    for message in example.server.requests[request].body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out.extend(block.get("text", "") for block in blocks if block.get("type") == "text")
    return "\n".join(out)


def settled(client, after: int) -> None:
    client.wait_for_event("agent_settled", after=after, timeout=30)


def widget_lines(example, client, after: int = 0) -> list[list[str] | None]:
    return [e.get("widgetLines") for e in example.ui_requests(client, "setWidget")[after:]
            if e.get("widgetKey") == "plan-todos"]


def statuses(example, client) -> list[Any]:
    return [e.get("statusText") for e in example.ui_requests(client, "setStatus") if e.get("statusKey") == "plan-mode"]


def test_the_plan_flag_hides_write_tools_and_blocks_commands_off_the_allow_list(example) -> None:
    (example.cwd / "x").write_text("keep me\n")
    example.server.add(
        Reply(tool_calls=[("bash", {"command": "rm x"}), ("bash", {"command": "echo hi > y"}),
                          ("bash", {"command": "ls"}), ("bash", {"command": "git status --short || true"})]),
        Reply(text="Plan:\n1. Remove the stale file x\n2. Regenerate everything"))
    done = example.run("plan_mode", "--no-session", "-p", "--plan", "clean up")
    assert done.returncode == 0, done.stderr
    first = example.server.requests[0].body
    assert tools(example, 0) == ["read", "bash", "grep", "find", "ls"]  # edit/write off; questionnaire absent
    context = first["messages"][-1]["content"]
    assert context[0]["text"].startswith(MARKER + "\nYou are in plan mode - a read-only exploration mode")
    assert first["messages"][0]["content"][0]["text"] == "clean up"
    blocked, redirect, listed, status = example.tool_results(1)
    assert blocked == ("Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\n"
                       "Command: rm x")
    assert redirect.startswith("Plan mode: command blocked (not allowlisted).") and redirect.endswith("echo hi > y")
    assert "x" in listed.split()
    assert not status.startswith("Plan mode:")
    assert (example.cwd / "x").read_text() == "keep me\n" and not (example.cwd / "y").exists()
    # Nobody can answer in print mode: the plan is printed and no execution starts.
    assert len(example.server.requests) == 2
    assert "1. Remove the stale file x" in done.stdout


def test_plan_then_execute_with_progress_over_rpc_and_resume(example, ui) -> None:
    # Reasoning models often write the marker in their thinking: that counts too.
    example.server.add(Reply(text=PLAN), Reply(text="Here are the steps."),
                       Reply(thinking="Step one is finished: [DONE:1]", text="Read it."))
    client = example.rpc("plan_mode")
    client.request("prompt", message="/plan")
    notice = ui(client, "notify", message="Plan mode enabled. Built-in write tools disabled.")
    assert notice["notifyType"] == "info"
    assert statuses(example, client)[-1] == PLANNING

    mark = client.event_count()
    client.prompt("make a plan")
    ask = ui(client, "select", after=mark)
    assert ask["title"] == "Plan mode - what next?"
    assert ask["options"] == [EXECUTE, "Stay in plan mode", "Refine the plan"]
    assert MARKER in texts(example, 0) and "edit" not in tools(example, 0)
    client.respond_ui(ask["id"], value=EXECUTE)
    settled(client, mark)

    # The tools come back and two queued messages run: the steps card, then the execute message.
    assert len(example.server.requests) == 3
    assert tools(example, 1) == ["read", "bash", "edit", "write"]
    steps_card = f"**Plan Steps (2):**\n\n1. ☐ {STEP1}\n2. ☐ {STEP2}"
    assert example.user_text(1) == steps_card
    assert example.user_text(2) == (f"Execute the plan.\n\nRemaining steps:\n1. {STEP1}\n2. {STEP2}\n\n"
                                    f"Start with: {STEP1}\nAfter completing a step, include a [DONE:n] tag in your "
                                    "response.")
    for request in (1, 2):
        assert MARKER not in texts(example, request)  # the stale plan context is filtered out
    widgets = widget_lines(example, client)
    assert [todo(STEP1), todo(STEP2)] in widgets
    assert widgets[-1] == [ticked(STEP1), todo(STEP2)]
    assert statuses(example, client)[-1] == HALF_DONE

    mark = client.event_count()
    client.request("prompt", message="/todos")
    progress = ui(client, "notify", after=mark)
    assert progress["message"] == f"Plan Progress:\n1. ✓ {STEP1}\n2. ○ {STEP2}"
    client.stop()

    # A resumed session restores the execution from the last "plan-mode" entry...
    [session] = (example.home / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    assert entries[-1]["type"] == "custom" and entries[-1]["customType"] == "plan-mode"
    assert entries[-1]["data"] == {"enabled": False, "executing": True, "todos": [
        {"step": 1, "text": STEP1, "completed": True}, {"step": 2, "text": STEP2, "completed": False}]}
    # ...and reads the replies since the execute message again: a state saved before a [DONE:n] was seen (the
    # process died in between) still comes back with that step ticked.
    entries[-1]["data"]["todos"][0]["completed"] = False
    session.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    example.server.add(Reply(text="Fixed it. [DONE:2]"), Reply(text="anything else"))
    resumed = example.rpc("plan_mode", "--continue")
    resumed.request("prompt", message="/todos")
    again = ui(resumed, "notify", message=progress["message"])
    assert again["notifyType"] == "info"
    assert statuses(example, resumed)[-1] == HALF_DONE
    mark = resumed.event_count()
    resumed.prompt("go on")
    settled(resumed, mark)
    assert example.user_text(3, -2) == "go on"
    assert example.user_text(3) == (f"[EXECUTING PLAN - Full tool access enabled]\n\nRemaining steps:\n2. {STEP2}\n\n"
                                    "Execute each step in order.\nAfter completing a step, include a [DONE:n] tag in "
                                    "your response.")
    assert tools(example, 3) == ["read", "bash", "edit", "write"] and MARKER not in texts(example, 3)
    assert widget_lines(example, resumed)[-1] is None  # all done: the widget goes, the status clears
    assert statuses(example, resumed)[-1] is None
    # The completion card waits for the next prompt rather than starting a run of its own.
    assert len(example.server.requests) == 4
    mark = resumed.event_count()
    resumed.prompt("thanks")
    settled(resumed, mark)
    assert example.user_text(4) == f"**Plan Complete!** ✓\n\n~~{STEP1}~~\n~~{STEP2}~~"
    assert example.user_text(4, -2) == "thanks"
    resumed.request("prompt", message="/todos")
    ui(resumed, "notify", message="No todos. Create a plan first with /plan")

    # A new session does not inherit plan mode, nor its tools (pi keeps the active tools across sessions).
    mark = resumed.event_count()
    resumed.request("prompt", message="/plan")
    ui(resumed, "setStatus", after=mark, statusKey="plan-mode", statusText=PLANNING)
    mark = resumed.event_count()
    assert resumed.new_session() == {"cancelled": False}
    ui(resumed, "setStatus", after=mark, statusKey="plan-mode", statusText=None)
    example.server.add(Reply(text="fresh"))
    mark = resumed.event_count()
    resumed.prompt("hello again")
    settled(resumed, mark)
    assert tools(example, 5) == ["read", "bash", "edit", "write"] and MARKER not in texts(example, 5)


def test_stay_refine_and_toggling_off(example, ui) -> None:
    # The last "Plan:" of a reply counts: a draft in the thinking comes before the plan in the text.
    example.server.add(Reply(text=PLAN),
                       Reply(thinking="Plan:\n1. A draft step nobody sees", text=PLAN + "\n3. Add a regression test for b"),
                       Reply(text="noted"), Reply(text="done planning"))
    client = example.rpc("plan_mode", "--no-session", "--plan")
    ui(client, "setStatus", statusKey="plan-mode", statusText=PLANNING)
    mark = client.event_count()
    client.prompt("make a plan")
    client.respond_ui(ui(client, "select", after=mark)["id"], value="Stay in plan mode")
    settled(client, mark)
    assert len(example.server.requests) == 1

    mark = client.event_count()
    client.prompt("once more")
    first = ui(client, "select", after=mark)
    client.respond_ui(first["id"], value="Refine the plan")
    editor = ui(client, "editor", after=mark)
    assert editor["title"] == "Refine the plan:"
    client.respond_ui(editor["id"], value="  also cover b with a test \n")
    ask = client.wait_for_event(lambda e: e.get("method") == "select" and e["id"] != first["id"], after=mark,
                                timeout=30)  # the refined plan is offered in turn
    # The card, then the refinement, each a turn of one new run; plan mode (and its tools) stays on.
    card = f"**Plan Steps (3):**\n\n1. ☐ {STEP1}\n2. ☐ {STEP2}\n3. ☐ A regression test for b"
    assert example.user_text(2) == card
    assert example.user_text(3) == "also cover b with a test" and example.user_text(3, -2) == card
    assert "edit" not in tools(example, 3)
    client.respond_ui(ask["id"], cancelled=True)
    settled(client, mark)

    mark = client.event_count()
    client.request("prompt", message="/plan")
    ui(client, "notify", after=mark, message="Plan mode disabled. Full access restored.")
    example.server.add(Reply(text="normal"))
    mark = client.event_count()
    client.prompt("hello")
    settled(client, mark)
    assert tools(example, 4) == ["read", "bash", "edit", "write"] and MARKER not in texts(example, 4)

    # With --plan every new session starts in plan mode again, as in Pi.
    mark = client.event_count()
    assert client.new_session() == {"cancelled": False}
    ui(client, "setStatus", after=mark, statusKey="plan-mode", statusText=PLANNING)


def test_two_sessions_in_one_process_keep_their_own_mode(example, sdk_sessions) -> None:
    asyncio.run(_two_sessions(example, sdk_sessions))


async def _two_sessions(example, sdk_sessions) -> None:
    example.server.add(Reply(text="normal"), Reply(text="planning"))
    async with sdk_sessions("plan_mode") as (first, second):
        assert await first.prompt("/plan") == "handled"
        await second.prompt("hello")
        await first.prompt("make a plan")
    assert MARKER not in texts(example, 0) and tools(example, 0) == ["read", "bash", "edit", "write"]
    assert MARKER in texts(example, 1) and "edit" not in tools(example, 1)
