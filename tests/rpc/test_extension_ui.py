"""The extension UI sub-protocol (docs/rpc.md#extension-ui): a tool asks the user through ``ctx.extras["pi"].ui``."""

from __future__ import annotations

from typing import Any

from pi_core.modes.rpc.ui import THEME_ERROR
from pi_core.testing.fake_provider import reply
from pi_core.tools import Tool, ToolContext, ToolResult
from tests.rpc.conftest import Rig

ANY_ARGS = {"type": "object", "properties": {"timeout": {"type": "number"}}}


def asking_tool() -> Tool:
    async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ui = ctx.extras["pi"].ui
        timeout = args.get("timeout")
        confirmed = await ui.confirm("Clear session?", "All messages will be lost.", timeout=timeout)
        choice = await ui.select("Allow?", ["Allow", "Deny"], timeout=timeout)
        typed = await ui.input("Name", "your name", timeout=timeout)
        edited = await ui.editor("Edit", "prefilled") if timeout is None else "skipped"
        return ToolResult.text(f"confirmed={confirmed} choice={choice} typed={typed} edited={edited}")

    return Tool(name="ask", description="Ask the user.", parameters=ANY_ARGS, execute=execute)


def answer_dialogs(client: Any, answers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event.get("type") == "extension_ui_request" and event["method"] in answers:
            seen.append(event)
            client.respond_ui(event["id"], **answers[event["method"]])

    client.on_event(on_event)
    return seen


def tool_output(client: Any) -> str:
    end = client.wait_for_event("tool_execution_end")
    return end["result"]["content"][0]["text"]


def test_dialogs_are_answered_by_the_client(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("ask", {})]), reply("ok"), tools=[asking_tool()])
    seen = answer_dialogs(client, {"confirm": {"confirmed": True}, "select": {"value": "Allow"},
                                   "input": {"value": "Ada"}, "editor": {"value": "new text"}})
    client.prompt("ask me")
    assert tool_output(client) == "confirmed=True choice=Allow typed=Ada edited=new text"
    confirm = seen[0]
    assert confirm == {"type": "extension_ui_request", "id": confirm["id"], "method": "confirm",
                       "title": "Clear session?", "message": "All messages will be lost."}
    assert seen[1]["options"] == ["Allow", "Deny"]
    assert seen[2]["placeholder"] == "your name"
    assert seen[3]["prefill"] == "prefilled"
    assert len({s["id"] for s in seen}) == 4


def test_cancelled_dialogs_give_defaults(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("ask", {})]), reply("ok"), tools=[asking_tool()])
    cancel = {"cancelled": True}
    answer_dialogs(client, {"confirm": cancel, "select": cancel, "input": cancel, "editor": {}})
    client.prompt("ask me")
    assert tool_output(client) == "confirmed=False choice=None typed=None edited=None"


def test_timeout_resolves_with_default_and_late_answer_is_ignored(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("ask", {"timeout": 20})]), reply("ok"), tools=[asking_tool()])
    client.prompt("ask me")
    assert tool_output(client) == "confirmed=False choice=None typed=None edited=skipped"
    requests = [e for e in client.events if e["type"] == "extension_ui_request"]
    assert [r["timeout"] for r in requests] == [20, 20, 20]
    client.respond_ui(requests[0]["id"], confirmed=True)  # late: must be ignored silently
    client.respond_ui("no-such-request", value="x")
    client.wait_for_event("agent_end")
    assert client.get_state()["isStreaming"] is False
    assert all(r["success"] for r in client.responses)


def test_abort_resolves_an_open_dialog(rig: Rig) -> None:
    client = rig.start(reply(tool_calls=[("ask", {})]), reply("never"), tools=[asking_tool()])
    client.prompt("ask me")
    client.wait_for_event(lambda e: e.get("method") == "confirm")
    client.close_stdin()  # EOF cancels open dialogs, then aborts the run
    assert rig.pi.close() == 0


def test_fire_and_forget_requests(rig: Rig) -> None:
    def execute(args: dict[str, Any], ctx: ToolContext) -> str:
        ui = ctx.extras["pi"].ui  # a sync tool: runs in a worker thread
        ui.notify("Heads up", "warning")
        ui.set_status("build", "compiling")
        ui.set_status("build")
        ui.set_widget("todo", ["one", "two"], "belowEditor")
        ui.set_widget("factory", lambda tui: None)  # components cannot travel: nothing is sent
        ui.set_title("pi - project")
        ui.paste_to_editor("pasted")
        answer = ui.blocking(ui.confirm("Sure?", "Really"))
        degraded = (ui.get_editor_text(), ui.get_tools_expanded(), ui.get_all_themes(), ui.set_theme("x"))
        return f"answer={answer} degraded={degraded}"

    tool = Tool(name="ask", description="Notify.", parameters=ANY_ARGS, execute=execute)
    client = rig.start(reply(tool_calls=[("ask", {})]), reply("ok"), tools=[tool])
    answer_dialogs(client, {"confirm": {"confirmed": True}})
    client.prompt("go")
    theme = {"success": False, "error": THEME_ERROR}
    assert tool_output(client) == f"answer=True degraded=('', False, [], {theme!r})"
    requests = [{k: v for k, v in e.items() if k not in ("id", "type")}
                for e in client.events if e["type"] == "extension_ui_request"]
    assert requests == [
        {"method": "notify", "message": "Heads up", "notifyType": "warning"},
        {"method": "setStatus", "statusKey": "build", "statusText": "compiling"},
        {"method": "setStatus", "statusKey": "build"},
        {"method": "setWidget", "widgetKey": "todo", "widgetLines": ["one", "two"], "widgetPlacement": "belowEditor"},
        {"method": "setTitle", "title": "pi - project"},
        {"method": "set_editor_text", "text": "pasted"},
        {"method": "confirm", "title": "Sure?", "message": "Really"},
    ]
