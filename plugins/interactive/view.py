"""The chat view: turns session events into rich renderables.

Finished parts (a user message, an assistant reply, a tool call with its result) are handed to
``commit`` once, in transcript order, and go to the terminal's scrollback. What is still changing
(the streaming reply, running tools, queued messages) is returned by ``live()`` and redrawn by the app
below the scrollback on every update.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_plugins.interactive import display, style
from pi_plugins.interactive.display import padded
from pi_plugins.interactive.renderers import default_renderer
from rich.padding import Padding  # the UI runs: rich is loaded (app.py)

from pi_core.events import AgentEvent
from pi_core.render import Renderer
from pi_core.tools import ToolResult
from pi_core.types import ImageContent

# Notice styles by meaning -> the theme role that colours them.
NOTICE_ROLES = {"dim": "muted", "green": "success", "red": "error", "yellow": "warning", "cyan": "accent"}


@dataclass
class ToolBlock:
    call_id: str
    name: str
    args: dict[str, Any]
    result: Any = None
    partial: Any = None
    is_error: bool = False
    done: bool = False
    started: bool = False  # tool_execution_start came: the tool runs
    duration_ms: int | None = None  # from tool_execution_end
    state: dict[str, Any] = field(default_factory=dict)  # the renderer's row state (ToolRenderContext.state)


def safe_render(draw: Callable[..., Any], *args: Any) -> Any:
    """Run a renderer; a broken (plugin) renderer shows its error instead of taking the UI down."""
    from rich.text import Text

    try:
        drawn = draw(*args)
    except Exception as err:  # noqa: BLE001 - plugin code; the error is shown, not swallowed
        return Text(f"renderer failed: {type(err).__name__}: {err}", style="red")
    if isinstance(drawn, str):  # plugins colour their text with ANSI codes (theme.fg), not rich markup
        return Text.from_ansi(drawn) if "\x1b" in drawn else Text(drawn)
    if drawn is not None and callable(getattr(drawn, "render", None)) and not hasattr(drawn, "__rich_console__"):
        from pi_plugins.interactive.custom_render import as_renderable

        return as_renderable(drawn, 200)
    return drawn


def as_tool_result(result: Any) -> Any:
    """Renderers get a ToolResult (``.content``, ``.details``); the session's events carry its fields as a dict."""
    if isinstance(result, dict) and "content" in result:
        return ToolResult(content=list(result.get("content") or []), details=result.get("details"),
                          is_error=bool(result.get("isError", result.get("is_error", False))))
    return result


def render_tool(block: ToolBlock, renderer: Renderer, expanded: bool, cwd: str = "") -> Any:
    from rich.console import Group

    from pi_core.resources.ansi_theme import AnsiTheme
    from pi_core.tui.tool_render import ToolRenderContext, draw_call, draw_result

    shown = as_tool_result(block.result if block.done else block.partial)
    context = ToolRenderContext(block.args, block.call_id, cwd,
                                execution_started=block.done or block.started or shown is not None,
                                is_partial=not block.done and shown is not None, expanded=expanded,
                                is_error=block.is_error, state=block.state, duration_ms=block.duration_ms,
                                output_pad=display.settings.output_pad, show_images=display.settings.show_images)
    theme = AnsiTheme(style.current)
    parts = [safe_render(draw_call, renderer, theme, context)]
    if shown is not None and renderer.result is not None:
        body = safe_render(draw_result, renderer, shown, theme, context)
        if body is not None and body != "":
            parts.append(body)
    if block.done:  # a finished tool's images below its output, as Pi draws them for every tool
        parts += [item for image in display.tool_images(shown) for item in ("", image)]
    if renderer.render_shell == "self":  # the renderer draws its own frame
        return Group(*parts)
    role = ("toolErrorBg" if block.is_error else "toolSuccessBg") if block.done else "toolPendingBg"
    return padded(Group(*parts), role)


LIVE_TAIL_CHARS = 6000  # the live area shows the end of a long reply; the whole of it goes to scrollback


def live_tail(text: str, limit: int = LIVE_TAIL_CHARS) -> str:
    """The end of a long streaming reply, cut at a paragraph and never inside a code block.

    Re-rendering all the Markdown on every update would grow with the reply; the live area only has
    room for its last lines anyway.
    """
    if len(text) <= limit:
        return text
    cut = text.find("\n\n", len(text) - limit)
    if cut < 0:
        return text
    if text.count("```", 0, cut) % 2:  # inside a code block: reopen it with its own fence line
        fence = text.rfind("```", 0, cut)
        opening = text[fence:text.find("\n", fence)]
        return opening + "\n" + text[cut:].lstrip("\n")
    return text[cut:].lstrip("\n")


class UserMessage(Padding):
    """A user's message as drawn: fullscreen's prompt jumps stop at it."""


