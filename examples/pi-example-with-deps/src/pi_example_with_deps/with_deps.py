"""with_deps: a ``parse_duration`` tool (human-readable duration to milliseconds) on the pack's own dependency."""

from __future__ import annotations

import re
from typing import Any

from pytimeparse import parse as parse_seconds

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.procs import js_number
from pi_core.types import TextContent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"duration": {"type": "string", "description": "Duration string like '2 days', '1h', '5m'"}},
    "required": ["duration"],
}
NUMBER = r"(-?(?:\d+)?\.?\d+)"
# What pytimeparse reads differently from ms: a bare number (ms: milliseconds), milliseconds and years.
MILLISECONDS = re.compile(rf"{NUMBER} *(?:milliseconds?|msecs?|ms)?", re.IGNORECASE)
YEARS = re.compile(rf"{NUMBER} *(?:years?|yrs?|y)", re.IGNORECASE)
YEAR_MS = 365.25 * 24 * 3600 * 1000


def to_milliseconds(text: str) -> float | None:
    """``text`` in milliseconds, or None when it is not a duration."""
    text = text.strip()
    if not text or len(text) > 100:
        return None
    if match := MILLISECONDS.fullmatch(text):
        return float(match.group(1))
    if match := YEARS.fullmatch(text):
        return float(match.group(1)) * YEAR_MS
    seconds = parse_seconds(text)
    return None if seconds is None else float(seconds) * 1000


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    duration = args["duration"]
    result = to_milliseconds(duration)
    if result is None:
        raise ToolError(f'Invalid duration: "{duration}"')
    return ToolResult(content=[TextContent(text=f"{duration} = {js_number(result)} milliseconds")], details={})


TOOL = Tool(name="parse_duration", label="Parse Duration", parameters=PARAMETERS, execute=execute,
            description="Parse a human-readable duration string (e.g., '2 days', '1h', '5m') to milliseconds")


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
