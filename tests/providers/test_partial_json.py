from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core.llm.partial_json import (
    StreamingJsonParser,
    parse_partial_json,
    parse_streaming_json,
    repair_json,
)


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


text_with_controls = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
nested_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text_with_controls,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text_with_controls, children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(text_with_controls, nested_values, max_size=4), st.integers(0, 2), st.booleans(),
       st.lists(st.integers(1, 9), min_size=1, max_size=20))
def test_streaming_parser_matches_the_whole_text_parser(value: dict, indent: int, ascii_only: bool,
                                                       steps: list[int]) -> None:
    text = json.dumps(value, indent=indent or None, ensure_ascii=ascii_only)
    parser = StreamingJsonParser()
    position, turn = 0, 0
    while position < len(text):
        step = steps[turn % len(steps)]
        turn += 1
        assert parser.feed(text[position:position + step]) == parse_partial_json(text[:position + step])
        position += step
    assert parser.result() == value


def test_streaming_parser_on_broken_input_falls_back() -> None:
    parser = StreamingJsonParser()
    assert parser.feed('{"path": "C:\\dir') == {"path": "C:\\dir"}
    assert parser.feed('"}') == {"path": "C:\\dir"}
    garbage = StreamingJsonParser()
    assert garbage.feed("not json") == {} and garbage.feed("{") == {}
    assert StreamingJsonParser().feed('"a string"') == {}
