"""Differential: the hand-written partial-JSON parser (pi_core.llm.partial_json) against jiter's partial mode
(pi_core.llm.tool_json) on every prefix of every text of the corpus, and on the deltas a wire streams.

Realistic arguments give the same value at every prefix. The differences left are each named and explained:
they only ever touch lone surrogates, escapes cut off at the end, and text that is malformed before its end."""

from __future__ import annotations

import json
import math
from typing import Any

import jiter
import pytest

from pi_core.llm import partial_json as old
from pi_core.llm import tool_json as new
from pi_core.types import encodable_value
from tests.providers.tool_json_corpus import ARGUMENTS, SERIALIZATIONS, streams

HIGH_SURROGATES = ("\ud800", "\udbff")


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _without_non_finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_non_finite(v) for k, v in value.items()
                if not _non_finite(v)}
    return value


def _last_string_trimmed(value: Any) -> Any:
    """``value`` with the last character of its last string dropped: what an escape still cut off held back."""
    if isinstance(value, str):
        return value[:-1]
    if isinstance(value, dict) and value:
        key = list(value)[-1]
        return {**value, key: _last_string_trimmed(value[key])}
    if isinstance(value, list) and value:
        return [*value[:-1], _last_string_trimmed(value[-1])]
    return value


def _last_string(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value:
        return _last_string(list(value.values())[-1])
    if isinstance(value, list) and value:
        return _last_string(value[-1])
    return None


def _malformed_before_its_end(text: str) -> bool:
    try:
        jiter.from_json(new.repair_json(text).encode("utf-8", "surrogatepass"))
    except ValueError as err:
        return not str(err).startswith("EOF while parsing")
    return False


def explain(text: str, before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """Which documented difference turns ``before`` (the old parser) into ``after`` (jiter), if any."""
    if encodable_value(before) == after:
        return "lone surrogate replaced by U+FFFD"  # as the loop already did at message end
    last = _last_string(before) or ""
    if (last.endswith("\\") or HIGH_SURROGATES[0] <= last[-1:] <= HIGH_SURROGATES[1]) \
            and encodable_value(_last_string_trimmed(before)) == after:
        return "escape cut off at the end held back"
    if before == {} and "\\u" in text and new.repair_json(text) != text:
        return "\\u without four hex digits repaired as Pi's repairJson does"
    if any(_non_finite(v) for v in _leaves(after)) \
            and _without_non_finite(after) == _without_non_finite(before):
        return "NaN/Infinity read in a cut-off text too (as the old incremental parser the stream used did)"
    if after == {} and _malformed_before_its_end(text):
        return "malformed before its end: not read leniently"
    return None


def differences(text: str) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for end in range(len(text) + 1):
        prefix = text[:end]
        before, after = old.parse_partial_json(prefix), new.parse_partial_json(prefix)
        if repr(before) != repr(after):
            found[prefix] = explain(prefix, before, after)
    return found


@pytest.mark.parametrize("text", streams())
def test_every_prefix_parses_alike_or_differs_for_a_named_reason(text: str) -> None:
    unexplained = {prefix: (old.parse_partial_json(prefix), new.parse_partial_json(prefix))
                   for prefix, reason in differences(text).items() if reason is None}
    assert unexplained == {}


@pytest.mark.parametrize("options", [o for o in SERIALIZATIONS if o.get("ensure_ascii") is False])
def test_utf8_arguments_parse_identically_at_every_prefix(options: dict[str, Any]) -> None:
    for value in ARGUMENTS:
        text = json.dumps(value, **options)
        assert differences(text) == {}, text
        assert new.parse_partial_json(text) == value


def test_ascii_escaped_arguments_differ_only_while_a_surrogate_pair_is_cut() -> None:
    reasons = {reason for value in ARGUMENTS for prefix, reason in differences(json.dumps(value)).items()}
    assert reasons <= {"escape cut off at the end held back"}


@pytest.mark.parametrize("step", [1, 3, 7, 20])
def test_deltas_as_a_wire_streams_them(step: int) -> None:
    """The old incremental parser, fed delta by delta, against jiter on the text so far."""
    for text in streams():
        parser = old.StreamingJsonParser()
        for end in range(step, len(text) + step, step):
            before, after = parser.feed(text[end - step:end]), new.parse_partial_json(text[:end])
            assert repr(before) == repr(after) or explain(text[:end], before, after) is not None, text[:end]
        assert repr(parser.result()) == repr(new.parse_partial_json(text)) or \
            explain(text, parser.result(), new.parse_partial_json(text)) is not None
