"""Argument validation: Pi's coercions and exact failure texts (docs/loop.md#argument-validation)."""

from __future__ import annotations

from typing import Any

import pytest

from pi_core.errors import ValidationError
from pi_core.toolkit.validation import validate_tool_arguments
from pi_core.tools import Tool

READ = Tool(name="read", description="", execute=lambda a, c: "", coercion="typebox", parameters={
    "type": "object",
    "properties": {"path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}},
    "required": ["path"]})
WRITE = Tool(name="write", description="", execute=lambda a, c: "", coercion="typebox", parameters={
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]})
EDIT_ITEM = {"type": "object", "required": ["oldText", "newText"], "additionalProperties": False,
             "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}
EDIT = Tool(name="edit", description="", execute=lambda a, c: "", coercion="typebox", parameters={
    "type": "object", "properties": {"path": {"type": "string"}, "edits": {"type": "array", "items": EDIT_ITEM}},
    "required": ["path", "edits"], "additionalProperties": False})


def error_text(tool: Tool, args: Any) -> str:
    with pytest.raises(ValidationError) as info:
        validate_tool_arguments(tool, args)
    return str(info.value)


def test_numeric_string_becomes_number() -> None:
    assert validate_tool_arguments(READ, {"path": "a", "limit": "2"})["limit"] == 2
    assert validate_tool_arguments(READ, {"path": "a.ts", "offset": "12"})["offset"] == 12


def test_null_for_optional_property_means_omitted() -> None:
    assert validate_tool_arguments(READ, {"path": "a", "limit": None}) == {"path": "a"}


def test_number_for_string_is_stringified() -> None:
    assert validate_tool_arguments(READ, {"path": 123}) == {"path": "123"}


def test_array_for_string_fails_with_exact_text() -> None:
    assert error_text(READ, {"path": ["a.ts"]}) == (
        'Validation failed for tool "read":\n  - path: must be string\n\n'
        'Received arguments:\n{\n  "path": [\n    "a.ts"\n  ]\n}')


def test_missing_required_lists_all_names_on_one_line_once() -> None:
    assert error_text(WRITE, {}) == (
        'Validation failed for tool "write":\n  - path: must have required properties path, content\n\n'
        'Received arguments:\n{}')
    assert error_text(WRITE, {"path": "a"}) == (
        'Validation failed for tool "write":\n  - content: must have required properties content\n\n'
        'Received arguments:\n{\n  "path": "a"\n}')
    assert error_text(EDIT, {"path": "a", "edits": [{}]}) == (
        'Validation failed for tool "edit":\n  - edits.0.oldText: must have required properties oldText, newText\n\n'
        'Received arguments:\n{\n  "path": "a",\n  "edits": [\n    {}\n  ]\n}')


def test_non_object_arguments() -> None:
    text = error_text(WRITE, "str")
    assert "  - root: must be object" in text and text.endswith('Received arguments:\n"str"')


def test_extra_key_on_open_schema_passes() -> None:
    assert validate_tool_arguments(READ, {"path": "a", "extra": 1}) == {"path": "a", "extra": 1}


def test_edits_string_is_wrapped_then_fails_as_object() -> None:
    assert "  - edits.0: must be object" in error_text(EDIT, {"path": "a", "edits": "str"})


def test_edits_single_object_is_wrapped() -> None:
    args = validate_tool_arguments(EDIT, {"path": "a", "edits": {"oldText": "x", "newText": "y"}})
    assert args["edits"] == [{"oldText": "x", "newText": "y"}]


def test_unknown_key_on_closed_object_gives_two_lines() -> None:
    text = error_text(EDIT, {"path": "a", "edits": [{"oldText": "x", "newText": "y", "bad": 1}]})
    assert "  - edits.0.bad: schema is false\n  - edits.0: must not have additional properties" in text
    text = error_text(EDIT, {"path": "a", "edits": [], "oops": 1})
    assert "  - oops: schema is false\n  - root: must not have additional properties" in text


def test_booleans_and_plain_schema_coercions() -> None:
    plain = Tool(name="p", description="", execute=lambda a, c: "", parameters={
        "type": "object", "properties": {
            "flag": {"type": "boolean"}, "count": {"type": "integer"}, "label": {"type": "string"},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "boolean"}]}}})
    got = validate_tool_arguments(plain, {"flag": "true", "count": "3", "label": False, "maybe": "7"})
    assert got == {"flag": True, "count": 3, "label": "false", "maybe": 7}
    assert "  - count: must be integer" in error_text(plain, {"count": "2.5"})
    assert "  - flag: must be boolean" in error_text(plain, {"flag": "yes"})


def test_original_arguments_are_not_mutated() -> None:
    original = {"path": "a", "limit": "2"}
    validate_tool_arguments(READ, original)
    assert original == {"path": "a", "limit": "2"}
