"""The models file's schema (pydantic models in ``pi_core/models/custom_schema.py``) reports each mistake in Pi's
words, at its JSON pointer, every mistake of a file at once; its texts are those of the hand-written checks it
replaced (issue 31: a differential run over 570 one-mistake files found no difference)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.models.auth import AuthStorage
from pi_core.models.registry import ModelRegistry, ModelSources

GOOD_MODEL = {"id": "m", "cost": {"input": 1, "output": 2.5, "cacheRead": 0, "cacheWrite": 0}}


def errors_of(tmp_path: Path, provider: dict[str, object]) -> list[str]:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"providers": {"p": {"baseUrl": "http://h", "api": "openai-completions",
                                                   **provider}}}))
    registry = ModelRegistry(ModelSources([], {}, [path]), AuthStorage.load(tmp_path / "auth.json"))
    [text] = registry.errors
    return [line.split(": ", 1)[1] for line in text.splitlines()]


@pytest.mark.parametrize(("provider", "expected"), [
    ({"apiKey": None}, "/providers/p/apiKey: must be string"),  # absent is fine, null is not
    ({"apiKey": ""}, "/providers/p/apiKey: must NOT have fewer than 1 characters"),
    ({"authHeader": 1}, "/providers/p/authHeader: must be boolean"),  # strict: 1 is no boolean
    ({"headers": {"x": 1}}, "/providers/p/headers/x: must be string"),
    ({"compat": []}, "/providers/p/compat: must be object"),
    ({"models": {}}, "/providers/p/models: must be array"),
    ({"models": [1]}, "/providers/p/models/0: must be object"),
    ({"models": [{**GOOD_MODEL, "maxTokens": "4096"}]}, "/providers/p/models/0/maxTokens: must be number"),
    ({"models": [{**GOOD_MODEL, "contextWindow": True}]}, "/providers/p/models/0/contextWindow: must be number"),
    ({"models": [{**GOOD_MODEL, "input": ["text", "video"]}]},
     "/providers/p/models/0/input/1: must be equal to one of the allowed values"),
    ({"models": [{**GOOD_MODEL, "thinkingLevelMap": {"high": 3}}]},
     "/providers/p/models/0/thinkingLevelMap/high: must be string,null"),
    ({"models": [{**GOOD_MODEL, "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": "0"}}]},
     "/providers/p/models/0/cost/cacheWrite: must be number"),
    ({"modelOverrides": {"gpt": {"cost": {"input": "1"}}}}, "/providers/p/modelOverrides/gpt/cost/input: must be number"),
    ({"modelOverrides": {"gpt": []}}, "/providers/p/modelOverrides/gpt: must be object"),
])
def test_each_mistake_in_pis_words(tmp_path: Path, provider: dict[str, object], expected: str) -> None:
    assert errors_of(tmp_path, provider) == [expected]


def test_every_mistake_at_once(tmp_path: Path) -> None:
    """A new model's cost names all four prices; an override's cost may name some (and ``thinkingLevelMap``
    values may be null)."""
    assert errors_of(tmp_path, {
        "models": [{"id": "m", "cost": {"output": 1}}, {"name": 2}],
        "modelOverrides": {"gpt": {"cost": {"output": 1}, "thinkingLevelMap": {"off": None}}},
    }) == [
        "/providers/p/models/0/cost: must have required property 'input'",
        "/providers/p/models/0/cost: must have required property 'cacheRead'",
        "/providers/p/models/0/cost: must have required property 'cacheWrite'",
        "/providers/p/models/1: must have required property 'id'",
        "/providers/p/models/1/name: must be string",
    ]


def test_a_valid_file_keeps_its_unknown_keys_and_loads(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"providers": {"p": {"baseUrl": "http://h", "api": "openai-completions",
                                                   "futureKey": {"a": 1}, "models": [{**GOOD_MODEL, "extra": 1}]}}}))
    registry = ModelRegistry(ModelSources([], {}, [path]), AuthStorage.load(tmp_path / "auth.json"))
    assert registry.errors == []
    assert registry.find("p", "m") is not None
