"""pi_core.types on pi_core.records behaves as it did on pydantic (issue 19 took pydantic off the print path).

The oracle is pi_core/types.py itself with its base class put back on pydantic (the configuration it had:
camelCase aliases, population by name, extra keys allowed, dumps by alias). Both are fed the same inputs:
every message of the session fixtures in tests/, every model of the bundled catalog, and edge cases (bad
types, lax conversions, unions, tags, extras). Their dumps, ``errors()`` entries, copies and pickles must agree.
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import shutil
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core import types as ours
from pi_core.models import catalog_build
from pi_core.records import ValidationError

REPO = Path(__file__).resolve().parents[2]
RECORDS_IMPORT = "from pi_core.records import Field, PrivateAttr, Record, model_validator\n"
PYDANTIC_IMPORT = ("from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator\n"
                   "from pydantic.alias_generators import to_camel\n")
RECORDS_BASE = "class PiModel(Record):\n"
PYDANTIC_BASE = ("class PiModel(BaseModel):\n"
                 "    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra='allow',\n"
                 "                              serialize_by_alias=True)\n")


def _pydantic_types() -> types.ModuleType:
    source = (REPO / "pi_core" / "types.py").read_text(encoding="utf-8")
    assert source.count(RECORDS_IMPORT) == 1 and source.count(RECORDS_BASE) == 1, "pi_core/types.py changed shape"
    source = source.replace(RECORDS_IMPORT, PYDANTIC_IMPORT).replace(RECORDS_BASE, PYDANTIC_BASE)
    path = Path(tempfile.mkdtemp(prefix="pi-types-on-pydantic-")) / "_pi_types_on_pydantic.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module.__name__] = module  # pydantic resolves the postponed annotations through it
    spec.loader.exec_module(module)
    shutil.rmtree(path.parent)
    return module


theirs = _pydantic_types()


def _session_messages() -> Iterator[dict[str, Any]]:
    for path in sorted(REPO.glob("tests/**/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and isinstance(entry.get("message"), dict):
                yield entry["message"]


def _catalog_models() -> Iterator[dict[str, Any]]:
    catalog = json.loads((REPO / "plugins" / "catalog_models.json").read_text(encoding="utf-8"))
    for provider, entry in catalog["providers"].items():
        defaults = {key: entry[key] for key in catalog_build._PROVIDER_DEFAULTS if key in entry}
        for raw in entry["models"]:
            yield {"name": raw["id"], **defaults, **raw, "provider": provider}


def _dumps(record: Any) -> list[Any]:
    return [record.model_dump(), record.model_dump(by_alias=True), record.model_dump(mode="json"),
            record.model_dump(by_alias=True, exclude_none=True, mode="json"), record.model_dump(by_alias=False),
            json.loads(record.model_dump_json()), json.loads(record.model_dump_json(exclude_none=True))]


def _errors(err: Exception) -> list[tuple[str, tuple[Any, ...], str, Any]]:
    return [(e["type"], tuple(e["loc"]), e["msg"], e["input"]) for e in err.errors()]  # type: ignore[attr-defined]


def _same(name: str, data: Any) -> None:
    """``name`` of both modules validates ``data`` alike: the same dumps, or the same errors."""
    mine_cls, their_cls = getattr(ours, name), getattr(theirs, name)
    try:
        their = their_cls.model_validate(data)
    except ValueError as err:
        with pytest.raises(ValidationError) as mine_err:
            mine_cls.model_validate(data)
        assert _errors(mine_err.value) == _errors(err), (name, data)
        assert str(mine_err.value).splitlines()[0] == str(err).splitlines()[0]
        return
    mine = mine_cls.model_validate(data)
    assert _dumps(mine) == _dumps(their), (name, data)


def test_the_oracle_is_pydantic() -> None:
    import pydantic

    assert issubclass(theirs.Model, pydantic.BaseModel) and not issubclass(ours.Model, pydantic.BaseModel)


def test_every_fixture_message_validates_and_dumps_alike() -> None:
    messages = list(_session_messages())
    assert len(messages) > 1000
    for message in messages:
        cls = ours._ROLE_TYPES.get(message.get("role", ""), ours.CustomMessage).__name__
        _same(cls, message)


def test_every_catalog_model_validates_and_dumps_alike() -> None:
    models = list(_catalog_models())
    assert len(models) > 1000
    for model in models:
        _same("Model", model)


EDGES: list[tuple[str, Any]] = [
    ("TextContent", {"text": "a", "textSignature": "s", "later": 1, "earlier": {"x": [1, 2.5, None]}}),
    ("TextContent", {"text": "a", "text_signature": "by name"}),
    ("TextContent", {"text": 5}),
    ("TextContent", {"text": b"bytes"}),
    ("TextContent", {}),
    ("TextContent", {"type": "image", "text": "a"}),
    ("TextContent", "not a dict"),
    ("ThinkingContent", {"thinking": "t", "redacted": "yes"}),
    ("ThinkingContent", {"thinking": "t", "redacted": "maybe"}),
    ("ThinkingContent", {"thinking": "t", "redacted": 1}),
    ("ThinkingContent", {"thinking": "t", "redacted": 2}),
    ("ThinkingContent", {"thinking": "t", "redacted": [True]}),
    ("ToolCall", {"id": "1", "name": "read", "arguments": []}),
    ("ToolCall", {"id": "1", "name": "read", "arguments": {"path": "a", "n": 2.5}}),
    ("ToolCall", {"id": 1, "name": None}),
    ("Usage", {"input": "12", "output": 3.0, "cacheRead": True, "totalTokens": None}),
    ("Usage", {"input": "1.5"}),
    ("Usage", {"input": "12.0"}),
    ("Usage", {"input": 1.5}),
    ("Usage", {"input": float("inf")}),
    ("Usage", {"input": "x", "output": [], "cost": {"input": "a"}}),
    ("Usage", {"cost": {"input": 1, "total": "2.5"}}),
    ("Usage", {"cost": 5}),
    ("Cost", {"input": " 3 "}),
    ("UserMessage", {"content": "hi", "timestamp": 1}),
    ("UserMessage", {"content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "x", "mimeType": "p"}],
                     "timestamp": 1}),
    ("UserMessage", {"content": [{"type": "toolCall", "id": "1", "name": "n"}], "timestamp": 1}),
    ("UserMessage", {"content": [{"text": "no tag"}], "timestamp": 1}),
    ("UserMessage", {"content": [5], "timestamp": 1}),
    ("UserMessage", {"content": 5, "timestamp": 1}),
    ("UserMessage", {"content": [{"type": "text"}], "timestamp": 1}),
    ("UserMessage", {"role": "assistant", "content": "hi", "timestamp": 1}),
    ("AssistantMessage", {"content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "a"},
                                      {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"x": 1}}],
                          "stopReason": "toolUse", "timestamp": 2, "usage": {"input": 1}}),
    ("AssistantMessage", {"content": [{"type": "nope"}], "timestamp": 2}),
    ("AssistantMessage", {"stopReason": "finished", "timestamp": 2}),
    ("AssistantMessage", {"content": "text", "timestamp": 2}),
    ("AssistantMessage", {"content": ({"type": "text", "text": "tuple"},), "timestamp": 2}),
    ("ToolResultMessage", {"toolCallId": "c", "toolName": "bash", "details": {"exit": 0, "nested": [{"a": None}]},
                           "isError": "false", "timestamp": 3}),
    ("ToolResultMessage", {"toolCallId": "c", "timestamp": 3}),
    ("CustomMessage", {"role": "bashExecution", "command": "ls", "output": "", "timestamp": 4}),
    ("CustomMessage", {"role": 7, "timestamp": 4}),
    ("Model", {"id": "m", "api": "a", "provider": "p", "thinkingLevelMap": {"high": None, "low": "l"},
               "cost": {"input": 1, "tiers": [{"inputTokensAbove": 200000, "input": 2}]}}),
    ("Model", {"id": "m", "api": "a", "provider": "p", "thinkingLevelMap": {"high": 3}}),
    ("Model", {"id": "m", "api": "a", "provider": "p", "headers": {"x": 1}, "contextWindow": "1e3"}),
    ("Model", {"id": "m", "api": "a", "provider": "p", "cost": {"tiers": [{"input": 1}]}}),
    ("Model", {"id": "m", "api": "a", "provider": "p", "input": "text"}),
    ("Context", {"systemPrompt": "s", "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
                 "tools": [{"name": "t", "description": "d", "parameters": {"type": "object"}}]}),
    ("Context", {"messages": [{"role": "other"}]}),
    ("AssistantMessageEvent", {"type": "text_delta", "contentIndex": 0, "delta": "x",
                               "partial": {"content": [], "timestamp": 5}}),
    ("AssistantMessageEvent", {"type": "bogus"}),
]


@pytest.mark.parametrize(("name", "data"), EDGES, ids=[f"{i}-{n}" for i, (n, _) in enumerate(EDGES)])
def test_edge_cases_validate_and_fail_alike(name: str, data: Any) -> None:
    _same(name, data)


def test_construction_by_keyword_fails_alike() -> None:
    for module in (ours, theirs):
        assert module.TextContent(text="a", text_signature="s").text_signature == "s"
    with pytest.raises(ValidationError) as mine:
        ours.Usage(input="many")
    with pytest.raises(ValueError) as their:
        theirs.Usage(input="many")
    assert _errors(mine.value) == _errors(their.value)
    assert mine.value.errors()[0]["msg"] == "Input should be a valid integer, unable to parse string as an integer"


def test_the_model_api_agrees() -> None:
    data = {"content": [{"type": "text", "text": "a"}, {"type": "toolCall", "id": "c", "name": "n",
                                                          "arguments": {"k": [1]}}],
            "usage": {"input": 5, "cost": {"total": 0.25}}, "timestamp": 9, "responseId": "r", "extraKey": "kept"}
    mine, their = ours.AssistantMessage.model_validate(data), theirs.AssistantMessage.model_validate(data)
    assert list(ours.AssistantMessage.model_fields) == list(theirs.AssistantMessage.model_fields)
    for name, field in ours.AssistantMessage.model_fields.items():
        other = theirs.AssistantMessage.model_fields[name]
        assert (field.alias, field.is_required()) == (other.alias, other.is_required())
    assert mine.model_extra == their.model_extra == {"extraKey": "kept"}
    assert _dumps(ours.AssistantMessage.model_validate_json(mine.model_dump_json())) == _dumps(their)
    for deep in (False, True):
        copied = mine.model_copy(update={"model": "other"}, deep=deep)
        assert _dumps(copied) == _dumps(their.model_copy(update={"model": "other"}, deep=deep))
        assert copied != mine and mine.model == "unknown"
    deep_copy = mine.model_copy(deep=True)
    deep_copy.content[1].arguments["k"].append(2)
    assert mine.content[1].arguments == {"k": [1]}
    assert mine == ours.AssistantMessage.model_validate(data) and mine != their
    assert pickle.loads(pickle.dumps(mine)) == mine
    tool_call = pickle.loads(pickle.dumps(mine.content[1]))
    assert tool_call.non_finite == {} and tool_call == mine.content[1]
    with pytest.raises(TypeError):
        hash(mine)


def test_a_private_attribute_is_neither_dumped_nor_taken_from_input() -> None:
    for module in (ours, theirs):
        call = module.ToolCall(id="1", name="n", arguments={"x": float("nan")})
        call.replace_non_finite()
        assert call.non_finite == {"x": "NaN"} and call.arguments == {"x": None}
        assert "_non_finite" not in call.model_dump() and "non_finite" not in call.model_dump()
    # (pydantic would keep an underscore key of the input as an extra key; a record never takes it)
    given = ours.ToolCall(id="1", name="n", _non_finite={"a": "b"})
    assert given.non_finite == {} and "_non_finite" not in given.model_dump()


def test_invalid_json_is_a_validation_error() -> None:
    with pytest.raises(ValidationError) as mine:
        ours.TextContent.model_validate_json("{not json")
    with pytest.raises(ValueError) as their:
        theirs.TextContent.model_validate_json("{not json")
    assert [e["type"] for e in mine.value.errors()] == [e["type"] for e in their.value.errors()] == ["json_invalid"]