def render_user(text: str, images: Sequence[str] = ()) -> Any:
    """A user message; each image it carries as a line ``[image: red.png]`` (``[image]`` when its name is not
    known: a resumed session, a plugin's message)."""
    from rich.text import Text

    body = Text(text, style=style.fg("userMessageText"))
    for name in images:
        if body.plain:
            body.append("\n")
        body.append(f"[image: {name}]" if name else "[image]", style=style.fg("muted"))
    return UserMessage(body, (0, display.settings.output_pad), style=style.bg("userMessageBg"), expand=True)


def render_notice(text: str, kind: str = "dim") -> Any:
    from rich.text import Text

    return Text(text, style=style.fg(NOTICE_ROLES.get(kind, kind)))


class ChatView:
    def __init__(self, renderers: dict[str, Renderer], commit: Callable[[Any], None], cwd: str = "") -> None:
        self.renderers = renderers
        self.commit = commit
        self.cwd = cwd  # the tool renderers' ToolRenderContext.cwd
        self.show_thinking = True
        self.hidden_thinking_label = "Thinking… (ctrl+t to show)"  # a plugin may set its own (ui.set_hidden_thinking_label)
        self.expanded = False
        self.current: Any = None  # the streaming AssistantMessage
        self.tools: list[ToolBlock] = []  # in the assistant's order; committed from the front
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self.status: str | None = None  # retry / compaction notice shown while it lasts
        self.last_tool: ToolBlock | None = None  # for Ctrl+O re-showing the newest output
        self.shell: tuple[str, str] | None = None  # a running ``!cmd``: (command, output tail)
        self.pending_prompt: str | None = None  # submitted, waiting for the provider to finish loading
        self.image_names: dict[str, str] = {}  # a sent image's data -> its chip's name, till its message shows
        self.custom: Any = None  # CustomRenderers (plugins' message renderers), set by the app

    def renderer_for(self, name: str) -> Renderer:
        return self.renderers.get(name) or default_renderer(name)

    # --- events -----------------------------------------------------------------------------------

    def handle(self, event: AgentEvent) -> None:
        if event.get("parent_tool_call_id"):
            return  # a call made from inside a tool (codemode): its caller's block shows it
        handler = getattr(self, "_on_" + event.type, None)
        if handler is not None:
            handler(event)

    def _on_message_start(self, event: AgentEvent) -> None:
        message = event.message
        role = getattr(message, "role", None)
        if role == "user":
            text = message.text()
            self.pending_prompt = None
            # A queued message was delivered: the runtime sends no queue_update for that.
            for queue in (self.steering, self.follow_up):
                if text in queue:
                    queue.remove(text)
                    break
            content = getattr(message, "content", "")
            images = [self.image_names.pop(block.data, "") for block in content
                      if isinstance(block, ImageContent)] if isinstance(content, list) else []
            self.commit(render_user(text, images))
        elif role == "assistant":
            self.current = message
        elif role == "bashExecution":
            self.commit(self.render_bash_execution(message))
        elif role == "custom" and self.custom is not None and getattr(message, "display", True) is not False:
            self.commit(self.custom.message(message, self.expanded))

    def _on_message_update(self, event: AgentEvent) -> None:
        self.current = event.message

    def _on_message_end(self, event: AgentEvent) -> None:
        message = event.message
        if getattr(message, "role", None) != "assistant":
            return
        self.current = None
        body = self.render_assistant(message, streaming=False)
        if body is not None:
            self.commit(body)
        if message.stop_reason == "aborted":
            self.commit(render_notice("Operation aborted", "yellow"))
        elif message.stop_reason == "error":
            self.commit(render_notice(f"Error: {message.error_message or 'unknown error'}", "red"))
        elif message.stop_reason != "length":  # a cut-off reply's tool calls are not run
            for call in message.tool_calls():
                if not any(b.call_id == call.id for b in self.tools):
                    self.tools.append(ToolBlock(call.id, call.name, dict(call.arguments)))

    def _block(self, event: AgentEvent) -> ToolBlock:
        for block in self.tools:
            if block.call_id == event.tool_call_id:
                return block
        block = ToolBlock(event.tool_call_id, event.tool_name, dict(event.get("args") or {}))
        self.tools.append(block)
        return block

    def _on_tool_execution_start(self, event: AgentEvent) -> None:
        self._block(event).started = True

    def _on_tool_execution_update(self, event: AgentEvent) -> None:
        self._block(event).partial = event.get("partial_result")

    def _on_tool_execution_end(self, event: AgentEvent) -> None:
        block = self._block(event)
        block.result, block.is_error, block.done = event.get("result"), bool(event.get("is_error")), True
        block.duration_ms = event.get("duration_ms")
        self._flush_tools()

    def _flush_tools(self, force: bool = False) -> None:
        while self.tools and (self.tools[0].done or force):
            block = self.tools.pop(0)
            self.last_tool = block
            self.commit(render_tool(block, self.renderer_for(block.name), self.expanded, self.cwd))

    def _on_agent_end(self, event: AgentEvent) -> None:
        self._flush_tools(force=True)
        if self.current is not None:
            body = self.render_assistant(self.current, streaming=False)
            if body is not None:
                self.commit(body)
            self.current = None
        self.status = None

    def _on_queue_update(self, event: AgentEvent) -> None:
        self.steering = list(event.get("steering") or [])
        self.follow_up = list(event.get("follow_up") or [])

    def _on_auto_retry_start(self, event: AgentEvent) -> None:
        attempt, most = event.get("attempt", "?"), event.get("max_attempts", "?")
        delay = (event.get("delay_ms") or 0) / 1000
        reason = event.get("error_message") or ""
        self.status = f"Retrying ({attempt}/{most}) in {delay:.0f}s… {reason}".rstrip()

    def _on_auto_retry_end(self, event: AgentEvent) -> None:
        self.status = None
        if event.get("success") is False:
            self.commit(render_notice(f"Retry failed: {event.get('final_error') or 'gave up'}", "red"))

    def _on_compaction_start(self, event: AgentEvent) -> None:
        self.status = "Compacting context…"

    def _on_compaction_end(self, event: AgentEvent) -> None:
        self.status = None
        if event.get("error_message"):
            self.commit(render_notice(str(event.get("error_message")), "red"))
        elif event.get("aborted"):
            self.commit(render_notice("Compaction cancelled", "yellow"))
        elif event.get("result") is not None:
            before = getattr(event.get("result"), "tokens_before", None)
            self.commit(render_notice(f"Context compacted ({before:,} tokens before)" if before
                                      else "Context compacted", "green"))

    def _on_extension_error(self, event: AgentEvent) -> None:
        where = event.get("extension_path") or "a plugin"
        self.commit(render_notice(f"Plugin error ({where}, {event.get('event')}): {event.get('error')}", "red"))

    # --- drawing ----------------------------------------------------------------------------------

    def render_assistant(self, message: Any, *, streaming: bool) -> Any:
        """Thinking (dim, or one line when hidden) and Markdown text; tool calls only while streaming."""
        from rich.console import Group
        from rich.text import Text

        parts: list[Any] = []
        for block in message.content:
            if block.type == "thinking" and block.thinking.strip():
                thinking_style = f"italic {style.fg('thinkingText')}"
                shown = block.thinking.strip() if self.show_thinking else self.hidden_thinking_label
                parts.append(padded(Text(shown, style=thinking_style)))
            elif block.type == "text" and block.text.strip():
                text = live_tail(block.text) if streaming else block.text
                parts.append(padded(style.markdown(text, reply=True, streaming=streaming)))
            elif block.type == "toolCall" and streaming:
                renderer = self.renderer_for(block.name)
                parts.append(render_tool(ToolBlock(block.id, block.name, dict(block.arguments)), renderer,
                                         self.expanded, self.cwd))
        return Group(*parts) if parts else None

    def render_bash_execution(self, message: Any) -> Any:
        from rich.console import Group
        from rich.text import Text

        data = message.model_dump() if hasattr(message, "model_dump") else dict(message)
        title = Text("$ " + str(data.get("command", "")), style=f"bold {style.fg('bashMode')}")
        if data.get("exclude_from_context") or data.get("excludeFromContext"):
            title.append("  (not sent)", style=style.fg("muted"))
        output = Text(str(data.get("output") or "").rstrip("\n"), style=style.fg("toolOutput"))
        code = data.get("exit_code", data.get("exitCode"))
        parts: list[Any] = [title, output]
        if code not in (0, None):
            parts.append(Text(f"exit code {code}", style=style.fg("error")))
        return padded(Group(*parts), "toolSuccessBg" if code in (0, None) else "toolErrorBg")

    def has_live(self) -> bool:
        return bool(self.current is not None or self.tools or any(self.steering) or any(self.follow_up) or self.status
                    or self.shell or self.pending_prompt)

    def live(self) -> Any:
        """Everything still in motion, or None when nothing is."""
        from rich.console import Group
        from rich.text import Text

        parts: list[Any] = []
        if self.pending_prompt is not None:
            parts.append(render_user(self.pending_prompt))
        if self.current is not None:
            body = self.render_assistant(self.current, streaming=True)
            if body is not None:
                parts.append(body)
        for block in self.tools:
            parts.append(render_tool(block, self.renderer_for(block.name), self.expanded, self.cwd))
        for text in filter(None, self.steering):  # a queued custom message has no text: Pi shows no row for it
            parts.append(Text(f"Steering: {text}", style=style.fg("muted")))
        for text in filter(None, self.follow_up):
            parts.append(Text(f"Follow-up: {text}", style=style.fg("muted")))
        if self.shell is not None:
            from pi_plugins.interactive.renderers import bash_result

            command, tail = self.shell
            parts.append(Text("$ " + command, style=f"bold {style.fg('bashMode')}"))
            parts.append(bash_result({"content": [{"type": "text", "text": tail}]}, False, False))
        if self.status:
            parts.append(Text(self.status, style=style.fg("warning")))
        return Group(*parts) if parts else None
