"""catalog: the built-in model list (data in ``catalog_models.json``) and local-server provider presets."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.types import Model

CATALOG_PATH = Path(__file__).with_name("catalog_models.json")
_PROVIDER_DEFAULT_KEYS = ("api", "baseUrl", "headers", "compat")


@lru_cache(maxsize=1)
def catalog_data() -> dict[str, Any]:
    """The parsed catalog file: ``{"providers": {id: {name, api, baseUrl, models: [...]}}, "presets": {...}}``."""
    return json.loads(CATALOG_PATH.read_text(encoding="utf-8"))


def catalog_models() -> list[Model]:
    """Every catalog model with its provider's defaults (api, baseUrl) filled in."""
    from pi_core.types import Model

    models: list[Model] = []
    for provider, entry in catalog_data()["providers"].items():
        defaults = {key: entry[key] for key in _PROVIDER_DEFAULT_KEYS if key in entry}
        for raw in entry["models"]:
            fields = {**defaults, **raw, "provider": provider}
            fields.setdefault("name", raw["id"])
            models.append(Model.model_validate(fields))
    return models


def provider_presets() -> dict[str, dict[str, Any]]:
    """Provider-level defaults (name, api, baseUrl, apiKey, compat) for servers with no fixed model list.

    A ``models.toml``/``models.json`` provider named like a preset may leave these fields out.
    """
    presets = {name: dict(value) for name, value in catalog_data().get("presets", {}).items()}
    for name, entry in catalog_data()["providers"].items():
        presets.setdefault(name, {key: entry[key] for key in ("name", "api", "baseUrl") if key in entry})
    return presets


@hookimpl
def pi_models() -> list[Model]:
    return catalog_models()


# Not a declared hookspec (yet): pi_core.models.registry looks it up by name, so other plugins may add presets.
def pi_provider_presets() -> dict[str, dict[str, Any]]:
    return provider_presets()


pi_provider_presets = hookimpl(pi_provider_presets)  # type: ignore[assignment]
