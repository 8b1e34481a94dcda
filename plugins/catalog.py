"""catalog: the built-in model list, generated from Pi's model data (``catalog_models.json``).

A run looks at one provider's models, or a few: the bundled file is read a provider at a time
(``Catalog``), each provider's model lines parsed when a lookup first asks for that provider.
"""

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
_MODELS_OPEN, _MODELS_CLOSE, _MODEL_LINE = '\n      "models": [\n', "\n      ]\n", "\n        {"  # dump_catalog's layout


class Catalog:
    """A catalog file: its providers' own fields at once, each provider's models when first asked for."""

    def __init__(self, data: dict[str, Any], model_lines: dict[str, tuple[str, int]] | None = None,
                 path: Path | None = None) -> None:
        """``data`` as the file reads; ``model_lines``: providers whose ``models`` are still text (their
        lines, and how many)."""
        self.data, self.path = data, path
        self._lines = model_lines or {}

    @property
    def providers(self) -> dict[str, dict[str, Any]]:
        """Provider id -> its entry (``name``, ``api``, ``baseUrl``, ``headers``, ``models``): read ``models``
        through ``models()``, which parses them first."""
        providers: dict[str, dict[str, Any]] = self.data["providers"]
        return providers

    def model_count(self, provider: str) -> int:
        lines = self._lines.get(provider)
        return lines[1] if lines is not None else len(self.providers[provider].get("models") or [])

    def models(self, provider: str) -> list[dict[str, Any]]:
        """The raw (camelCase) models of ``provider``, parsed on the first call."""
        entry = self.providers[provider]
        lines = self._lines.get(provider)
        if lines is not None:
            try:
                entry["models"] = json.loads(f"[{lines[0]}]")
            except ValueError as err:
                raise RuntimeError(f"the model catalog {self.path} is unreadable: the {provider} models: {err}") from err
            self._lines.pop(provider, None)
        models: list[dict[str, Any]] = entry.get("models") or []
        return models

    def parsed(self) -> list[str]:
        """Providers whose models have been parsed (all of them for a file read whole)."""
        return [name for name in self.providers if name not in self._lines]

    def whole(self) -> dict[str, Any]:
        """The catalog as ``json.loads`` of the file gives it (every provider's models parsed)."""
        for provider in list(self._lines):
            self.models(provider)
        return self.data


def _split(text: str, path: Path) -> Catalog | None:
    """The catalog in ``dump_catalog``'s layout (one model per line) with the model lines left unparsed (a
    broken one is found when its provider is read); None when ``text`` is laid out otherwise."""
    kept: list[str] = []
    blocks: list[tuple[str, int]] = []
    start = 0
    while (found := text.find(_MODELS_OPEN, start)) >= 0:
        body = found + len(_MODELS_OPEN)
        kept.append(text[start:body])
        if text.startswith(_MODELS_CLOSE, body - 1):  # no models
            blocks.append(("", 0))
            start = body
            continue
        end = text.find(_MODELS_CLOSE, body)
        block = text[body:end]
        count = block.count("\n") + 1
        if end < 0 or not block.startswith(_MODEL_LINE[1:]) or block.count(_MODEL_LINE) != count - 1:
            return None
        blocks.append((block, count))
        start = end + 1
    kept.append(text[start:])
    try:
        data = json.loads("".join(kept))
    except ValueError:
        return None
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict) or len(providers) != len(blocks) or \
            not all(isinstance(e, dict) and e.get("models") == [] for e in providers.values()):
        return None
    return Catalog(data, dict(zip(providers, blocks)), path)


def _read(path: Path, *, lazy: bool = False) -> Catalog | None:
    try:
        text = path.read_text(encoding="utf-8")
        catalog = _split(text, path) if lazy else None
        data = catalog.data if catalog is not None else json.loads(text)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION or not isinstance(data.get("providers"), dict):
        return None
    return catalog or Catalog(data, path=path)


def _generated_at(data: dict[str, Any]) -> str:
    return str((data.get("source") or {}).get("generatedAt") or "")


@lru_cache(maxsize=1)
def loaded_catalog() -> Catalog:
    """The catalog in use: the one ``pi update --models`` saved, when it is newer than the bundled one and
    every model in it is one pi can read (else the bundled one, with a warning naming the file)."""
    bundled = _read(CATALOG_PATH, lazy=True)  # written by dump_catalog; tests/providers/test_catalog.py checks it
    if bundled is None:
        raise RuntimeError(f"the bundled model catalog {CATALOG_PATH} is missing or unreadable")
    path = config_paths.agent_dir() / CACHE_FILE
    cached = _read(path)
    if cached is not None and _generated_at(cached.data) > _generated_at(bundled.data):
        from pi_core.models.catalog_build import unreadable_model

        problem = unreadable_model(cached.data)
        if problem is None:
            return cached
        sys.stderr.write(f"Warning: ignoring {path}: {problem}. pi uses its bundled model catalog; run "
                         "`pi update --models` again or delete the file.\n")
    return bundled


def catalog_data() -> dict[str, Any]:
    """The catalog in use as one dict (every model parsed)."""
    return loaded_catalog().whole()


def catalog_models() -> list[Model]:
    """Every catalog model with its provider's defaults (api, baseUrl, headers) filled in."""
    return list(lazy_catalog_models())


def lazy_catalog_models() -> LazyModels:
    """The catalog models, each provider's read when a lookup asks for it, each model validated into a
    ``Model`` only when a run reads it (most runs read a few)."""
    from pi_core.models.entries import LazyModels, ProviderGroup, provider_entries

    data = loaded_catalog()

    def group(provider: str, entry: dict[str, Any]) -> ProviderGroup:
        return ProviderGroup(provider, data.model_count(provider),
                             lambda: provider_entries(provider, entry, data.models(provider)))

    return LazyModels(groups=[group(provider, entry) for provider, entry in data.providers.items()])


def provider_names() -> dict[str, str]:
    """Display names by provider id (``anthropic`` → ``Anthropic``), classifier-only providers included."""
    return {provider: entry.get("name") or provider for provider, entry in loaded_catalog().providers.items()}


def provider_presets() -> dict[str, dict[str, Any]]:
    """Provider-level defaults (name, api, baseUrl) a ``models.toml``/``models.json`` entry may leave out."""
    return {name: {key: entry[key] for key in ("name", "api", "baseUrl") if entry.get(key)}
            for name, entry in loaded_catalog().providers.items()}


@hookimpl
def pi_models() -> LazyModels:
    return lazy_catalog_models()


@hookimpl
def pi_provider_presets() -> dict[str, dict[str, Any]]:
    return provider_presets()
