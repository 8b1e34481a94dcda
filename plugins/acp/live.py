"""One ACP session while the server runs: the pi session, its control, and what the client is told of it."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from acp import RequestError, helpers, schema
from pi_plugins.acp.client_ops import ClientSide, client_tools, swap_in
from pi_plugins.acp.ui import AcpUI, question_id
from pi_plugins.acp.updates import EventTranslator, replay

from pi_core.control.session_control import SessionControl
from pi_core.errors import PiError

if TYPE_CHECKING:
    from acp.interfaces import Client

    from pi_core.session import AgentSession
    from pi_core.types import ImageContent

DEFAULT_MODE = "default"
PLAN_MODE = "plan"
REFUSAL_WORDS = ("refusal", "refused", "content_filter", "content filter", "safety", "sensitive")


class _Cancelled(Exception):
    """A cancel arrived before the run started."""


async def ask_client(client: Client, session_id: str, call_id: str | None, title: str,
                     choices: list[tuple[str, str, str]]) -> str | None:
    """Ask the editor through ``session/request_permission``: on the tool call ``call_id``, or on a question
    shown as a tool call of its own. The chosen option's id; None when dismissed or the client is gone."""
    own = call_id is None
    call_id = call_id or question_id()

    async def send(update: Any) -> None:
        with contextlib.suppress(ConnectionError):
            await client.session_update(session_id=session_id, update=update)

    if own:
        await send(helpers.start_tool_call(call_id, title.splitlines()[0] if title else "Question", kind="other",
                                           status="pending", content=[helpers.tool_content(helpers.text_block(title))]))
    options = [schema.PermissionOption(option_id=option_id, name=name, kind=kind)  # type: ignore[arg-type]
               for option_id, name, kind in choices]
    tool_call = schema.ToolCallUpdate(tool_call_id=call_id, content=[
        helpers.tool_content(helpers.text_block(title))] if not own else None)
    try:
        response = await client.request_permission(session_id=session_id, tool_call=tool_call, options=options)
    except (ConnectionError, RequestError):
        response = None  # the client is gone, or refused to ask: nobody allowed it
    outcome = response.outcome if response is not None else None
    chosen = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", None) == "selected" else None
    if own:
        await send(helpers.update_tool_call(call_id, status="completed" if chosen else "failed"))
    return chosen


