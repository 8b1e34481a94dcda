"""questionnaire: a tool asking one question (an option list) or several (a tab bar with a Submit tab)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.render import Renderer
from pi_core.tui import Input, matches_key
from pi_core.types import TextContent
from pi_core.ui import PlainTheme
from pi_examples.question import wrapped

OPTION: dict[str, Any] = {"type": "object", "properties": {
    "value": {"type": "string", "description": "The value returned when selected"},
    "label": {"type": "string", "description": "Display label for the option"},
    "description": {"type": "string", "description": "Optional description shown below label"}},
    "required": ["value", "label"]}
QUESTION: dict[str, Any] = {"type": "object", "properties": {
    "id": {"type": "string", "description": "Unique identifier for this question"},
    "label": {"type": "string",
              "description": "Short contextual label for tab bar, e.g. 'Scope', 'Priority' (defaults to Q1, Q2)"},
    "prompt": {"type": "string", "description": "The full question text to display"},
    "options": {"type": "array", "items": OPTION, "description": "Available options to choose from"},
    "allowOther": {"type": "boolean", "description": "Allow 'Type something' option (default: true)"}},
    "required": ["id", "prompt", "options"]}
PARAMETERS: dict[str, Any] = {"type": "object", "properties": {
    "questions": {"type": "array", "items": QUESTION, "description": "Questions to ask the user"}},
    "required": ["questions"]}
OTHER = "Type something."


@dataclass
class Question:
    id: str
    label: str
    prompt: str
    options: list[dict[str, Any]]
    allowOther: bool  # Pi's field names: they reach the tool details as they are


@dataclass
class Answer:
    id: str
    value: str
    label: str
    wasCustom: bool
    index: int | None = None


@dataclass
class Outcome:
    questions: list[Question]
    answers: list[Answer] = field(default_factory=list)
    cancelled: bool = True


class QuestionnaireComponent:
    """Up/Down pick an option, Enter answers (or opens the answer line); with several questions Tab/←→ move
    between the question tabs and the Submit tab. Escape cancels (or leaves the answer line)."""

    def __init__(self, questions: list[Question], theme: Any, tui: Any, done: Callable[[Outcome], None]) -> None:
        self.questions, self.theme, self.tui, self.done = questions, theme, tui, done
        self.multi = len(questions) > 1
        self.tab = self.index = 0
        self.editing: str | None = None  # id of the question the answer line is for
        self.answers: dict[str, Answer] = {}
        self.editor = Input(prompt="")
        self.editor.on_submit = self._typed

    @property
    def focused(self) -> bool:
        return self.editor.focused

    @focused.setter
    def focused(self, value: bool) -> None:
        self.editor.focused = value

    def _options(self) -> list[dict[str, Any]]:
        if self.tab >= len(self.questions):
            return []
        q = self.questions[self.tab]
        return [*q.options, *([{"value": "__other__", "label": OTHER, "other": True}] if q.allowOther else [])]

    def _all_answered(self) -> bool:
        return all(q.id in self.answers for q in self.questions)

    def _submit(self, cancelled: bool) -> None:
        self.done(Outcome(self.questions, list(self.answers.values()), cancelled))

    def _advance(self) -> None:
        if not self.multi:
            self._submit(False)
            return
        self.tab, self.index = min(self.tab + 1, len(self.questions)), 0

    def _typed(self, value: str) -> None:
        if self.editing is None:
            return
        text = value.strip() or "(no response)"
        self.answers[self.editing] = Answer(self.editing, text, text, True)
        self.editing = None
        self.editor.set_value("")
        self._advance()

    def _refresh(self) -> None:
        request = getattr(self.tui, "request_render", None)
        if callable(request):
            request()

    def invalidate(self) -> None:
        """Drawn afresh each time."""

    def handle_input(self, data: str) -> None:
        self._key(data)
        self._refresh()

    def _key(self, data: str) -> None:
        if self.editing is not None:
            if matches_key(data, "escape"):
                self.editing = None
                self.editor.set_value("")
            else:
                self.editor.handle_input(data)
            return
        tabs = len(self.questions) + 1
        if self.multi and (matches_key(data, "tab") or matches_key(data, "right")):
            self.tab, self.index = (self.tab + 1) % tabs, 0
        elif self.multi and (matches_key(data, "shift+tab") or matches_key(data, "left")):
            self.tab, self.index = (self.tab - 1) % tabs, 0
        elif self.tab == len(self.questions):
            if matches_key(data, "enter") and self._all_answered():
                self._submit(False)
            elif matches_key(data, "escape"):
                self._submit(True)
        elif matches_key(data, "up"):
            self.index = max(0, self.index - 1)
        elif matches_key(data, "down"):
            self.index = min(len(self._options()) - 1, self.index + 1)
        elif matches_key(data, "enter"):
            q, chosen = self.questions[self.tab], self._options()[self.index]
            if chosen.get("other"):
                self.editing = q.id
                self.editor.set_value("")
            else:
                self.answers[q.id] = Answer(q.id, str(chosen["value"]), str(chosen["label"]), False, self.index + 1)
                self._advance()
        elif matches_key(data, "escape"):
            self._submit(True)

    def _tab_bar(self) -> str:
        th, parts = self.theme, ["← "]
        for i, q in enumerate(self.questions):
            answered = q.id in self.answers
            text = f" {'■' if answered else '□'} {q.label} "
            styled = (th.bg("selectedBg", th.fg("text", text)) if i == self.tab
                      else th.fg("success" if answered else "muted", text))
            parts.append(f"{styled} ")
        submit = " ✓ Submit "
        parts.append((th.bg("selectedBg", th.fg("text", submit)) if self.tab == len(self.questions)
                      else th.fg("success" if self._all_answered() else "dim", submit)) + " →")
        return "".join(parts)

    def _option_lines(self, width: int) -> list[str]:
        th, lines = self.theme, []
        for i, option in enumerate(self._options()):
            selected, other = i == self.index, bool(option.get("other"))
            editing = other and self.editing is not None
            label = f"{i + 1}. {option['label']}{' ✎' if editing else ''}"
            prefix = th.fg("accent", "> ") if selected else "  "
            lines += wrapped(prefix, th.fg("accent" if selected or editing else "text", label), width)
            if option.get("description"):
                lines += wrapped("     ", th.fg("muted", str(option["description"])), width)
        return lines

    def _summary(self, width: int) -> list[str]:
        th = self.theme
        lines = [*wrapped(" ", th.fg("accent", th.bold("Ready to submit")), width), ""]
        for q in self.questions:
            if (a := self.answers.get(q.id)) is not None:
                text = th.fg("muted", f"{q.label}: ") + th.fg("text", ("(wrote) " if a.wasCustom else "") + a.label)
                lines += wrapped(" ", text, width)
        lines.append("")
        if self._all_answered():
            return lines + wrapped(" ", th.fg("success", "Press Enter to submit"), width)
        missing = ", ".join(q.label for q in self.questions if q.id not in self.answers)
        return lines + wrapped(" ", th.fg("warning", f"Unanswered: {missing}"), width)

    def render(self, width: int) -> list[str]:
        th, width = self.theme, max(1, width)
        lines = [th.fg("accent", "─" * width)]
        if self.multi:
            lines += [*wrapped(" ", self._tab_bar(), width), ""]
        if self.tab == len(self.questions) and self.editing is None:
            lines += self._summary(width)
        else:
            q = self.questions[self.tab]
            lines += [*wrapped(" ", th.fg("text", q.prompt), width), "", *self._option_lines(width)]
            if self.editing is not None:
                lines += ["", *wrapped(" ", th.fg("muted", "Your answer:"), width)]
                lines += [" " + line for line in self.editor.render(max(1, width - 2))]
                lines += ["", *wrapped(" ", th.fg("dim", "Enter to submit • Esc to cancel"), width)]
        lines.append("")
        if self.editing is None:
            help_text = ("Tab/←→ navigate • ↑↓ select • Enter confirm • Esc cancel" if self.multi
                         else "↑↓ navigate • Enter select • Esc cancel")
            lines += wrapped(" ", th.fg("dim", help_text), width)
        lines.append(th.fg("accent", "─" * width))
        return lines


def _details(outcome: Outcome) -> dict[str, Any]:
    details = asdict(outcome)
    for answer in details["answers"]:
        if answer["index"] is None:
            del answer["index"]
    return details


def _error(message: str) -> ToolResult:
    return ToolResult(content=[TextContent(text=message)], details={"questions": [], "answers": [], "cancelled": True})


def _normalise(raw: list[dict[str, Any]]) -> list[Question]:
    return [Question(id=str(q.get("id", "")), label=str(q.get("label") or f"Q{i + 1}"),
                     prompt=str(q.get("prompt", "")), options=list(q.get("options") or []),
                     allowOther=q.get("allowOther") is not False) for i, q in enumerate(raw)]


async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if ctx.pi is None or ctx.pi.mode != "interactive":
        return _error("Error: UI not available (running in non-interactive mode)")
    raw = list(args.get("questions") or [])
    if not raw:
        return _error("Error: No questions provided")
    questions = _normalise(raw)
    outcome = await ctx.pi.ui.custom(lambda tui, theme, keybindings, done: QuestionnaireComponent(
        questions, theme, tui, done))
    if not isinstance(outcome, Outcome) or outcome.cancelled:
        outcome = outcome if isinstance(outcome, Outcome) else Outcome(questions)
        return ToolResult(content=[TextContent(text="User cancelled the questionnaire")], details=_details(outcome))
    labels = {q.id: q.label for q in questions}
    text = "\n".join(f"{labels.get(a.id) or a.id}: user wrote: {a.label}" if a.wasCustom
                     else f"{labels.get(a.id) or a.id}: user selected: {a.index}. {a.label}" for a in outcome.answers)
    return ToolResult(content=[TextContent(text=text)], details=_details(outcome))


TOOL = Tool(name="questionnaire", label="Questionnaire",
            description="Ask the user one or more questions. Use for clarifying requirements, getting preferences, "
                        "or confirming decisions. For single questions, shows a simple option list. For multiple "
                        "questions, shows a tab-based interface.",
            parameters=PARAMETERS, execute=execute, execution_mode="sequential")


def render_call(args: dict[str, Any], th: Any) -> str:
    qs = [q for q in args.get("questions") or [] if isinstance(q, dict)] if isinstance(args.get("questions"), list) \
        else []
    labels = ", ".join(str(q.get("label") or q.get("id", "")) for q in qs)
    text = th.fg("toolTitle", th.bold("questionnaire ")) + th.fg("muted", f"{len(qs)} question{'' if len(qs) == 1 else 's'}")
    return text + (th.fg("dim", f" ({labels})") if labels else "")


def render_result(result: Any, is_error: bool, expanded: bool, th: Any) -> str:
    details = getattr(result, "details", None)
    if not isinstance(details, dict):
        content = getattr(result, "content", None) or []
        return str(getattr(content[0], "text", "")) if content else ""
    if details.get("cancelled"):
        return th.fg("warning", "Cancelled")
    lines = []
    for a in details.get("answers") or []:
        head = th.fg("success", "✓ ") + th.fg("accent", str(a.get("id", ""))) + ": "
        if a.get("wasCustom"):
            lines.append(head + th.fg("muted", "(wrote) ") + str(a.get("label", "")))
        else:
            lines.append(head + (f"{a['index']}. {a.get('label', '')}" if a.get("index") else str(a.get("label", ""))))
    return "\n".join(lines)


class QuestionnaireTool:
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
        return [Renderer(tool_name="questionnaire", call=self.render_call, result=self.render_result)]
