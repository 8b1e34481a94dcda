"""The app driven in-process: keys in through prompt_toolkit's pipe input, scrollback out through a
recording rich console, the session on the in-process FakeProvider."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from pi_core import SlashCommand, hookimpl
from pi_core.plugins import load_plugins, register_module
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.tools import Tool, ToolResult
from pi_core.types import UserMessage
from tests.interactive.harness import MODEL_2, Harness, make_session

ENTER, ESC, ALT_ENTER, CTRL_C, TAB = "\r", "\x1b", "\x1b\r", "\x03", "\t"


def drive(session_or_factory: Any, pipe: Any, body: Callable[[Harness], Coroutine[Any, Any, None]],
          *, quiet_startup: bool = False) -> Harness:
    async def main() -> Harness:
        h = Harness(session_or_factory, pipe, quiet_startup=quiet_startup)
        await h.start()
        await body(h)
        return h

    return asyncio.run(main())


def gate_tool(gate: list[asyncio.Event]) -> Tool:
    """A tool that runs until the test opens the gate: slow without being timed."""

    async def execute(args: dict[str, Any], ctx: Any) -> ToolResult:
        ctx.update(ToolResult.text("waiting for the gate"))
        waits = [asyncio.ensure_future(gate[0].wait()), asyncio.ensure_future(ctx.signal.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waits:
            waiter.cancel()
        ctx.signal.raise_if_aborted("Operation aborted")
        return ToolResult.text(f"gate passed for {args['job']}")

    schema = {"type": "object", "properties": {"job": {"type": "string"}}, "required": ["job"]}
    return Tool(name="slow", description="Wait for the gate.", parameters=schema, execute=execute)


def test_prompt_streams_answer_and_tool_call_into_scrollback(tmp_path: Path, pipe: Any) -> None:
    (tmp_path / "a.txt").write_text("x")
    provider = FakeProvider(reply("Looking.", tool_calls=[("bash", {"command": "echo hi"})]),
                            reply("Hello **there**"))
    ran: list[str] = []

    def bash(args: dict[str, Any], ctx: Any) -> str:
        ran.append(args["command"])
        return "hi"

    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    session = make_session(provider, tmp_path, [Tool("bash", "Run.", schema, bash)])

    async def body(h: Harness) -> None:
        h.send("say hi" + ENTER)
        await h.wait_for(lambda: "Hello there" in h.screen())
        assert await h.quit() == 0

    h = drive(session, pipe, body)
    screen = h.screen()
    assert ran == ["echo hi"]
    order = [screen.index(t) for t in ("say hi", "Looking.", "$ echo hi", "Hello there")]
    assert order == sorted(order)


def test_enter_while_working_steers_and_escape_aborts_restoring_queue(tmp_path: Path, pipe: Any) -> None:
    gate: list[asyncio.Event] = []
    provider = FakeProvider(reply(tool_calls=[("slow", {"job": "one"})]), reply("steered answer"),
                            reply(tool_calls=[("slow", {"job": "two"})]))
    session = make_session(provider, tmp_path, [gate_tool(gate)])

    async def body(h: Harness) -> None:
        gate.append(asyncio.Event())
        h.send("start" + ENTER)
        await h.wait_for(lambda: h.ui.busy and h.ui.view.tools)
        h.send("mind the tests" + ENTER)
        await h.wait_for(lambda: h.ui.view.steering == ["mind the tests"])
        gate[0].set()
        await h.wait_for(lambda: "steered answer" in h.screen() and not h.ui.busy)
        assert "mind the tests" in provider.contexts[1].model_dump_json()

        gate[0] = asyncio.Event()  # the next run blocks until Escape
        h.send("again" + ENTER)
        await h.wait_for(lambda: h.ui.view.tools)
        h.send("later please" + ALT_ENTER)
        await h.wait_for(lambda: h.ui.view.follow_up == ["later please"])
        h.send("draft")
        await h.wait_for(lambda: h.ui.buffer.text == "draft")
        h.send(ESC)
        await h.wait_for(lambda: not h.ui.busy)
        assert h.ui.buffer.text == "later please\ndraft"
        assert session.agent.follow_up_queue == []
        gate[0].set()
        assert await h.quit() == 0

    h = drive(session, pipe, body)
    assert session.messages[-1].stop_reason == "aborted"
    assert "Operation aborted" in h.screen()


def test_model_picker_switches_model(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("/model" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send("two")
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.query == "two")
        h.send(ENTER)
        await h.wait_for(lambda: "Model: fake/fake-2" in h.screen())
        assert session.model == MODEL_2
        h.send("/model fake-1" + ENTER)
        await h.wait_for(lambda: session.model.id == "fake-1")
        h.send("/mo" + ENTER)  # a partial command runs its first completion
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send(ESC)
        await h.wait_for(lambda: h.ui.panel is None)
        assert session.model.id == "fake-1"
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_ctrl_c_clears_then_twice_quits(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("some text")
        await h.wait_for(lambda: h.ui.buffer.text == "some text")
        h.ui.last_ctrl_c = -10.0
        h.send(CTRL_C)
        await h.wait_for(lambda: h.ui.buffer.text == "")
        assert h.task is not None and not h.task.done()
        h.send(CTRL_C + CTRL_C)
        assert await asyncio.wait_for(h.task, 10) == 0

    drive(session, pipe, body)


def test_history_and_multi_line_editing(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(reply("one"), reply("two")), tmp_path)

    async def body(h: Harness) -> None:
        h.send("line one" + ALT_ENTER + "line two" + ENTER)  # Alt+Enter: a new line when idle
        await h.wait_for(lambda: "one" in h.screen().split("line two")[-1] and not h.ui.busy)
        assert session.messages[0].text() == "line one\nline two"
        h.send("third\x1b[13;2ufourth")  # Shift+Enter (kitty/modifyOtherKeys form) is a new line too
        await h.wait_for(lambda: h.ui.buffer.text == "third\nfourth")
        h.ui.last_ctrl_c = -10.0
        h.send(CTRL_C)
        await h.wait_for(lambda: h.ui.buffer.text == "")
        await h.next_render()
        h.send("\x1b[A")  # Up on an empty editor: the last prompt comes back
        await h.wait_for(lambda: h.ui.buffer.text == "line one\nline two")
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_ctrl_d_deletes_or_quits_on_an_empty_editor(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("ab\x1b[D")  # "ab", cursor left
        h.send("\x04")  # Ctrl+D deletes the character under the cursor
        await h.wait_for(lambda: h.ui.buffer.text == "a")
        h.send("\x7f\x04")  # Backspace, then Ctrl+D on the empty editor quits
        assert h.task is not None
        assert await asyncio.wait_for(h.task, 10) == 0

    drive(session, pipe, body)


def test_shell_commands_are_recorded_for_the_model_or_not(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("!echo sent-out" + ENTER)
        await h.wait_for(lambda: len(session.messages) == 1)
        h.send("!!echo kept-here" + ENTER)
        await h.wait_for(lambda: len(session.messages) == 2)
        assert await h.quit() == 0

    h = drive(session, pipe, body)
    first, second = (m.model_dump() for m in session.messages)
    assert first["command"] == "echo sent-out" and first["output"].strip() == "sent-out"
    assert first["exitCode"] == 0 and first["excludeFromContext"] is False
    assert second["excludeFromContext"] is True
    assert "$ echo sent-out" in h.screen() and "(not sent)" in h.screen()


def test_completion_of_commands_files_and_paths(tmp_path: Path, pipe: Any) -> None:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "deep" / "module_name.py").write_text("")
    (tmp_path / "README.md").write_text("")
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("/hot")
        await h.wait_for(lambda: h.ui.buffer.complete_state and h.ui.buffer.complete_state.completions)
        assert [c.text for c in h.ui.buffer.complete_state.completions] == ["/hotkeys"]
        h.send(CTRL_C)
        h.send("look at @modna")

        def first_file() -> str:
            state = h.ui.buffer.complete_state
            return state.completions[0].text if state and state.completions else ""

        await h.wait_for(lambda: first_file().startswith("@"))
        assert first_file() == "@src/deep/module_name.py"
        h.send(ENTER)  # Enter takes the file and keeps editing
        await h.wait_for(lambda: h.ui.buffer.text == "look at @src/deep/module_name.py")
        h.send(CTRL_C)
        h.send("cat sr" + TAB)
        await h.wait_for(lambda: h.ui.buffer.text == "cat src/")
        h.ui.last_ctrl_c = -10.0
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_tools_thinking_session_and_hotkeys_commands(tmp_path: Path, pipe: Any) -> None:
    def noop(args: dict[str, Any], ctx: Any) -> str:
        return ""

    tools = [Tool(n, f"{n} tool", {"type": "object", "properties": {}}, noop) for n in ("alpha", "beta")]
    session = make_session(FakeProvider(), tmp_path, tools)
    session.set_model(MODEL_2)  # a reasoning model, so thinking levels apply

    async def body(h: Harness) -> None:
        h.send("/tools" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None)
        h.send(" " + ENTER)  # uncheck the first (alpha)
        await h.wait_for(lambda: [t.name for t in session.active_tools] == ["beta"])
        h.send("/thinking high" + ENTER)
        await h.wait_for(lambda: session.agent.state.thinking_level == "high")
        h.send("/session" + ENTER)
        await h.wait_for(lambda: "Cost" in h.screen())
        h.send("/hotkeys" + ENTER)
        await h.wait_for(lambda: "Collapse or expand every tool output" in h.screen())
        assert await h.quit() == 0

    h = drive(session, pipe, body)
    assert "(not saved)" in h.screen() and "0 user, 0 assistant" in h.screen()


def test_plugin_commands_templates_and_skills_appear_as_commands(tmp_path: Path, pipe: Any) -> None:
    seen: list[Any] = []

    async def deploy(args: str, ctx: Any) -> None:
        target = await ctx.ui.select(f"Deploy {args} where?", ["staging", "production"])
        note = await ctx.ui.input("Release note", "one line")
        ctx.ui.set_status("deploy", f"deployed to {target}")
        ctx.ui.notify(f"deploying {args} to {target}: {note}", "warning")
        seen.append((args, target, note))

    plugin = types.SimpleNamespace(pi_commands=hookimpl(lambda: [SlashCommand("deploy", "Deploy the app", deploy)]))
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "deployer")
    provider = FakeProvider(reply("reviewed"))
    template = types.SimpleNamespace(name="review", description="Review code", argument_hint="<file>")
    skill = types.SimpleNamespace(name="pdf", description="Work with PDFs")
    session = make_session(provider, tmp_path, plugins=plugins,
                           resources=types.SimpleNamespace(templates=[template], skills=[skill]),
                           expand_input=lambda text: text.replace("/review", "Please review"))

    async def body(h: Harness) -> None:
        assert h.ui.commands["deploy"].source == "plugin"
        assert h.ui.commands["review"].source == "template"
        assert h.ui.commands["skill:pdf"].source == "skill"
        h.send("/deploy web" + ENTER)
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.title == "Deploy web where?")
        h.send("\x1b[B" + ENTER)  # Down, Enter: production
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.free_text)
        h.send("fixes the login" + ENTER)
        await h.wait_for(lambda: seen)
        assert seen == [("web", "production", "fixes the login")]
        assert h.ui.chrome.statuses == {"deploy": "deployed to production"}
        await h.wait_for(lambda: "deploying web to production: fixes the login" in h.screen())
        h.send("/review main.py" + ENTER)
        await h.wait_for(lambda: "reviewed" in h.screen())
        assert await h.quit() == 0

    drive(session, pipe, body)
    assert isinstance(session.messages[0], UserMessage)
    assert session.messages[0].text() == "Please review main.py"


def test_errors_from_prompt_are_shown_and_the_app_keeps_running(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(reply(error="upstream exploded")), tmp_path)

    async def body(h: Harness) -> None:
        h.send("hi" + ENTER)
        await h.wait_for(lambda: "Error: upstream exploded" in h.screen())
        h.send("/nonexistent-thing" + ENTER)  # not sent: a deliberate difference from Pi (issue 16 item 13)
        await h.wait_for(lambda: "Unknown command: /nonexistent-thing" in h.screen())
        h.send("\x15" + "again" + ENTER)  # the app keeps running: clear the restored text, prompt again
        await h.wait_for(lambda: "FakeProvider: no reply scripted" in h.screen())
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_footer_shows_cwd_model_usage_and_context(tmp_path: Path, pipe: Any) -> None:
    from pi_core.types import Cost, Usage

    answer = reply("ok")
    answer.usage = Usage(input=120, output=30, cache_read=50, cache_write=0, cost=Cost(total=0.0123))
    session = make_session(FakeProvider(answer), tmp_path)

    async def body(h: Harness) -> None:
        h.send("hi" + ENTER)
        await h.wait_for(lambda: "ok" in h.screen() and not h.ui.busy)
        first, second = h.ui.screen.footer_fragments()[0][1].split("\n")
        assert first == str(tmp_path)
        assert second.startswith("↑120 ↓30 R50 $0.012 0.2%/100k")
        assert second.rstrip().endswith("(fake) fake-1")
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_first_submit_waits_for_background_preload(tmp_path: Path, pipe: Any) -> None:
    provider = FakeProvider(reply("loaded answer"))
    released = __import__("threading").Event()
    provider.preload = lambda: released.wait(30)  # type: ignore[attr-defined] # an SDK import that takes a while
    session = make_session(provider, tmp_path)

    async def body(h: Harness) -> None:
        h.send("hello" + ENTER)  # the editor takes input while the provider is still loading
        await h.wait_for(lambda: h.ui.busy and h.ui.view.pending_prompt == "hello")  # shown while waiting
        await asyncio.sleep(0.05)
        assert provider.contexts == []  # the request waits for the load...
        released.set()
        await h.wait_for(lambda: "loaded answer" in h.screen())  # ...and goes out once it is done
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_ctrl_t_and_ctrl_o_toggle_thinking_and_tool_output(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        assert h.ui.view.show_thinking and not h.ui.view.expanded
        h.send("\x14")  # Ctrl+T
        await h.wait_for(lambda: not h.ui.view.show_thinking)
        h.send("\x0f")  # Ctrl+O
        await h.wait_for(lambda: h.ui.view.expanded)
        assert h.ui.hint == "Tool output expanded"
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_ctrl_l_opens_the_model_picker_and_double_escape_the_tree(tmp_path: Path, pipe: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def body(h: Harness) -> None:
        h.send("\x0c")  # Ctrl+L
        await h.wait_for(lambda: h.ui.panel is not None and h.ui.panel.title == "Select model")
        h.send(ESC)
        await h.wait_for(lambda: h.ui.panel is None)
        h.ui.last_escape = float("inf")  # as if Escape was just pressed: this one is the second
        h.send(ESC)  # nothing said yet: /tree says so instead of opening
        await h.wait_for(lambda: "No entries in session" in h.screen())
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_a_failing_background_load_is_reported_and_the_prompt_still_runs(tmp_path: Path, pipe: Any) -> None:
    provider = FakeProvider(reply("still answered"))

    def broken_preload() -> None:
        raise ImportError("No module named 'vendor_sdk'")

    provider.preload = broken_preload  # type: ignore[attr-defined]
    session = make_session(provider, tmp_path)

    async def body(h: Harness) -> None:
        h.send("hello" + ENTER)
        await h.wait_for(lambda: "still answered" in h.screen())
        assert "background failed: ImportError: No module named 'vendor_sdk'" in h.screen()
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_quiet_startup_and_hidden_thinking_settings(tmp_path: Path, pipe: Any) -> None:
    from pi_core.app.settings import Settings

    provider = FakeProvider(reply("visible answer", thinking="secret musing"))
    settings = Settings.from_dict({"hideThinkingBlock": True, "quietStartup": True}, cwd=tmp_path)
    session = make_session(provider, tmp_path, settings=settings)

    async def body(h: Harness) -> None:
        h.send("think" + ENTER)
        await h.wait_for(lambda: "visible answer" in h.screen())
        assert await h.quit() == 0

    screen = drive(session, pipe, body, quiet_startup=settings.quiet_startup).screen()
    assert "visible answer" in screen
    assert "secret musing" not in screen
    assert "pi vtest" not in screen and "ctrl+c clear/quit" not in screen  # no start-up header


def test_external_editor_setting_is_the_ctrl_g_editor(tmp_path: Path, pipe: Any, monkeypatch: Any) -> None:
    from pi_core.app.settings import Settings

    monkeypatch.delenv("VISUAL", raising=False)
    editor = tmp_path / "my editor.sh"
    editor.write_text('#!/bin/sh\nprintf "from the editor" > "$1"\n')
    editor.chmod(0o755)
    settings = Settings.from_dict({"externalEditor": f"'{editor}'"}, cwd=tmp_path)
    session = make_session(FakeProvider(), tmp_path, settings=settings)

    async def body(h: Harness) -> None:
        h.send("draft")
        await h.wait_for(lambda: h.ui.buffer.text == "draft")
        h.send("\x07")  # Ctrl+G
        await h.wait_for(lambda: h.ui.buffer.text.strip() == "from the editor")
        assert await h.quit() == 0

    drive(session, pipe, body)


def test_a_plugins_editor_dialog_edits_lines_and_gives_the_draft_back(tmp_path: Path, pipe: Any) -> None:
    from pi_plugins.interactive.ext_ui import InteractiveUI

    provider = FakeProvider()

    async def body(h: Harness) -> None:
        ui = InteractiveUI(h.ui)
        h.send("my draft")
        await h.wait_for(lambda: h.ui.buffer.text == "my draft")
        editing = asyncio.ensure_future(ui.editor("Notes", "a\nb"))
        await h.wait_for(lambda: h.ui.text_dialog is not None and h.ui.buffer.text == "a\nb")
        h.send("\n/c")  # Ctrl+J adds a line; a "/" is text here, not a command
        await h.wait_for(lambda: h.ui.buffer.text == "a\nb\n/c")
        h.send(ENTER)
        assert await asyncio.wait_for(editing, 10) == "a\nb\n/c"
        assert h.ui.buffer.text == "my draft" and h.ui.text_dialog is None and not h.ui.busy
        cancelled = asyncio.ensure_future(ui.editor("Notes", "x"))
        await h.wait_for(lambda: h.ui.buffer.text == "x")
        h.send(CTRL_C)
        assert await asyncio.wait_for(cancelled, 10) is None
        assert h.ui.buffer.text == "my draft"
        assert provider.contexts == []  # nothing went to the model
        await h.quit()

    drive(make_session(provider, tmp_path), pipe, body)


def test_output_is_printed_without_leaving_raw_mode_and_the_working_row_stops_at_agent_end(
        tmp_path: Path, pipe: Any) -> None:
    """Keys typed while output is printed stay keys (no cooked mode: the tty would echo them and an Enter would be
    a new line); while a plugin's agent_end handler still waits, no working row (Pi's loader stops at agent_end)."""
    release = asyncio.Event()
    waiting = asyncio.Event()

    async def on_event(ctx: Any, event: Any) -> None:
        if event.type == "agent_end":
            waiting.set()
            await release.wait()

    plugin = types.SimpleNamespace(pi_agent_event=hookimpl(on_event))
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "waiter")
    session = make_session(FakeProvider(reply("answered")), tmp_path, plugins=plugins)

    async def body(h: Harness) -> None:
        def no_cooked_mode() -> Any:
            raise AssertionError("the terminal went to cooked mode to print")

        h.ui.app.input.cooked_mode = no_cooked_mode  # type: ignore[method-assign]
        h.send("hello" + ENTER)
        await h.wait_for(lambda: waiting.is_set())
        await h.wait_for(lambda: "answered" in h.screen())
        assert h.ui.busy  # the prompt has not returned: the handler waits
        status = "".join(text for _, text in h.ui.screen.status_fragments())
        assert "Working" not in status and "esc to interrupt" not in status
        release.set()
        await h.wait_for(lambda: not h.ui.busy)
        await h.quit()

    drive(session, pipe, body)
