"""A codemode input: the optional ``// @options:`` first line and the JavaScript after it (docs/codemode.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pi_core import ToolError

OPTIONS_PREFIX = "// @options:"
FIELDS = ("max_output_tokens", "timeout_ms")
FIELDS_TEXT = "`max_output_tokens` and `timeout_ms`"
MAX_SAFE_INTEGER = 2**53 - 1
MAX_TIMEOUT_MS = 2147483647


@dataclass(frozen=True)
class Source:
    code: str
    max_output_tokens: int | None = None
    timeout_ms: int | None = None


def _safe_integer(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return float(value).is_integer() and 0 <= value <= MAX_SAFE_INTEGER


def _options(directive: str) -> dict[str, int]:
    if directive == "":
        raise ToolError(f"@options must be a JSON object with supported fields {FIELDS_TEXT}")
    try:
        value = json.loads(directive)
    except ValueError as err:
        raise ToolError(f"@options must be valid JSON with supported fields {FIELDS_TEXT}: {err}") from None
    if not isinstance(value, dict):
        raise ToolError(f"@options must be a JSON object with supported fields {FIELDS_TEXT}")
    for key in value:
        if key not in FIELDS:
            raise ToolError(f"@options only supports {FIELDS_TEXT}; got `{key}`")
    options: dict[str, int] = {}
    if "max_output_tokens" in value:
        if not _safe_integer(value["max_output_tokens"]):
            raise ToolError("@options field `max_output_tokens` must be a non-negative safe integer")
        options["max_output_tokens"] = int(value["max_output_tokens"])
    if "timeout_ms" in value:
        timeout = value["timeout_ms"]
        if not _safe_integer(timeout) or timeout == 0 or timeout > MAX_TIMEOUT_MS:
            raise ToolError("@options field `timeout_ms` must be a positive integer up to 2147483647")
        options["timeout_ms"] = int(timeout)
    return options


def parse_source(text: str) -> Source:
    """Split the options line off; a misplaced or malformed one fails the call before the script runs."""
    if text.strip() == "":
        raise ToolError("Expected JavaScript source text (non-empty). Provide JS only, optionally with a first line "
                        '`// @options: {"max_output_tokens": 1000}`.')
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if line.lstrip().startswith(OPTIONS_PREFIX):
            raise ToolError(f"The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {number}")
    first = lines[0].removesuffix("\r").lstrip()
    if not first.startswith(OPTIONS_PREFIX):
        return Source(text)
    newline = text.find("\n")
    code = "" if newline == -1 else text[newline:]
    if code.strip() == "":
        raise ToolError("The @options line must be followed by JavaScript source on subsequent lines")
    return Source(code, **_options(first[len(OPTIONS_PREFIX):].strip()))
