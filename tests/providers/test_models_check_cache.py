"""A models file the schema accepted once skips the schema check on the next start (``pi_core/models/custom_check.py``),
and no cached verdict ever hides a mistake: an edited file is checked again, Pi's own checks run every time, and a
broken cache only means checking."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.models import custom_check, custom_schema
from pi_core.models.auth import AuthStorage
from pi_core.models.registry import ModelRegistry, ModelSources

GOOD = {"providers": {"p": {"baseUrl": "http://h", "api": "openai-completions",
                            "models": [{"id": "m", "contextWindow": 1000}]}}}


@pytest.fixture
def schema_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The cache in a fresh cache dir; each schema check (pydantic) is recorded."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls: list[object] = []
    real = custom_schema.check_schema

    def counted(config: object) -> list[custom_check.Problem]:
        calls.append(config)
        return real(config)

    monkeypatch.setattr(custom_schema, "check_schema", counted)
    return calls


def load(tmp_path: Path, config: object) -> ModelRegistry:
    path = tmp_path / "models.json"
    path.write_text(json.dumps(config, indent=1))
    return ModelRegistry(ModelSources([], {}, [path]), AuthStorage.load(tmp_path / "auth.json"))


def test_a_valid_file_is_checked_once(tmp_path: Path, schema_calls: list[object]) -> None:
    assert load(tmp_path, GOOD).errors == []
    assert load(tmp_path, GOOD).find("p", "m") is not None
    assert len(schema_calls) == 1
    assert (tmp_path / "cache" / "pi" / custom_check.CACHE_NAME).is_file()


def test_an_edited_file_is_checked_again_and_named_with_line(tmp_path: Path, schema_calls: list[object]) -> None:
    load(tmp_path, GOOD)
    broken = json.loads(json.dumps(GOOD))
    broken["providers"]["p"]["models"][0]["contextWindow"] = "1000"  # a string now: a schema mistake
    [text] = load(tmp_path, broken).errors
    assert len(schema_calls) == 2
    assert text.startswith(f"{tmp_path / 'models.json'}:")
    line, column, message = text.split(":", 3)[1:]
    assert (int(line), int(column)) > (1, 1)
    assert message.strip() == "/providers/p/models/0/contextWindow: must be number"


def test_pis_own_checks_run_on_a_remembered_file(tmp_path: Path, schema_calls: list[object]) -> None:
    config = {"providers": {"p": {"api": "openai-completions", "models": [{"id": "m"}]}}}  # schema-valid, no baseUrl
    first, second = load(tmp_path, config).errors, load(tmp_path, config).errors
    assert len(schema_calls) == 1
    assert first == second
    assert second[0].endswith('Provider p: "baseUrl" is required when defining custom models.')


@pytest.mark.parametrize("content", ["not json", '{"format": 1, "valid": "abc"}', "[]", '{"format": 99}'])
def test_a_broken_cache_means_checking(tmp_path: Path, schema_calls: list[object], content: str) -> None:
    cache = tmp_path / "cache" / "pi" / custom_check.CACHE_NAME
    cache.parent.mkdir(parents=True)
    cache.write_text(content)
    assert load(tmp_path, GOOD).errors == []
    assert load(tmp_path, GOOD).errors == []
    assert len(schema_calls) == 1  # checked, then remembered over the broken cache
    assert json.loads(cache.read_text())["format"] == custom_check.CACHE_FORMAT


def test_an_unwritable_cache_dir_costs_only_the_check(tmp_path: Path, schema_calls: list[object]) -> None:
    (tmp_path / "cache").write_text("a file where the cache dir would be")
    assert load(tmp_path, GOOD).errors == []
    assert load(tmp_path, GOOD).errors == []
    assert len(schema_calls) == 2


def test_the_digest_names_content_version_and_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = custom_check.schema_digest(GOOD)
    assert digest == custom_check.schema_digest(json.loads(json.dumps(GOOD)))
    assert digest != custom_check.schema_digest({**GOOD, "x": 1})
    monkeypatch.setattr("pi_core.__version__", "9.9.9")
    assert digest != custom_check.schema_digest(GOOD)
