"""Entries of the model list that build their ``Model`` when first asked for.

The bundled catalog has ~1,700 models and a run looks at a few: the chosen one, or one provider's for a
pattern. An entry carries what lookups match on (provider, id, name) and what a custom model inherits
(api, base URL); the rest is validated into a ``Model`` on first use, once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from pi_core.types import Model

_PROVIDER_DEFAULTS = ("api", "baseUrl", "headers")  # provider-level values a catalog model may leave out


class ModelEntry:
    """One model of the list: its keys at once, its ``Model`` (``model``) built from ``fields`` on demand."""

    __slots__ = ("_fields", "_model", "api", "base_url", "id", "name", "provider")

    def __init__(self, provider: str, model_id: str, name: str, api: str, base_url: str, *,
                 fields: dict[str, Any] | tuple[dict[str, Any], dict[str, Any]] | None = None,
                 model: Model | None = None) -> None:
        """``fields``: the model's camelCase fields, or (provider defaults, the model's own) to merge then."""
        self.provider, self.id, self.name, self.api, self.base_url = provider, model_id, name, api, base_url
        self._fields, self._model = fields, model

    @classmethod
    def of(cls, model: Model) -> ModelEntry:
        return cls(model.provider, model.id, model.name, model.api, model.base_url, model=model)

    @classmethod
    def of_fields(cls, fields: dict[str, Any]) -> ModelEntry:
        """An entry for ``Model.model_validate(fields)`` (camelCase keys), validated when first used."""
        return cls(fields["provider"], fields["id"], fields.get("name", ""), fields.get("api", ""),
                   fields.get("baseUrl", ""), fields=fields)

    @property
    def model(self) -> Model:
        if self._model is None:
            fields = self._fields
            if isinstance(fields, tuple):
                defaults, own = fields
                fields = {**defaults, **own, "provider": self.provider, "name": own.get("name", self.id)}
            self._model = Model.model_validate(fields)
            self._fields = None
        return self._model


class LazyModels(Sequence[Model]):
    """A ``pi_models`` result whose models are built when read; the registry reads only ``entries``."""

    def __init__(self, entries: list[ModelEntry]) -> None:
        self.entries = entries

    def __len__(self) -> int:
        return len(self.entries)

    @overload
    def __getitem__(self, index: int) -> Model: ...

    @overload
    def __getitem__(self, index: slice) -> list[Model]: ...

    def __getitem__(self, index: int | slice) -> Model | list[Model]:
        if isinstance(index, slice):
            return [entry.model for entry in self.entries[index]]
        return self.entries[index].model

    def __iter__(self) -> Iterator[Model]:
        return (entry.model for entry in self.entries)


def entries_of(models: Sequence[Model]) -> list[ModelEntry]:
    return list(models.entries) if isinstance(models, LazyModels) else [ModelEntry.of(m) for m in models]


def catalog_entries(catalog: dict[str, Any]) -> LazyModels:
    """The models of a catalog (``{"providers": {id: {api, baseUrl, headers, models}}}``), each with its
    provider's defaults filled in and its name defaulting to its id; nothing validated yet."""
    entries: list[ModelEntry] = []
    for provider, entry in catalog["providers"].items():
        defaults = {key: entry[key] for key in _PROVIDER_DEFAULTS if key in entry}
        api, base_url = defaults.get("api", ""), defaults.get("baseUrl", "")
        for raw in entry["models"]:  # ~1,700 of them: no per-model dict until one is read
            model_id = raw["id"]
            entries.append(ModelEntry(provider, model_id, raw.get("name", model_id), raw.get("api", api),
                                      raw.get("baseUrl", base_url), fields=(defaults, raw)))
    return LazyModels(entries)