class LiveSession:
    def __init__(self, session: AgentSession, client: Client, caps: schema.ClientCapabilities | None,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.session = session
        self.id = str(session.store.session_id)
        self.client = client
        self.control = SessionControl(session)
        self.lock = asyncio.Lock()  # one prompt at a time; a second waits its turn
        self.mode = DEFAULT_MODE
        self.cancelled = False  # session/cancel during the current prompt
        self._asking: set[asyncio.Future[Any]] = set()  # permission requests the client has not answered
        fs = caps.fs if caps is not None and caps.fs is not None else None
        self.side = ClientSide(client, self.id, loop, read=bool(fs and fs.read_text_file),
                               write=bool(fs and fs.write_text_file),
                               terminal=bool(caps is not None and caps.terminal))
        self.translator = EventTranslator(self.send, str(session.cwd), self.side.snapshot)
        self.side.on_terminal = self.translator.terminal_started
        self.ui = AcpUI(self.ask, loop, notify=self.notice)
        session.set_ui(self.ui, "acp")
        self._unsubscribe = session.subscribe(self.translator.on_event)
        swap_in(session, client_tools(self.side, self._shell_argv))

    def _shell_argv(self, command: str) -> list[str]:
        from pi_core.toolkit.procs import resolve_shell

        return resolve_shell(self.session.agent.tool_settings.shell_path).argv(command)

    # --- to the client -------------------------------------------------------------------------------

    async def send(self, update: Any) -> None:
        try:
            await self.client.session_update(session_id=self.id, update=update)
        except ConnectionError:
            pass  # the client is gone; the turn goes on and is saved

    def notice(self, text: str) -> None:
        if not self.session.is_streaming:
            asyncio.ensure_future(self.send(helpers.update_agent_message_text(text + "\n")))

    async def ask(self, call_id: str | None, title: str, choices: list[tuple[str, str, str]]) -> str | None:
        """``session/request_permission`` on ``call_id``'s tool call (or a question of its own); the chosen id.
        ``session/cancel`` withdraws it."""
        request = asyncio.ensure_future(ask_client(self.client, self.id, call_id, title, choices))
        self._asking.add(request)
        try:
            return await request
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            return None  # session/cancel withdrew the question: the call does not run
        finally:
            self._asking.discard(request)

    async def announce(self) -> None:
        """What a client shows beside the chat: the slash commands, prompt templates and skills."""
        commands = [schema.AvailableCommand(name=info.name, description=info.description or info.name,
                                            input=schema.AvailableCommandInput(
                                                root=schema.UnstructuredCommandInput(hint="arguments")))
                    for info in self.session.command_infos()]
        await self.send(schema.AvailableCommandsUpdate(session_update="available_commands_update",
                                                       available_commands=commands))

    async def replay_history(self) -> None:
        await replay(list(self.session.messages), self.send, str(self.session.cwd))

    # --- modes and options -----------------------------------------------------------------------------

    def modes(self) -> schema.SessionModeState:
        available = [schema.SessionMode(id=DEFAULT_MODE, name="Default", description="pi with all its tools")]
        if PLAN_MODE in self.session.commands:
            available.append(schema.SessionMode(id=PLAN_MODE, name="Plan",
                                                description="Read-only exploration that ends in a plan (/plan)"))
        return schema.SessionModeState(current_mode_id=self.mode, available_modes=available)

    async def set_mode(self, mode_id: str) -> None:
        known = [m.id for m in self.modes().available_modes]
        if mode_id not in known:
            raise PiError(f'Unknown mode "{mode_id}" (available: {", ".join(known)})')
        if mode_id != self.mode:
            await self.session.run_command(PLAN_MODE, "")  # /plan toggles plan mode on and off
            await self._mode_toggled()

    async def _mode_toggled(self) -> None:
        self.mode = PLAN_MODE if self.mode == DEFAULT_MODE else DEFAULT_MODE
        await self.send(helpers.update_current_mode(self.mode))

    def config_options(self) -> list[Any]:
        options: list[Any] = []
        models = self.control.available_models()
        current = self.session.model
        if models:
            value = f"{current.provider}/{current.id}" if current is not None else ""
            choices = [schema.SessionConfigSelectOption(value=f"{m.provider}/{m.id}", name=m.name or m.id,
                                                        description=m.provider) for m in models]
            if value not in {c.value for c in choices}:
                value = choices[0].value
            options.append(schema.SessionConfigOptionSelect(id="model", name="Model", category="model",
                                                            type="select", current_value=value, options=choices))
        levels = self.control.available_thinking_levels()
        options.append(schema.SessionConfigOptionSelect(
            id="thinking", name="Thinking", category="thought_level", type="select",
            current_value=self.session.thinking_level if self.session.thinking_level in levels else levels[0],
            options=[schema.SessionConfigSelectOption(value=level, name=level) for level in levels]))
        return options

    def set_option(self, config_id: str, value: Any) -> None:
        if config_id == "model":
            provider, _, model_id = str(value).partition("/")
            self.control.set_model(provider, model_id)
        elif config_id == "thinking":
            self.control.set_thinking_level(str(value))
        else:
            raise PiError(f'Unknown option "{config_id}" (available: model, thinking)')

    # --- turns -----------------------------------------------------------------------------------------

    async def run_prompt(self, text: str, images: list[ImageContent]) -> schema.StopReason:
        """One ``session/prompt``: the run with its updates, then why it stopped. A cancel that arrives before
        the run starts stops it there (nothing is sent to the model)."""
        async with self.lock:
            self.cancelled = False

            def starting() -> None:
                if self.cancelled:
                    raise _Cancelled()

            self.session.release_held_back()
            try:
                disposition = await self.session.prompt(text, images or None, source="acp", prepared=starting)
            except _Cancelled:
                return "cancelled"
            if disposition == "handled" and text.strip().split(" ")[0] == f"/{PLAN_MODE}":
                await self._mode_toggled()
            if self.cancelled:
                return "cancelled"
            return self.stop_reason(disposition)

    async def settled(self) -> None:
        """Once the prompt running now (if any) has ended and been saved."""
        async with self.lock:
            return

    def cancel(self) -> None:
        """``session/cancel``: stop the turn as Escape does (its partial reply and tool results are saved),
        withdraw open permission questions, stop a running ``bash``."""
        self.cancelled = True
        for request in list(self._asking):
            request.cancel()
        self.control.bash.abort()
        self.session.request_abort()

    def stop_reason(self, disposition: str) -> schema.StopReason:
        if disposition != "started":
            return "end_turn"
        last = self.session.last_assistant()
        if last is None:
            return "end_turn"
        if last.stop_reason == "aborted":
            return "cancelled"
        if last.stop_reason == "length":
            return "max_tokens"
        if last.stop_reason == "error":
            message = last.error_message or "The model request failed"
            if any(word in message.lower() for word in REFUSAL_WORDS):
                return "refusal"
            raise PiError(message)
        return "end_turn"

    async def close(self) -> None:
        self.ui.close()
        self.control.bash.abort()
        if not self.session.is_idle:
            await self.session.abort()
        await self.session.shutdown("quit")
        self._unsubscribe()
