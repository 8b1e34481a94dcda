"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it, so session lines match Pi byte for byte.

Python's ``json`` already agrees on separators, key order and string escapes (with
``ensure_ascii=False``); it differs on numbers (``0.0``/``1e-05`` versus JS ``0``/``0.00001``),
on non-finite floats (JS writes ``null``) and on lone surrogates (JS escapes them).
"""

from __future__ import annotations

import json
import math
import re
from json.encoder import _make_iterencode, encode_basestring  # type: ignore[attr-defined]
from typing import Any

_MAX_SAFE_INT = 2**53
_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: float) -> str:
    """Format a float like JS ``Number.prototype.toString`` (shortest round-trip digits)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    text = repr(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    if frac_part == "0":
        frac_part = ""
    digits = (int_part + frac_part).lstrip("0")
    # decimal exponent n such that value = 0.digits * 10**n
    exponent = len(int_part) + (int(exp_text) if exp_text else 0)
    if int_part == "0":
        leading_zeros = len(frac_part) - len(frac_part.lstrip("0"))
        exponent = -leading_zeros + (int(exp_text) if exp_text else 0)
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= exponent <= 21:
        out = digits + "0" * (exponent - k)
    elif 0 < exponent <= 21:
        out = digits[:exponent] + "." + digits[exponent:]
    elif -6 < exponent <= 0:
        out = "0." + "0" * (-exponent) + digits
    else:
        e = exponent - 1
        exp_str = f"e+{e}" if e >= 0 else f"e-{-e}"
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + exp_str
    return sign + out


def _js_int(value: int) -> str:
    if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
        return int.__repr__(value)
    return js_number(float(value))  # JS would have rounded it to a double when parsing


def _default(obj: Any) -> Any:
    to_json = getattr(obj, "to_json", None)
    if callable(to_json):
        return to_json()
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


class _NeedsJsNumbers(Exception):
    """A number Python's C encoder would write differently from JS (tiny, huge or non-finite)."""


def _prepare(obj: Any) -> Any:
    """Copy of ``obj`` the C encoder writes exactly as JS would: integral floats become ints.

    Raises ``_NeedsJsNumbers`` for numbers only the slow, JS-formatting encoder gets right.
    """
    kind = type(obj)
    if kind is str or obj is None or kind is bool:
        return obj
    if kind is dict:
        return {k: _prepare(v) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [_prepare(v) for v in obj]
    if kind is int:
        if -_MAX_SAFE_INT <= obj <= _MAX_SAFE_INT:
            return obj
        raise _NeedsJsNumbers
    if kind is float:
        if obj.is_integer() and -_MAX_SAFE_INT <= obj <= _MAX_SAFE_INT:
            return int(obj)
        if math.isfinite(obj) and abs(obj) >= 1e-4:
            return obj  # repr and JS agree between 1e-4 and 2**53
        raise _NeedsJsNumbers
    return _prepare(_default(obj))


_FAST = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def js_dumps(obj: Any) -> str:  # open: any JSON value
    """Serialise ``obj`` like ``JSON.stringify(obj)``: compact, non-ASCII kept, JS number format.

    Objects with a ``to_json()`` method (pi_core.types models) are converted through it.
    """
    try:
        text = _FAST.encode(_prepare(obj))
    except _NeedsJsNumbers:
        text = _slow_dumps(obj)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _slow_dumps(obj: Any) -> str:
    iterencode = _make_iterencode(
        {}, _default, encode_basestring, None, js_number, ":", ",", False, False, True, _intstr=_js_int
    )
    return "".join(iterencode(obj, 0))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # one decoder: json.loads(**kw) builds one per call


def js_loads(text: str) -> Any:  # open: any JSON value
    """Parse JSON as ``JSON.parse`` would (NaN/Infinity literals are rejected)."""
    return _DECODER.decode(text)
