"""The catalog's models are built only when a run reads them, and every lookup answers as with all of them built."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pi_plugins import catalog

from pi_core.loader.plugins import load_plugins
from pi_core.models import catalog_build
from pi_core.models.auth import AuthStorage
from pi_core.models.entries import LazyModels, ModelEntry, ProviderGroup
from pi_core.models.registry import ModelRegistry, ModelSources
from pi_core.models.resolution import initial_model, resolve_cli_model, resolve_scope


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def registries(tmp_path: Path) -> tuple[ModelRegistry, ModelRegistry]:
    """The same sources twice: over the lazy catalog (what pi runs on) and over every model built up front."""
    files = [tmp_path / "models.json", tmp_path / "models.toml"]
    lazy = ModelRegistry(ModelSources(catalog.pi_models(), catalog.provider_presets(), files),
                         AuthStorage.load(tmp_path / "auth.json"))
    eager = ModelRegistry(ModelSources(catalog.catalog_models(), catalog.provider_presets(), files),
                          AuthStorage.load(tmp_path / "auth.json"))
    return lazy, eager


def built(registry: ModelRegistry) -> list[str]:
    return [f"{e.provider}/{e.id}" for e in registry.entries() if e._model is not None]


@pytest.mark.parametrize(("provider", "pattern"), [
    (None, "anthropic/claude-opus-4-7"), ("anthropic", "opus"), (None, "claude-sonnet-4-5"),
    (None, "openai/gpt-5.4:high"), ("openai", "no-such-model"), (None, "gemini-2.5-pro"),
])
def test_a_cli_model_builds_only_the_model_chosen(tmp_path: Path, provider: str | None, pattern: str) -> None:
    lazy, eager = registries(tmp_path)
    assert built(lazy) == []
    got, want = resolve_cli_model(lazy, provider, pattern), resolve_cli_model(eager, provider, pattern)
    assert (got.model, got.thinking, got.warnings) == (want.model, want.thinking, want.warnings)
    assert len(built(lazy)) <= 1


def test_lookups_and_listings_match_the_fully_built_catalog(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    lazy, eager = registries(tmp_path)
    assert lazy.providers() == eager.providers()
    assert lazy.find("anthropic", "claude-opus-4-7") == eager.find("anthropic", "claude-opus-4-7")
    assert initial_model(lazy).model == initial_model(eager).model
    assert built(lazy) == ["anthropic/claude-opus-4-7"]
    assert resolve_scope(lazy, ["anthropic/*", "sonnet:low"]) == resolve_scope(eager, ["anthropic/*", "sonnet:low"])
    assert {b.split("/")[0] for b in built(lazy)} == {"anthropic"}  # only the provider with a key
    assert lazy.available_models() == eager.available_models()
    assert lazy.all_models() == eager.all_models() == catalog.catalog_models()


def test_a_models_file_overrides_the_catalog_models_it_names(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {
        "anthropic": {"baseUrl": "http://127.0.0.1:9/proxy",
                      "modelOverrides": {"claude-opus-4-7": {"name": "Opus here", "maxTokens": 1234}},
                      "models": [{"id": "claude-local", "api": "anthropic-messages"}]}}}))
    lazy, eager = registries(tmp_path)
    assert built(lazy) and {b.split("/")[0] for b in built(lazy)} == {"anthropic"}  # the other providers wait
    assert lazy.all_models() == eager.all_models()
    opus = lazy.find("anthropic", "claude-opus-4-7")
    assert opus is not None and (opus.name, opus.max_tokens, opus.base_url) == \
        ("Opus here", 1234, "http://127.0.0.1:9/proxy")
    local = resolve_cli_model(lazy, None, "anthropic/claude-local").model
    assert (local.provider, local.base_url) == ("anthropic", "http://127.0.0.1:9/proxy")


# --- a provider's models are read from the catalog file only when a lookup reaches that provider ----------


@pytest.fixture
def fresh_catalog() -> Iterator[catalog.Catalog]:
    """The bundled catalog read anew (other tests may have parsed all of it), nothing parsed yet."""
    catalog.loaded_catalog.cache_clear()
    yield catalog.loaded_catalog()
    catalog.loaded_catalog.cache_clear()


def test_the_bundled_catalog_read_a_provider_at_a_time_is_the_files_json(fresh_catalog: catalog.Catalog) -> None:
    assert fresh_catalog.parsed() == []
    whole = json.loads(catalog.CATALOG_PATH.read_text(encoding="utf-8"))
    counts = {name: fresh_catalog.model_count(name) for name in fresh_catalog.providers}
    assert counts == {name: len(entry["models"]) for name, entry in whole["providers"].items()}
    assert fresh_catalog.models("anthropic") == whole["providers"]["anthropic"]["models"]
    assert fresh_catalog.parsed() == ["anthropic"]
    assert fresh_catalog.whole() == whole


@pytest.mark.parametrize("layout", ["compact", "indented", "bad model line", "two models on a line"])
def test_a_catalog_file_in_another_layout_is_read_whole(tmp_path: Path, layout: str) -> None:
    data = {"format": 1, "source": {"generatedAt": "x"}, "providers": {
        "p": {"name": "P", "api": "openai-completions", "baseUrl": "http://h", "models": [{"id": "a"}, {"id": "b"}]},
        "q": {"name": "Q", "models": []}}, "unsupported": []}
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data) if layout == "compact" else json.dumps(data, indent=2) if layout == "indented"
                    else catalog_build.dump_catalog(data).replace('{"id": "b"}', '{"id": "b",') if layout == "bad model line"
                    else catalog_build.dump_catalog(data).replace('{"id": "a"},\n        {"id": "b"}', '{"id": "a"}, {"id": "b"}'))
    read = catalog._read(path, lazy=True)
    if layout in ("bad model line", "two models on a line"):  # the bundled file is dump_catalog's output
        assert read is not None and read.models("q") == []  # (test_catalog.py): it cannot be
        with pytest.raises(RuntimeError, match=f"the model catalog {path} is unreadable: the p models: "):
            read.models("p")
        return
    assert read is not None and read.whole() == data and read.model_count("p") == 2
    lazy = catalog._read(_dumped(tmp_path, data), lazy=True)
    assert lazy is not None and lazy.parsed() == [] and lazy.models("p") == [{"id": "a"}, {"id": "b"}]


def _dumped(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "dumped.json"
    path.write_text(catalog_build.dump_catalog(data))
    return path


def test_a_cli_model_of_one_provider_reads_only_that_providers_models(tmp_path: Path,
                                                                      fresh_catalog: catalog.Catalog) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:9", "api": "anthropic-messages", "apiKey": "k", "models": [{"id": "m"}]}}}))
    registry = ModelRegistry.from_plugins(load_plugins(discover_extensions=False), tmp_path)
    assert fresh_catalog.parsed() == []
    model = initial_model(registry, cli_provider="fake", cli_model="m").model
    assert model is not None and (model.provider, model.id, model.base_url) == ("fake", "m", "http://127.0.0.1:9")
    assert resolve_cli_model(registry, "openai", "gpt-5.4").model.id == "gpt-5.4"
    assert resolve_cli_model(registry, None, "anthropic/claude-opus-4-7").model.id == "claude-opus-4-7"
    assert fresh_catalog.parsed() == ["anthropic", "openai"]
    assert resolve_cli_model(registry, None, "claude-opus-4-7").model.provider == "anthropic"  # any provider's
    assert set(fresh_catalog.parsed()) == {name for name in fresh_catalog.providers if fresh_catalog.model_count(name)}


def test_the_default_model_reads_only_the_providers_with_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     fresh_catalog: catalog.Catalog) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    for name in [v for v in os.environ if v.endswith(("_API_KEY", "_TOKEN")) and v != "ANTHROPIC_API_KEY"]:
        monkeypatch.delenv(name)
    registry = ModelRegistry.from_plugins(load_plugins(discover_extensions=False), tmp_path)
    chosen = initial_model(registry).model
    assert chosen is not None and chosen.provider == "anthropic"
    assert fresh_catalog.parsed() == ["anthropic"]


def _group(provider: str, ids: str, name: str, made: list[str]) -> ProviderGroup:
    def load() -> list[ModelEntry]:
        made.append(f"{provider}:{name}")
        return [ModelEntry.of_fields({"provider": provider, "id": i, "name": f"{i} {name}", "api": "openai-completions",
                                      "baseUrl": "http://h"}) for i in ids.split()]
    return ProviderGroup(provider, len(ids.split()), load)


def test_a_model_two_plugins_give_keeps_its_first_place_and_the_later_entry(tmp_path: Path) -> None:
    made: list[str] = []
    first = LazyModels(groups=[_group("p", "a b", "one", made), _group("q", "c", "one", made)])
    second = LazyModels(groups=[_group("p", "b d", "two", made), _group("r", "", "two", made)])
    registry = ModelRegistry(ModelSources(LazyModels(groups=[*first.groups, *second.groups])),
                             AuthStorage.load(tmp_path / "auth.json"))
    assert registry.providers() == ["p", "q"] and made == []  # r has no models
    assert [(e.id, e.name) for e in registry.provider_entries("p")] == [("a", "a one"), ("b", "b two"), ("d", "d two")]
    assert made == ["p:one", "p:two"]
    assert [f"{e.provider}/{e.id}" for e in registry.entries()] == ["p/a", "p/b", "q/c", "p/d"]  # as a dict fills
    assert registry.find("p", "b").name == "b two"  # type: ignore[union-attr]
