"""catalog: the built-in model list, generated from Pi's model data (``catalog_models.json``)."""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import config_paths, hookimpl

if TYPE_CHECKING:
    from pi_core.models.entries import LazyModels
    from pi_core.types import Model

CATALOG_PATH = Path(__file__).with_name("catalog_models.json")
CACHE_FILE = "models-catalog.json"  # written by ``pi update --models`` (pi_core.models.catalog_build)
FORMAT_VERSION = 1


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
    """The catalog in use: the one ``pi update --models`` saved, when it is newer than the bundled one and
    every model in it is one pi can read (else the bundled one, with a warning naming the file)."""
    bundled = _read(CATALOG_PATH)
    if bundled is None:
        raise RuntimeError(f"the bundled model catalog {CATALOG_PATH} is missing or unreadable")
    path = config_paths.agent_dir() / CACHE_FILE
    cached = _read(path)
    if cached is not None and _generated_at(cached) > _generated_at(bundled):
        from pi_core.models.catalog_build import unreadable_model

        problem = unreadable_model(cached)
        if problem is None:
            return cached
        sys.stderr.write(f"Warning: ignoring {path}: {problem}. pi uses its bundled model catalog; run "
                         "`pi update --models` again or delete the file.\n")
    return bundled


def catalog_models() -> list[Model]:
    """Every catalog model with its provider's defaults (api, baseUrl, headers) filled in."""
    return list(lazy_catalog_models())


def lazy_catalog_models() -> LazyModels:
    """The catalog models, each validated into a ``Model`` only when a run reads it (most runs read a few)."""
    from pi_core.models.entries import catalog_entries

    return catalog_entries(catalog_data())


def provider_names() -> dict[str, str]:
    """Display names by provider id (``anthropic`` → ``Anthropic``), classifier-only providers included."""
    return {provider: entry.get("name") or provider for provider, entry in catalog_data()["providers"].items()}


def provider_presets() -> dict[str, dict[str, Any]]:
    """Provider-level defaults (name, api, baseUrl) a ``models.toml``/``models.json`` entry may leave out."""
    return {name: {key: entry[key] for key in ("name", "api", "baseUrl") if entry.get(key)}
            for name, entry in catalog_data()["providers"].items()}


@hookimpl
def pi_models() -> LazyModels:
    return lazy_catalog_models()


@hookimpl
def pi_provider_presets() -> dict[str, dict[str, Any]]:
    return provider_presets()
