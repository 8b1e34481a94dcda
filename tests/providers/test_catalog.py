"""The built-in catalog plugin: data integrity, plugin wiring and lazy imports."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from pi_plugins import catalog

from pi_core.models.env_keys import env_var_names
from pi_core.models.registry import ModelRegistry
from pi_core.models.resolution import DEFAULT_MODEL_PER_PROVIDER
from pi_core.plugins import load_plugins, register_module
from pi_core.registry import build_registry

SUPPORTED_APIS = {"anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai"}


def test_catalog_models_are_complete_and_unique() -> None:
    models = catalog.catalog_models()
    assert len(models) > 100
    keys = [(m.provider, m.id) for m in models]
    assert len(keys) == len(set(keys))
    for model in models:
        assert model.api in SUPPORTED_APIS, model
        assert model.base_url.startswith("https://"), model
        assert model.name and model.context_window > 0 and model.max_tokens > 0
        assert set(model.input) <= {"text", "image"} and "text" in model.input
        assert min(model.cost.input, model.cost.output, model.cost.cache_read, model.cost.cache_write) >= 0


def test_every_catalog_provider_names_its_key_variable() -> None:
    for provider in {m.provider for m in catalog.catalog_models()}:
        assert env_var_names(provider), provider


@pytest.mark.parametrize("provider", ["anthropic", "openai", "google", "groq", "mistral"])
def test_provider_default_models_exist(provider: str) -> None:
    ids = {m.id for m in catalog.catalog_models() if m.provider == provider}
    assert DEFAULT_MODEL_PER_PROVIDER[provider] in ids


def test_presets_cover_local_servers() -> None:
    presets = catalog.provider_presets()
    for name in ("ollama", "lmstudio", "vllm"):
        assert presets[name]["api"] == "openai-completions"
        assert presets[name]["baseUrl"].startswith("http://localhost:")
    assert presets["openrouter"]["baseUrl"] == "https://openrouter.ai/api/v1"


def test_xhigh_is_mapped_only_where_the_model_has_it() -> None:
    by_key = {(m.provider, m.id): m for m in catalog.catalog_models()}
    assert by_key[("anthropic", "claude-opus-4-6")].thinking_level_map == {"xhigh": "max"}
    assert by_key[("openai", "gpt-5.4")].thinking_level_map == {"xhigh": "xhigh"}
    assert by_key[("openai", "gpt-4o")].thinking_level_map is None


def test_catalog_reaches_the_registry_through_pi_models() -> None:
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, catalog, "catalog", "builtin")
    registry = ModelRegistry.from_plugins(plugins, agent_dir=None)
    assert registry.find("openai", "gpt-5.4") is not None
    assert len(registry.all_models()) == len(catalog.catalog_models())
    assert registry.sources.presets["ollama"]["baseUrl"] == "http://localhost:11434/v1"


def test_entry_points_register_the_three_providers() -> None:
    names = {ep.name: ep.value for ep in entry_points(group="pi")}
    assert names["catalog"] == "pi_plugins.catalog"
    registry = build_registry(load_plugins(discover_extensions=False))
    for api in ("openai-completions", "openai-responses", "google-generative-ai"):
        assert registry.providers.items[api].api == api


def test_plugin_modules_do_not_import_sdks_at_import_time() -> None:
    code = ("import sys, pi_plugins.openai_completions, pi_plugins.openai_responses, pi_plugins.google_generative_ai, "
            "pi_plugins.catalog; print(json.dumps([m for m in ('openai', 'httpx2', 'pydantic') if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
