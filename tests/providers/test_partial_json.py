from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core.llm.partial_json import parse_partial_json, parse_streaming_json, repair_json


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


def test_nested_structures_close_in_order() -> None:
    assert parse_partial_json('{"edits": [{"oldText": "a", "newText": "b') == {
        "edits": [{"oldText": "a", "newText": "b"}]}


def test_raw_newline_and_bad_escape_are_repaired() -> None:
    assert parse_partial_json('{"content": "line1\nline2"}') == {"content": "line1\nline2"}
    assert parse_partial_json('{"path": "C:\\dir\\sub"}') == {"path": "C:\\dir\\sub"}
    assert repair_json('{"a": "x\ty"}') == '{"a": "x\\ty"}'
    assert repair_json('{"a": "\\d"}') == '{"a": "\\\\d"}'


def test_repaired_partial_text() -> None:
    assert parse_partial_json('{"content": "one\ntwo') == {"content": "one\ntwo"}


def test_non_object_json() -> None:
    assert parse_streaming_json('"just a string"') == "just a string"
    assert parse_partial_json('"just a string"') == {}
    assert parse_partial_json("[1, 2]") == {}


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
