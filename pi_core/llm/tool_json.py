"""Streamed tool-call arguments: jiter's partial mode under Pi's rules, docs/providers.md#streamed-tool-arguments.

- ``parse_partial_json(text) -> dict``: what providers store in ``ToolCall.arguments`` on every delta and at
  block end. Always a dict: anything that is not an object (or cannot be parsed) gives ``{}``.
- ``parse_streaming_json(text) -> Any``: Pi's cascade (empty → {}, the text, the repaired text, {}); may return
  a non-object such as a string literal.
- ``repair_json(text)``: escape raw control characters inside strings and double a backslash that starts an
  invalid escape, the two mistakes models make most; lone UTF-16 surrogates become U+FFFD.

jiter parses. A text that is cut off (jiter's strict parse ends in "EOF while parsing") is parsed again in
jiter's partial mode, which closes whatever is open: ``{"path": "src/ma`` gives ``{"path": "src/ma"}``, a key
without a value yet is left out, an escape cut in half waits for its end. Two of Pi's rules jiter does not know
are added here: a literal cut mid-word (``tr``, ``fal``, ``nu``) shows its value, and a number cut after its
point or exponent (``1.``, ``2e-``) shows the digits read. A text that is malformed before its end (trailing
text, a missing comma) is not read leniently: it gives what its repair gives, else ``{}``.
"""

from __future__ import annotations

import re
from typing import Any

from pi_core.types import encodable

_EOF = "EOF while parsing"
_LITERALS = ("true", "false", "null")
# A literal or number cut where jiter drops it, right after the ``:``, ``,`` or ``[`` that opened its place.
_CUT_SCALAR = re.compile(r"[\[:,]\s*(t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?|-?\d+(?:\.|(?:\.\d+)?[eE][+-]?))\Z")
_TAIL = 80  # how far back from the end a cut scalar is looked for
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)  # closed, or cut off at the end
_STRING_PART = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a surrogate pair: kept
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\(?:u[0-9a-fA-F]{0,3})?)?\Z"  # a pair cut in half: jiter waits for it
    r"|(?P<lone>\\u[dD][89a-fA-F][0-9a-fA-F]{2})"
    r'|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})'  # a valid escape
    r"|\\(?:u[0-9a-fA-F]{0,3})?\Z"  # an escape cut off: jiter waits for it
    r"|(?P<bad>\\)"
    r"|(?P<control>[\x00-\x1f])"
)
_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def parse_partial_json(text: str | None) -> dict[str, Any]:  # open: the model's tool arguments, JSON
    """Parse (possibly incomplete) tool arguments into a dict; never raises, never returns a non-dict."""
    value = parse_streaming_json(text)
    return value if isinstance(value, dict) else {}


def parse_streaming_json(text: str | None) -> Any:  # open: the model's partial tool arguments, JSON
    """Pi's ``parseStreamingJson``: the text if it parses (whole or cut off), else its repair, else ``{}``."""
    if not text or not text.strip():
        return {}
    try:
        return _parse(text)
    except ValueError:
        pass
    repaired = repair_json(text)
    if repaired != text:
        try:
            return _parse(repaired)
        except ValueError:
            pass
    return {}


def repair_json(text: str) -> str:
    """Escape raw control characters in strings, double backslashes that begin invalid escapes and replace
    lone surrogates (raw or escaped) by U+FFFD; escapes cut off at the end are left for the parser."""
    return _STRING.sub(lambda string: _STRING_PART.sub(_repair_part, string.group()), encodable(text))


def _repair_part(match: re.Match[str]) -> str:
    if match.group("lone"):
        return "\\ufffd"
    if match.group("bad"):
        return "\\\\"
    control = match.group("control")
    if control:
        return _CONTROL_ESCAPES.get(control) or f"\\u{ord(control):04x}"
    return match.group()


def _parse(text: str) -> Any:
    """jiter's strict parse, or its partial parse when the text is only cut off; ValueError when malformed."""
    import jiter  # here, not at the top: a reply without tool calls never pays for it

    data = text.encode("utf-8", "surrogatepass")
    try:
        return jiter.from_json(data)
    except ValueError as err:
        if not str(err).startswith(_EOF):
            raise
    cut = _CUT_SCALAR.search(text, max(0, len(text) - _TAIL))
    if cut is not None and not _ends_in_string(data):
        data = (text[:cut.start(1)] + _completed(cut.group(1))).encode("utf-8", "surrogatepass")
    return jiter.from_json(data, partial_mode="trailing-strings")


def _ends_in_string(data: bytes) -> bool:
    """Whether cut-off ``data`` ends inside a string: closing it with a quote then leaves a valid prefix."""
    import jiter

    try:
        jiter.from_json(data + b'"')
    except ValueError as err:
        return str(err).startswith(_EOF)
    return True


def _completed(scalar: str) -> str:
    for word in _LITERALS:
        if word.startswith(scalar):
            return word
    return scalar.rstrip("eE+-.")
