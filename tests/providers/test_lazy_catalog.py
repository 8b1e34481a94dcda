"""The catalog's models are built only when a run reads them, and every lookup answers as with all of them built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi_plugins import catalog

from pi_core.models.auth import AuthStorage
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
