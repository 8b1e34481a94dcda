"""Strict JSONL framing (docs/rpc.md#framing) plus chunk-boundary properties."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core.modes.rpc.framing import JsonlSplitter, serialize_json_line, split_records


def test_serialize_keeps_unicode_separators_raw_and_round_trips() -> None:
    value = {"text": "a\u2028b\u2029c"}
    line = serialize_json_line(value)
    assert "\u2028" in line and "\u2029" in line and "\\u2028" not in line
    assert line.endswith("\n") and line.count("\n") == 1
    assert json.loads(line) == value


def test_record_with_separators_is_one_line() -> None:
    data = serialize_json_line({"text": "a\u2028b\u2029c"}).encode("utf-8")
    records = split_records(data)
    assert len(records) == 1
    assert json.loads(records[0]) == {"text": "a\u2028b\u2029c"}


def test_crlf_records_are_split_and_stripped() -> None:
    assert split_records(b'{"a":1}\r\n{"b":2}\r\n') == ['{"a":1}', '{"b":2}']


def test_final_record_without_newline_is_delivered() -> None:
    assert split_records(b'{"a":1}') == ['{"a":1}']


def test_only_one_trailing_cr_is_stripped_and_inner_cr_kept() -> None:
    assert split_records(b'a\rb\r\r\n') == ["a\rb\r"]


def test_empty_lines_are_records_of_their_own() -> None:
    assert split_records(b'\n{"a":1}\n\n') == ["", '{"a":1}', ""]


def test_multibyte_character_cut_across_chunks_survives() -> None:
    data = serialize_json_line({"t": "héllo \u2028 😀"}).encode("utf-8")
    splitter = JsonlSplitter()
    records: list[str] = []
    for byte in data:
        records.extend(splitter.feed(bytes([byte])))
    records.extend(splitter.finish())
    assert [json.loads(r) for r in records] == [{"t": "héllo \u2028 😀"}]


def test_numbers_print_like_javascript() -> None:
    assert serialize_json_line({"a": 1.0, "b": 0.5}) == '{"a":1,"b":0.5}\n'


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=5), texts, max_size=3), max_size=6), st.integers(1, 9))
def test_any_chunking_yields_the_same_records(values: list[dict[str, str]], chunk: int) -> None:
    data = "".join(serialize_json_line(v) for v in values).encode("utf-8")
    assert [json.loads(r) for r in split_records(data, chunk_size=chunk)] == values
