"""Best-effort parsing of streamed, possibly incomplete JSON (tool-call arguments), providers.md §11.

- ``parse_partial_json(text) -> dict``: what providers store in ``ToolCall.arguments`` on every delta
  and at block end. Always a dict: anything that is not an object (or cannot be parsed) gives ``{}``.
- ``parse_streaming_json(text) -> Any``: Pi's exact cascade (empty → {}, strict, strict after repair,
  lenient partial, partial after repair, {}); may return a non-object such as a string literal.
- ``repair_json(text)``: escape raw control characters inside strings and double a backslash that
  starts an invalid escape, the two mistakes models make most.

The lenient parser closes whatever is open at the end of the text: ``{"path": "src/ma`` gives
``{"path": "src/ma"}``; a key without a value yet is left out; ``tr`` / ``fal`` / ``nu`` complete to
their literal; a lone ``-`` or ``1e`` is dropped.
"""

from __future__ import annotations

import json
from typing import Any

_ESCAPES = set('"\\/bfnrtu')
_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def parse_partial_json(text: str | None) -> dict[str, Any]:
    """Parse (possibly incomplete) tool arguments into a dict; never raises, never returns a non-dict."""
    value = parse_streaming_json(text)
    return value if isinstance(value, dict) else {}


def parse_streaming_json(text: str | None) -> Any:
    """Pi's ``parseStreamingJson``: first success of strict, repaired, partial, repaired-partial, ``{}``."""
    if not text or not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        pass
    repaired = repair_json(text)
    if repaired != text:
        try:
            return json.loads(repaired)
        except ValueError:
            pass
    for candidate in (text, repaired):
        try:
            return _PartialParser(candidate).parse()
        except _Unparseable:
            continue
    return {}


def repair_json(text: str) -> str:
    """Escape raw control characters in strings and double backslashes that begin invalid escapes."""
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            in_string = ch == '"'
            out.append(ch)
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt in _ESCAPES and nxt:
                out.append(ch + nxt)
                i += 1
            else:
                out.append("\\\\")
        elif ch == '"':
            in_string = False
            out.append(ch)
        elif ord(ch) < 0x20:
            out.append(_CONTROL_ESCAPES.get(ch, f"\\u{ord(ch):04x}"))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class _Unparseable(Exception):
    pass


class _Incomplete(Exception):
    """The text ended inside a value that cannot be completed (e.g. a bare ``-``)."""


_MISSING = object()
_LITERALS = {"true": True, "false": False, "null": None}


class _PartialParser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def parse(self) -> Any:
        self._ws()
        try:
            value = self._value()
        except _Incomplete:
            raise _Unparseable from None
        self._ws()
        if self.i < len(self.s):
            raise _Unparseable
        return value

    def _ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def _eof(self) -> bool:
        return self.i >= len(self.s)

    def _value(self) -> Any:
        if self._eof():
            raise _Incomplete
        ch = self.s[self.i]
        if ch == "{":
            return self._object()
        if ch == "[":
            return self._array()
        if ch == '"':
            return self._string()
        if ch == "-" or ch.isdigit():
            return self._number()
        return self._literal()

    def _object(self) -> dict[str, Any]:
        self.i += 1
        result: dict[str, Any] = {}
        while True:
            self._ws()
            if self._eof():
                return result
            if self.s[self.i] == "}":
                self.i += 1
                return result
            if self.s[self.i] == ",":
                self.i += 1
                continue
            if self.s[self.i] != '"':
                raise _Unparseable
            key = self._string()
            self._ws()
            if self._eof():
                return result
            if self.s[self.i] != ":":
                raise _Unparseable
            self.i += 1
            self._ws()
            if self._eof():
                return result
            try:
                result[key] = self._value()
            except _Incomplete:
                return result

    def _array(self) -> list[Any]:
        self.i += 1
        result: list[Any] = []
        while True:
            self._ws()
            if self._eof():
                return result
            ch = self.s[self.i]
            if ch == "]":
                self.i += 1
                return result
            if ch == ",":
                self.i += 1
                continue
            try:
                result.append(self._value())
            except _Incomplete:
                return result

    def _string(self) -> str:
        self.i += 1
        out: list[str] = []
        s, n = self.s, len(self.s)
        while self.i < n:
            ch = s[self.i]
            if ch == '"':
                self.i += 1
                return "".join(out)
            if ch == "\\":
                if self.i + 1 >= n:
                    self.i = n
                    break
                esc = s[self.i + 1]
                if esc == "u":
                    digits = s[self.i + 2:self.i + 6]
                    if len(digits) < 4:
                        self.i = n
                        break
                    try:
                        out.append(chr(int(digits, 16)))
                    except ValueError:
                        raise _Unparseable from None
                    self.i += 6
                    continue
                mapped = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}.get(esc)
                if mapped is None:
                    raise _Unparseable
                out.append(mapped)
                self.i += 2
                continue
            out.append(ch)
            self.i += 1
        return "".join(out)  # cut off mid-string: keep what arrived

    def _number(self) -> int | float:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] in "+-0123456789.eE":
            self.i += 1
        token = self.s[start:self.i]
        try:
            return json.loads(token)
        except ValueError:
            pass
        if self._eof():
            trimmed = token.rstrip("eE+-.")
            try:
                return json.loads(trimmed)
            except ValueError:
                raise _Incomplete from None
        raise _Unparseable

    def _literal(self) -> Any:
        for word, value in _LITERALS.items():
            rest = self.s[self.i:self.i + len(word)]
            if rest == word:
                self.i += len(word)
                return value
            if self.i + len(rest) >= len(self.s) and rest and word.startswith(rest):
                self.i = len(self.s)
                return value
        raise _Unparseable
