"""Streamed tool arguments (pi_core.llm.tool_json, jiter's partial mode under Pi's rules).

The cases marked "as partial_json.py gave" pin what the hand-written parser this replaced returned; the
differential that compared the two on every prefix of tests/providers/tool_json_corpus.py is in the history
(commit "llm: tool_json, ..."). The changes it found are pinned below as well, each with its reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core.llm.stream import MessageBuilder
from pi_core.llm.tool_json import parse_partial_json, parse_streaming_json, repair_json
from pi_core.testing.fake_script import Reply, ToolUse
from pi_core.testing.runner import pi_runner
from pi_core.types import Model
from tests.providers.tool_json_corpus import ARGUMENTS, SERIALIZATIONS, streams


def test_empty_text_is_empty_object() -> None:
    assert parse_partial_json("") == {}
    assert parse_partial_json("   \n") == {}
    assert parse_partial_json(None) == {}


def test_string_cut_mid_word_is_closed() -> None:
    assert parse_partial_json('{"path": "src/ma') == {"path": "src/ma"}


def test_open_array_is_closed() -> None:
    assert parse_partial_json('{"a": [1, 2') == {"a": [1, 2]}


def test_garbage_is_empty_object() -> None:
    assert parse_partial_json("garbage") == {}
    assert parse_partial_json("{]") == {}


def test_key_without_value_is_left_out() -> None:
    assert parse_partial_json('{"path": "a.txt", "off') == {"path": "a.txt"}
    assert parse_partial_json('{"path": "a.txt", "offset":') == {"path": "a.txt"}
    assert parse_partial_json('{"a": -') == {}


def test_partial_literals_and_numbers_complete() -> None:
    assert parse_partial_json('{"a": tr') == {"a": True}
    assert parse_partial_json('{"a": nu') == {"a": None}
    assert parse_partial_json('{"a": 1.') == {"a": 1}
    assert parse_partial_json('{"a": 12') == {"a": 12}


def test_cut_scalars_complete_as_partial_json_py_gave() -> None:
    assert parse_partial_json('{"a": [fal') == {"a": [False]}
    assert parse_partial_json('{"a":f') == {"a": False}
    assert parse_partial_json('{"a": 1, "b": -2.5e') == {"a": 1, "b": -2.5}
    assert parse_partial_json('{"a": 4E+') == {"a": 4}
    assert parse_partial_json('{"a": -0.') == {"a": 0}
    # inside a string the same characters are text, not a literal to complete
    assert parse_partial_json('{"a": "ratio: 1.') == {"a": "ratio: 1."}
    assert parse_partial_json('{"a": ["x, tr') == {"a": ["x, tr"]}
    assert parse_partial_json('{"x, tr') == {}  # a key cut off


def test_nested_structures_close_in_order() -> None:
    assert parse_partial_json('{"edits": [{"oldText": "a", "newText": "b') == {
        "edits": [{"oldText": "a", "newText": "b"}]}


def test_raw_newline_and_bad_escape_are_repaired() -> None:
    assert parse_partial_json('{"content": "line1\nline2"}') == {"content": "line1\nline2"}
    assert parse_partial_json('{"path": "C:\\dir\\sub"}') == {"path": "C:\\dir\\sub"}
    assert repair_json('{"a": "x\ty"}') == '{"a": "x\\ty"}'
    assert repair_json('{"a": "\\d"}') == '{"a": "\\\\d"}'
    assert repair_json('{"a":\n "\x01"}') == '{"a":\n "\\u0001"}'  # whitespace between tokens stays


def test_repaired_partial_text() -> None:
    assert parse_partial_json('{"content": "one\ntwo') == {"content": "one\ntwo"}


def test_non_object_json() -> None:
    assert parse_streaming_json('"just a string"') == "just a string"
    assert parse_partial_json('"just a string"') == {}
    assert parse_partial_json("[1, 2]") == {}


def test_escapes_cut_off_at_the_end_wait_for_their_end() -> None:
    assert parse_partial_json('{"a": "x\\u00') == {"a": "x"}
    assert parse_partial_json('{"a": "x\\u00e9') == {"a": "xé"}
    assert parse_partial_json('{"a": "q\\"') == {"a": 'q"'}
    # changed: partial_json.py showed the high half of a pair (U+FFFD once printed) until the low half came
    assert parse_partial_json('{"a": "ok \\ud83d') == {"a": "ok "}
    assert parse_partial_json('{"a": "ok \\ud83d\\ude') == {"a": "ok "}
    assert parse_partial_json('{"a": "ok \\ud83d\\ude00') == {"a": "ok 😀"}
    # changed: partial_json.py showed a trailing backslash of an invalid escape before its next character
    assert parse_partial_json('{"path": "C:\\dir\\') == {"path": "C:\\dir"}


def test_lone_surrogates_become_the_replacement_character() -> None:
    # changed: partial_json.py kept "\ud800"; the loop replaced it by U+FFFD at message end, now it is at once
    assert parse_partial_json('{"command": "echo A\\ud800B"}') == {"command": "echo A\ufffdB"}
    assert parse_partial_json('{"a": "\\udc00 x \\ud800\\u0041"}') == {"a": "\ufffd x \ufffdA"}
    assert parse_partial_json('{"a": "raw \ud800 char"}') == {"a": "raw \ufffd char"}
    assert parse_partial_json('{"a": "\\ud83d\\ude00"}') == {"a": "😀"}


def test_non_finite_numbers_are_read_as_python_json_reads_them() -> None:
    value = parse_partial_json('{"x": NaN, "y": -Infinity}')
    assert value["x"] != value["x"] and value["y"] == float("-inf")
    # changed: partial_json.py's whole-text parser dropped a cut text with NaN, its incremental one kept it
    assert list(parse_partial_json('{"x": NaN, "y": Inf')) == ["x"]


def test_backslash_u_without_hex_digits_is_repaired_as_pi_does() -> None:
    # changed: partial_json.py gave {} (it kept the \u), Pi's repairJson doubles the backslash
    assert parse_partial_json('{"path": "C:\\users\\x"}') == {"path": "C:\\users\\x"}


def test_text_malformed_before_its_end_is_not_read_leniently() -> None:
    # changed: partial_json.py read past these (as Pi 0.73's partial-json did); Pi 1.6.0's final parse
    # does not, so the arguments are empty and validation names what is missing
    assert parse_partial_json('{"a": 1,}') == {}
    assert parse_partial_json('{"a": 1 "b": 2}') == {}
    assert parse_partial_json('{"a": 1} trailing') == {}
    assert parse_partial_json('{"a": [1, 2}') == {}
    assert parse_partial_json('{"a": 1}{"b": 2}') == {}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_every_prefix_of_an_object_parses_to_a_dict(value: dict) -> None:
    text = json.dumps(value)
    for end in range(len(text) + 1):
        assert isinstance(parse_partial_json(text[:end]), dict)
    assert parse_partial_json(text) == value


def grows_into(partial: Any, final: Any) -> bool:
    """Whether ``partial`` is what a prefix of ``final``'s text can show: finished members equal, the last
    one itself growing, strings a prefix, a number cut off any number."""
    if isinstance(final, dict):
        keys, final_keys = list(partial) if isinstance(partial, dict) else None, list(final)
        if keys is None or keys != final_keys[:len(keys)]:
            return False
        return all(partial[k] == final[k] for k in keys[:-1]) and (not keys or grows_into(partial[keys[-1]],
                                                                                          final[keys[-1]]))
    if isinstance(final, list):
        if not isinstance(partial, list) or len(partial) > len(final):
            return False
        return not partial or partial[:-1] == final[:len(partial) - 1] and grows_into(partial[-1], final[len(partial) - 1])
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    if isinstance(final, bool) or final is None:
        return partial is final
    return isinstance(partial, int | float) and not isinstance(partial, bool)


@pytest.mark.parametrize("options", SERIALIZATIONS, ids=lambda o: ",".join(map(str, o)) or "default")
def test_every_prefix_of_the_corpus_grows_into_its_arguments(options: dict[str, Any]) -> None:
    for value in ARGUMENTS:
        text = json.dumps(value, **options)
        for end in range(len(text)):
            assert grows_into(parse_partial_json(text[:end]), value), text[:end]
        assert parse_partial_json(text) == value


def test_every_prefix_of_the_malformed_corpus_is_an_object() -> None:
    for text in streams():
        for end in range(len(text) + 1):
            assert isinstance(parse_partial_json(text[:end]), dict)


MODEL = Model(id="m", api="fake-api", provider="fake")
text_with_controls = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
nested_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text_with_controls,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text_with_controls, children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(text_with_controls, nested_values, max_size=4), st.integers(0, 2), st.booleans(),
       st.lists(st.integers(1, 9), min_size=1, max_size=20))
def test_message_builder_arguments_follow_the_text_so_far(value: dict, indent: int, ascii_only: bool,
                                                          steps: list[int]) -> None:
    text = json.dumps(value, indent=indent or None, ensure_ascii=ascii_only)
    builder = MessageBuilder(MODEL)
    index = builder.toolcall_start("call_1", "write").content_index
    assert index is not None
    position, turn = 0, 0
    while position < len(text):
        step = steps[turn % len(steps)]
        turn += 1
        event = builder.toolcall_delta(index, text[position:position + step])
        position += step
        assert event.partial is not None
        assert event.partial.content[index].arguments == parse_partial_json(text[:position])  # type: ignore[union-attr]
    assert builder.tool_json(index) == text
    end = builder.toolcall_end(index)
    assert end.tool_call is not None and end.tool_call.arguments == value


def test_message_builder_on_broken_input() -> None:
    builder = MessageBuilder(MODEL)
    index = builder.toolcall_start("call_1", "write").content_index
    assert index is not None
    assert builder.toolcall_delta(index, '{"path": "C:\\dir').partial.content[index].arguments == {  # type: ignore[union-attr]
        "path": "C:\\dir"}
    builder.toolcall_delta(index, '"}')
    end = builder.toolcall_end(index)
    assert end.tool_call is not None and end.tool_call.arguments == {"path": "C:\\dir"}
    garbage = MessageBuilder(MODEL)
    index = garbage.toolcall_start("call_2", "write").content_index
    assert index is not None
    garbage.toolcall_delta(index, "not json")
    end = garbage.toolcall_end(index)
    assert end.tool_call is not None and end.tool_call.arguments == {}


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions", "openai-responses"])
def test_json_mode_shows_the_arguments_so_far_on_every_delta(tmp_path: Path, api: str) -> None:
    """What a user of ``--mode json`` reads: each ``toolcall_delta`` carries the arguments parsed so far."""
    raw = '{"path": "notes.txt", "offset": 2.5e1, "limit": 10, "flag": true, "content": "a\\"b \\ud83d\\ude00"}'
    with pi_runner(tmp_path, api) as pi:
        pi.server.add(Reply(tool_calls=[ToolUse("no_such_tool", raw_arguments=raw)], chunk_size=3), Reply(text="ok"))
        result = pi.run("--mode", "json", "go")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.split("\n") if line]
    updates = [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]
    deltas = [u for u in updates if u["type"] == "toolcall_delta"]
    assert "".join(u["delta"] for u in deltas) == raw
    so_far = ""
    for update in deltas:
        so_far += update["delta"]
        assert update["partial"]["content"][update["contentIndex"]]["arguments"] == parse_partial_json(so_far)
    shown = [u["partial"]["content"][u["contentIndex"]]["arguments"] for u in deltas]
    assert {"path": "notes.txt", "offset": 2.5} in shown  # "2.5e1" cut after "2.5e" shows the digits read
    assert {"path": "notes.txt", "offset": 25.0, "limit": 10, "flag": True} in shown  # "tru" shows true
    contents = [args["content"] for args in shown if "content" in args]
    assert contents[-5:] == ['a"b '] * 3 + ['a"b 😀'] * 2  # the pair cut three ways, shown once whole
    (end,) = [u for u in updates if u["type"] == "toolcall_end"]
    assert end["toolCall"]["arguments"] == json.loads(raw)
