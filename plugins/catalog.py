"""catalog: the built-in model list, generated from Pi's model data (``catalog_models.json``)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import config_paths, hookimpl

if TYPE_CHECKING:
    from pi_core.types import Model

CATALOG_PATH = Path(__file__).with_name("catalog_models.json")
CACHE_FILE = "models-catalog.json"  # written by ``pi update --models`` (pi_core.models.catalog_build)
FORMAT_VERSION = 1
_PROVIDER_DEFAULT_KEYS = ("api", "baseUrl", "headers")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or not isinstance(data.get("providers"), dict):
        return None
    return data


def _generated_at(data: dict[str, Any]) -> str:
    return str((data.get("source") or {}).get("generatedAt") or "")


@lru_cache(maxsize=1)
def catalog_data() -> dict[str, Any]:
    """The catalog in use: the one ``pi update --models`` saved, when it is newer than the bundled one."""
    bundled = _read(CATALOG_PATH)
    if bundled is None:
        raise RuntimeError(f"the bundled model catalog {CATALOG_PATH} is missing or unreadable")
    cached = _read(config_paths.agent_dir() / CACHE_FILE)
    if cached is not None and _generated_at(cached) > _generated_at(bundled):
        return cached
    return bundled


def catalog_models() -> list[Model]:
    """Every catalog model with its provider's defaults (api, baseUrl, headers) filled in."""
    from pi_core.types import Model

    models: list[Model] = []
    for provider, entry in catalog_data()["providers"].items():
        defaults = {key: entry[key] for key in _PROVIDER_DEFAULT_KEYS if key in entry}
        for raw in entry["models"]:
            fields = {**defaults, **raw, "provider": provider}
            fields.setdefault("name", raw["id"])
            models.append(Model.model_validate(fields))
    return models


def provider_names() -> dict[str, str]:
    """Display names by provider id (``anthropic`` → ``Anthropic``), classifier-only providers included."""
    return {provider: entry.get("name") or provider for provider, entry in catalog_data()["providers"].items()}


def provider_presets() -> dict[str, dict[str, Any]]:
    """Provider-level defaults (name, api, baseUrl) a ``models.toml``/``models.json`` entry may leave out."""
    return {name: {key: entry[key] for key in ("name", "api", "baseUrl") if entry.get(key)}
            for name, entry in catalog_data()["providers"].items()}


@hookimpl
def pi_models() -> list[Model]:
    return catalog_models()


@hookimpl
def pi_provider_presets() -> dict[str, dict[str, Any]]:
    return provider_presets()
