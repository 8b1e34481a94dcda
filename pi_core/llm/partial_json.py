"""Best-effort parsing of streamed, possibly incomplete JSON (tool-call arguments),
docs/providers.md#streamed-tool-arguments.

- ``parse_partial_json(text) -> dict``: what providers store in ``ToolCall.arguments`` on every delta
  and at block end. Always a dict: anything that is not an object (or cannot be parsed) gives ``{}``.
- ``parse_streaming_json(text) -> Any``: Pi's exact cascade (empty → {}, strict, strict after repair,
  lenient partial, partial after repair, {}); may return a non-object such as a string literal.
- ``StreamingJsonParser``: the same result fed delta by delta, in time linear in the delta (what
  ``MessageBuilder`` uses, so long ``write`` arguments do not make streaming quadratic).
- ``repair_json(text)``: escape raw control characters inside strings and double a backslash that
  starts an invalid escape, the two mistakes models make most.

The lenient parser closes whatever is open at the end of the text: ``{"path": "src/ma`` gives
``{"path": "src/ma"}``; a key without a value yet is left out; ``tr`` / ``fal`` / ``nu`` complete to
their literal; a lone ``-`` or ``1e`` is dropped.
"""

from __future__ import annotations

import json
import re
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


_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_surrogates(text: str) -> str:
    """Combine escaped surrogate pairs into one character, as ``json.loads`` does; lone halves stay."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return _SURROGATE_PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


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
                return _join_surrogates("".join(out))
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
        return _join_surrogates("".join(out))  # cut off mid-string: keep what arrived

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


_STRING_STOP = re.compile(r'["\\]')
_WS = " \t\r\n"


class StreamingJsonParser:
    """``parse_partial_json`` for text that arrives in pieces, without re-parsing it in Python each time.

    ``feed(delta)`` scans only the new characters (tracking open containers, strings and the last key),
    closes whatever is open and hands the result to the C ``json.loads``, so a 50 KB ``write`` argument
    streamed in small deltas stays cheap. Anything its fast path cannot close (e.g. an invalid escape)
    falls back to ``parse_partial_json`` on the whole text, so results always match it.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._text_cache: str | None = ""
        # frames: [kind, phase, key_start]; kind "root" / "{" / "["
        self._stack: list[list[Any]] = [["root", "value", None]]
        self._in_string = False
        self._string_is_key = False
        self._string_start = 0
        self._escape = False
        self._unicode_left = 0
        self._scalar_start = 0
        self._broken = False
        self._last: dict[str, Any] = {}

    @property
    def text(self) -> str:
        if self._text_cache is None:
            self._text_cache = "".join(self._parts)
            self._parts = [self._text_cache]
        return self._text_cache

    def feed(self, delta: str) -> dict[str, Any]:
        """Add a fragment; return the best-effort object for everything received so far."""
        if delta:
            self._parts.append(delta)
            self._text_cache = None
            if not self._broken:
                self._scan(delta, self._length)
            self._length += len(delta)
        self._last = self._current()
        return self._last

    def result(self) -> dict[str, Any]:
        """The final parse (Pi's full cascade, including repairs) of the complete text."""
        return parse_partial_json(self.text)

    # -- scanning --

    def _scan(self, delta: str, offset: int) -> None:
        i, n = 0, len(delta)
        stack = self._stack
        while i < n:
            if self._in_string:
                if self._escape:
                    self._escape = False
                    if delta[i] == "u":
                        self._unicode_left = 4
                    i += 1
                    continue
                if self._unicode_left:
                    self._unicode_left -= 1
                    i += 1
                    continue
                match = _STRING_STOP.search(delta, i)
                if match is None:
                    return
                i = match.start()
                if delta[i] == "\\":
                    self._escape = True
                else:
                    self._in_string = False
                    stack[-1][1] = "colon" if self._string_is_key else "comma"
                i += 1
                continue
            ch = delta[i]
            frame = stack[-1]
            phase = frame[1]
            if ch in _WS:
                if phase == "scalar":
                    frame[1] = "comma"
            elif ch == '"':
                is_key = frame[0] == "{" and phase == "key"
                if not is_key and phase != "value" or frame[0] == "root":
                    self._broken = True
                    return
                self._in_string, self._string_is_key, self._string_start = True, is_key, offset + i
                if is_key:
                    frame[2] = offset + i
            elif ch in "{[":
                if phase != "value" or (frame[0] == "root" and ch != "{"):
                    self._broken = True
                    return
                frame[1] = "nested"
                stack.append([ch, "key" if ch == "{" else "value", None])
            elif ch in "}]":
                if len(stack) < 2 or (ch == "}") != (frame[0] == "{") or phase in ("colon", "value") and frame[0] == "{":
                    self._broken = True
                    return
                stack.pop()
                stack[-1][1] = "comma" if stack[-1][0] != "root" else "done"
            elif ch == ":":
                if phase != "colon":
                    self._broken = True
                    return
                frame[1] = "value"
            elif ch == ",":
                if phase not in ("comma", "scalar") or frame[0] == "root":
                    self._broken = True
                    return
                frame[1] = "key" if frame[0] == "{" else "value"
            elif phase == "value" and frame[0] != "root":
                frame[1] = "scalar"
                self._scalar_start = offset + i
            elif phase != "scalar":
                self._broken = True
                return
            i += 1

    # -- completing --

    def _current(self) -> dict[str, Any]:
        if self._broken:
            return parse_partial_json(self.text)
        candidate = self._closed_text()
        if candidate is None:
            return {}
        try:
            value = json.loads(candidate, strict=False)
        except ValueError:
            return parse_partial_json(self.text)
        return value if isinstance(value, dict) else {}

    def _closed_text(self) -> str | None:
        stack = self._stack
        if len(stack) == 1:  # the root object has not opened yet, or is already closed
            return self.text if stack[0][1] == "done" else None
        text = self.text
        frame = stack[-1]
        phase = frame[1]
        suffix = ""
        drop_dangling = False
        if self._in_string:
            if self._string_is_key:
                cut, drop_dangling = self._string_start, True
            else:
                cut = len(text)
                if self._escape:
                    cut -= 1
                elif self._unicode_left:
                    cut -= 2 + (4 - self._unicode_left)
                suffix = '"'
        elif phase == "scalar":
            token = text[self._scalar_start:]
            completed = _complete_scalar(token)
            if completed is None:
                cut = frame[2] if frame[0] == "{" else self._scalar_start
                drop_dangling = True
            else:
                cut, suffix = self._scalar_start, completed
        elif frame[0] == "{" and phase in ("colon", "value"):
            cut, drop_dangling = frame[2], True
        else:
            cut = len(text)
            drop_dangling = phase in ("key", "value")
        head = text[:cut]
        if drop_dangling:
            head = head.rstrip(_WS)
            head = head.removesuffix(",")
        closers = "".join("}" if f[0] == "{" else "]" for f in reversed(stack[1:]))
        return head + suffix + closers


def _complete_scalar(token: str) -> str | None:
    for word in ("true", "false", "null"):
        if word.startswith(token):
            return word
    trimmed = token.rstrip("eE+-.")
    try:
        json.loads(trimmed)
    except ValueError:
        return None
    return trimmed
