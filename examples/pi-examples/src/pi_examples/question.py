"""question: a tool that asks the user one question with options, plus a "Type something." free answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.render import Renderer
from pi_core.tui import Input, matches_key, visible_width, wrap_ansi
from pi_core.types import TextContent
from pi_core.ui import PlainTheme

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "The question to ask the user"},
        "options": {
            "type": "array", "description": "Options for the user to choose from",
            "items": {"type": "object", "properties": {
                "label": {"type": "string", "description": "Display label for the option"},
                "description": {"type": "string", "description": "Optional description shown below label"}},
                "required": ["label"]}},
    },
    "required": ["question", "options"],
}
OTHER = "Type something."


@dataclass
class Answer:
    text: str
    custom: bool
    index: int = 0


def wrapped(prefix: str, text: str, width: int) -> list[str]:
    """``text`` wrapped after ``prefix``, continuation lines indented under it."""
    room = width - visible_width(prefix)
    if room < 1:
        return wrap_ansi(prefix + text, width)
    return [(prefix if i == 0 else " " * visible_width(prefix)) + line for i, line in enumerate(wrap_ansi(text, room))]


class QuestionComponent:
    """Numbered options and "Type something."; Up/Down move, Enter picks (or opens the answer line),
    Escape cancels (or leaves the answer line)."""

    def __init__(self, question: str, options: list[dict[str, Any]], theme: Any, tui: Any,
                 done: Callable[[Answer | None], None]) -> None:
        self.question, self.theme, self.tui, self.done = question, theme, tui, done
        self.options = [*options, {"label": OTHER, "other": True}]
        self.index = 0
        self.editing = False
        self.editor = Input(prompt="")
        self.editor.on_submit = self._submitted

    @property
    def focused(self) -> bool:
        return self.editor.focused

    @focused.setter
    def focused(self, value: bool) -> None:
        self.editor.focused = value

    def _submitted(self, value: str) -> None:
        if value.strip():
            self.done(Answer(value.strip(), True))
        else:
            self.editing = False
            self.editor.set_value("")

    def _refresh(self) -> None:
        request = getattr(self.tui, "request_render", None)
        if callable(request):
            request()

    def invalidate(self) -> None:
        """Drawn afresh each time."""

    def handle_input(self, data: str) -> None:
        if self.editing:
            if matches_key(data, "escape"):
                self.editing = False
                self.editor.set_value("")
            else:
                self.editor.handle_input(data)
        elif matches_key(data, "up"):
            self.index = max(0, self.index - 1)
        elif matches_key(data, "down"):
            self.index = min(len(self.options) - 1, self.index + 1)
        elif matches_key(data, "enter"):
            chosen = self.options[self.index]
            if chosen.get("other"):
                self.editing = True
            else:
                self.done(Answer(str(chosen["label"]), False, self.index + 1))
                return
        elif matches_key(data, "escape"):
            self.done(None)
            return
        self._refresh()

    def render(self, width: int) -> list[str]:
        th, width = self.theme, max(1, width)
        lines = [th.fg("accent", "─" * width), *wrapped(" ", th.fg("text", self.question), width), ""]
        for i, option in enumerate(self.options):
            selected, other = i == self.index, bool(option.get("other"))
            label = f"{i + 1}. {option['label']}{' ✎' if other and self.editing else ''}"
            color = "accent" if selected or (other and self.editing) else "text"
            lines += wrapped(th.fg("accent", "> ") if selected else "  ", th.fg(color, label), width)
            if option.get("description"):
                lines += wrapped("     ", th.fg("muted", str(option["description"])), width)
        if self.editing:
            lines += ["", *wrapped(" ", th.fg("muted", "Your answer:"), width)]
            lines += [" " + line for line in self.editor.render(max(1, width - 2))]
        lines.append("")
        hint = "Enter to submit • Esc to go back" if self.editing else "↑↓ navigate • Enter to select • Esc to cancel"
        lines += wrapped(" ", th.fg("dim", hint), width)
        lines.append(th.fg("accent", "─" * width))
        return lines


def _result(text: str, question: str, options: list[str], answer: str | None,
            custom: bool | None = None) -> ToolResult:
    details: dict[str, Any] = {"question": question, "options": options, "answer": answer}
    if custom is not None:
        details["wasCustom"] = custom
    return ToolResult(content=[TextContent(text=text)], details=details)


async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    question, options = str(args["question"]), list(args.get("options") or [])
    labels = [str(o.get("label", "")) for o in options]
    if ctx.pi is None or ctx.pi.mode != "interactive":
        return _result("Error: UI not available (running in non-interactive mode)", question, labels, None)
    if not options:
        return _result("Error: No options provided", question, [], None)
    answer = await ctx.pi.ui.custom(lambda tui, theme, keybindings, done: QuestionComponent(
        question, options, theme, tui, done))
    if not isinstance(answer, Answer):
        return _result("User cancelled the selection", question, labels, None)
    if answer.custom:
        return _result(f"User wrote: {answer.text}", question, labels, answer.text, True)
    return _result(f"User selected: {answer.index}. {answer.text}", question, labels, answer.text, False)


TOOL = Tool(name="question", label="Question",
            description="Ask the user a question and let them pick from options. Use when you need user input to proceed.",
            parameters=PARAMETERS, execute=execute, execution_mode="sequential")


def render_call(args: dict[str, Any], th: Any) -> str:
    text = th.fg("toolTitle", th.bold("question ")) + th.fg("muted", str(args.get("question", "")))
    options = args.get("options") if isinstance(args.get("options"), list) else []
    if options:
        numbered = [f"{i + 1}. {label}" for i, label in enumerate([*(o.get("label", "") for o in options), OTHER])]
        text += "\n" + th.fg("dim", f"  Options: {', '.join(numbered)}")
    return text


def render_result(result: Any, is_error: bool, expanded: bool, th: Any) -> str:
    details = getattr(result, "details", None)
    if not isinstance(details, dict):
        content = getattr(result, "content", None) or []
        return str(getattr(content[0], "text", "")) if content else ""
    if details.get("answer") is None:
        return th.fg("warning", "Cancelled")
    answer = str(details["answer"])
    if details.get("wasCustom"):
        return th.fg("success", "✓ ") + th.fg("muted", "(wrote) ") + th.fg("accent", answer)
    options = details.get("options") or []
    shown = f"{options.index(answer) + 1}. {answer}" if answer in options else answer
    return th.fg("success", "✓ ") + th.fg("accent", shown)


class QuestionTool:
    """A class plugin: the theme its renderers draw with is this session's UI's (one instance per session)."""

    def __init__(self) -> None:
        self.theme: Any = PlainTheme()

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return [TOOL]

    @hookimpl
    def pi_session_start(self, ctx: Any) -> None:
        self.theme = ctx.ui.theme

    def render_call(self, args: dict[str, Any]) -> str:
        return render_call(args, self.theme)

    def render_result(self, result: Any, is_error: bool, expanded: bool) -> str:
        return render_result(result, is_error, expanded, self.theme)

    @hookimpl
    def pi_renderers(self) -> list[Renderer]:
        return [Renderer(tool_name="question", call=self.render_call, result=self.render_result)]
