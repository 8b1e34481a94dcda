"""structured_output: a final structured-answer tool whose result ends the run without another model turn."""

from __future__ import annotations

from typing import Any

from pi_core import Tool, ToolContext, ToolResult, hookimpl
from pi_core.render import Renderer
from pi_core.types import TextContent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "headline": {"type": "string", "description": "Short title for the result"},
        "summary": {"type": "string", "description": "One-paragraph summary"},
        "actionItems": {"type": "array", "items": {"type": "string"},
                        "description": "Concrete next steps or key bullets"},
    },
    "required": ["headline", "summary", "actionItems"],
}


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    details = {"headline": args["headline"], "summary": args["summary"], "actionItems": list(args["actionItems"])}
    return ToolResult(content=[TextContent(text=f"Saved structured output: {args['headline']}")], details=details,
                      terminate=True)


TOOL = Tool(
    name="structured_output",
    label="Structured Output",
    description="Return a final structured answer. Use this as your last action when the user asks for "
                "structured output or a machine-readable summary.",
    parameters=PARAMETERS,
    execute=execute,
    prompt_snippet="Emit a final structured answer as a terminating tool result",
    prompt_guidelines=[
        ("Use structured_output as your final action when the user asks for structured output, JSON-like output, "
        "or a machine-readable summary."),
        "After calling structured_output, do not emit another assistant response in the same turn.",
    ],
)


def render_call(args: dict[str, Any]) -> Any:
    from rich.text import Text

    return Text.assemble(("structured_output", "bold"), " ", (str(args.get("headline") or "…"), "dim"))


def render_result(result: Any, is_error: bool, expanded: bool) -> Any:
    """Headline in bold, the summary, then the numbered action items; the plain text when details are missing."""
    from rich.text import Text

    details = result.get("details") if isinstance(result, dict) else getattr(result, "details", None)
    if not isinstance(details, dict) or is_error:
        content = result.get("content") if isinstance(result, dict) else getattr(result, "content", [])
        first = (content or [None])[0]
        text = first.get("text") if isinstance(first, dict) else getattr(first, "text", "")
        return Text(str(text or ""))
    out = Text(str(details.get("headline", "")), style="bold")
    out.append("\n" + str(details.get("summary", "")) + "\n")
    for number, item in enumerate(details.get("actionItems") or [], 1):
        out.append(f"\n{number}. {item}", style="dim")
    return out


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


@hookimpl
def pi_renderers() -> list[Renderer]:
    return [Renderer("structured_output", render_call, render_result)]
