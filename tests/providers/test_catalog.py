"""The built-in catalog: generated from Pi 1.6.0's data, listed as Pi lists it, reachable by every key variable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pi_plugins import catalog

from pi_core.loader.plugins import load_plugins
from pi_core.models.catalog_build import build_catalog, dump_catalog, read_package_dir
from pi_core.models.env_keys import ENV_VARS
from pi_core.models.registry import ModelRegistry
from tests.providers.pi16 import (
    ENV_TABLE,
    REPO,
    clean_env,
    listed_ids,
    require_pi16,
    run_pi,
)

README = REPO / "README.md"
DUMMY = "dummy-key-0123456789"


def _pi16_chat_models(pi_ai: Path) -> dict[tuple[str, str], dict]:
    models: dict[tuple[str, str], dict] = {}
    for path in sorted((pi_ai / "dist" / "providers" / "data").glob("[!.]*.json")):
        for group in json.loads(path.read_text()).values():
            for raw in group.values():
                if raw["type"] == "chat":
                    models[(raw["provider"], raw["id"])] = raw
    return models


def test_bundled_catalog_is_exactly_the_generators_output_for_pi_1_6_0() -> None:
    pi16 = require_pi16()
    built = build_catalog(read_package_dir(pi16.pi_ai))
    assert built["source"] == {"package": "@earendil-works/pi-ai", "version": "1.6.0",
                               "generatedAt": built["source"]["generatedAt"]}
    assert dump_catalog(built) == catalog.CATALOG_PATH.read_text(encoding="utf-8"), \
        "plugins/catalog_models.json differs from the generator's output: regenerate it, never edit it"


def test_every_model_has_pi_1_6_0s_ids_endpoints_prices_limits_and_capabilities() -> None:
    theirs = _pi16_chat_models(require_pi16().pi_ai)
    ours = {(m.provider, m.id): m for m in catalog.catalog_models()}
    assert set(ours) == set(theirs)
    for key, raw in theirs.items():
        model = ours[key]
        cost = model.cost.to_json()
        assert (model.name, model.api, model.base_url) == (raw["name"], raw["api"], raw["baseUrl"]), key
        assert (model.context_window, model.max_tokens) == (raw["contextWindow"], raw["maxTokens"]), key
        assert (model.reasoning, model.input) == (raw["reasoning"], raw["input"]), key
        assert cost == raw["cost"], key
        assert (model.compat or None) == (raw.get("compat") or None), key
        assert model.thinking_level_map == raw.get("thinkingLevelMap"), key


def _unsupported_apis_in_readme() -> set[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("### Models pi does not run", 1)[1].split("\n## ", 1)[0]
    return {line.split("`")[1] for line in section.splitlines() if line.startswith("- `")}


def test_list_models_with_dummy_keys_lists_what_pi_1_6_0_lists(tmp_path: Path) -> None:
    pi16 = require_pi16()
    env = clean_env(tmp_path, {variable: DUMMY for variable in ENV_TABLE.values()})
    theirs = pi16.run(["--list-models"], env)
    assert theirs.returncode == 0, theirs.stderr
    ours = run_pi(["--list-models"], env, tmp_path)
    assert ours.returncode == 0, ours.stderr
    data = _pi16_chat_models(pi16.pi_ai)
    documented = _unsupported_apis_in_readme()
    expected = {key for key in listed_ids(theirs.stdout) if data[key]["api"] not in documented}
    got = listed_ids(ours.stdout)
    assert got == expected, (sorted(expected - got)[:10], sorted(got - expected)[:10])
    assert len(expected) == 1332  # the figure Pi 1.6.0 prints with these keys


def test_readme_names_every_api_the_catalog_cannot_run() -> None:
    documented = _unsupported_apis_in_readme()
    assert set(catalog.catalog_data()["unsupported"]) <= documented


@pytest.mark.parametrize("label", sorted(ENV_TABLE))
def test_every_variable_of_the_key_table_makes_its_provider_available(
        label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    variable = ENV_TABLE[label]
    for name in {v for names in ENV_VARS.values() for v in names}:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, DUMMY)
    registry = ModelRegistry.from_plugins(load_plugins(discover_extensions=False), agent_dir=tmp_path)
    providers = {m.provider for m in registry.available_models()}
    owners = {provider for provider, names in ENV_VARS.items() if variable in names}
    with_chat = {p for p in owners if catalog.catalog_data()["providers"].get(p, {}).get("models")}
    assert owners, f"{variable} is not in pi's key table"
    assert providers == with_chat, label
    if not with_chat:  # TypeSafe: classifier models only, which the README lists as not supported
        assert any(p in json.dumps(catalog.catalog_data()["unsupported"]) for p in owners)


def test_catalog_keys_are_unique_and_every_provider_has_a_name() -> None:
    models = catalog.catalog_models()
    keys = [(m.provider, m.id) for m in models]
    assert len(keys) == len(set(keys)) == 1698
    names = catalog.provider_names()
    assert len(names) == 43 and names["anthropic"] == "Anthropic" and names["radius"] == "Radius"
    assert names["google-vertex"] == "Google Vertex AI" and names["typesafe"] == "TypeSafe"


def test_tiered_prices_apply_above_their_threshold() -> None:
    from pi_core.models.cost import calculate_cost
    from pi_core.types import Usage

    model = next(m for m in catalog.catalog_models() if m.cost.tiers)
    tier = model.cost.tiers[0]
    small = calculate_cost(model, Usage(input=1000, output=1000))
    assert small.input == pytest.approx(model.cost.input * 1000 / 1e6)
    big = calculate_cost(model, Usage(input=tier.input_tokens_above + 1, output=1000))
    assert big.input == pytest.approx(tier.input * (tier.input_tokens_above + 1) / 1e6)
    assert big.output == pytest.approx(tier.output * 1000 / 1e6)


def test_catalog_module_imports_no_sdk() -> None:
    code = ("import sys, json, pi_plugins.catalog, pi_plugins.local_models, pi_plugins.oauth; "
            "print(json.dumps([m for m in ('openai', 'anthropic', 'httpx2', 'pydantic', 'tarfile') "
            "if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
