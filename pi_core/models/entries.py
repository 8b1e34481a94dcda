"""Entries of the model list that build their ``Model`` when first asked for.

The bundled catalog has ~1,700 models and a run looks at a few: the chosen one, or one provider's for a
pattern. An entry carries what lookups match on (provider, id, name) and what a custom model inherits
(api, base URL); the rest is validated into a ``Model`` on first use, once. Entries come in provider
groups (``ProviderGroup``): a source may make a provider's entries only when a lookup reaches that provider.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from pi_core.types import Model

_PROVIDER_DEFAULTS = ("api", "baseUrl", "headers")  # provider-level values a catalog model may leave out
Key = tuple[str, str]  # (provider, model id)


class ModelEntry:
    """One model of the list: its keys at once, its ``Model`` (``model``) built from ``fields`` on demand."""

    __slots__ = ("_fields", "_model", "api", "base_url", "id", "name", "provider")

    def __init__(self, provider: str, model_id: str, name: str, api: str, base_url: str, *,
                 fields: dict[str, Any] | tuple[dict[str, Any], dict[str, Any]] | None = None,  # open: model fields, JSON as the catalog or models file has them
                 model: Model | None = None) -> None:
        """``fields``: the model's camelCase fields, or (provider defaults, the model's own) to merge then."""
        self.provider, self.id, self.name, self.api, self.base_url = provider, model_id, name, api, base_url
        self._fields, self._model = fields, model

    @classmethod
    def of(cls, model: Model) -> ModelEntry:
        return cls(model.provider, model.id, model.name, model.api, model.base_url, model=model)

    @classmethod
    def of_fields(cls, fields: dict[str, Any]) -> ModelEntry:  # open: model fields, JSON as the catalog or models file has them
        """An entry for ``Model.model_validate(fields)`` (camelCase keys), validated when first used."""
        return cls(fields["provider"], fields["id"], fields.get("name", ""), fields.get("api", ""),
                   fields.get("baseUrl", ""), fields=fields)

    @property
    def key(self) -> Key:
        return self.provider, self.id

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


class ProviderGroup:
    """``count`` models of one provider from one source; ``entries()`` makes them (``load``) on the first call."""

    __slots__ = ("_entries", "_load", "count", "provider")

    def __init__(self, provider: str, count: int, load: Callable[[], list[ModelEntry]]) -> None:
        self.provider, self.count = provider, count
        self._load: Callable[[], list[ModelEntry]] | None = load
        self._entries: list[ModelEntry] = []

    @classmethod
    def of(cls, entries: list[ModelEntry]) -> ProviderGroup:
        """A group of entries already made (all of one provider)."""
        group = cls(entries[0].provider, len(entries), list)
        group._entries, group._load = entries, None
        return group

    @property
    def loaded(self) -> bool:
        return self._load is None

    def entries(self) -> list[ModelEntry]:
        if self._load is not None:
            self._entries, self._load = self._load(), None
        return self._entries


def runs(entries: Iterable[ModelEntry]) -> list[ProviderGroup]:
    """``entries`` as groups, one per run of consecutive entries of one provider (their order kept)."""
    groups: list[list[ModelEntry]] = []
    for entry in entries:
        if groups and groups[-1][0].provider == entry.provider:
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return [ProviderGroup.of(group) for group in groups]


class LazyModels(Sequence[Model]):
    """A ``pi_models`` result whose models are built when read; the registry reads only ``groups``."""

    def __init__(self, entries: list[ModelEntry] | None = None, *, groups: list[ProviderGroup] | None = None) -> None:
        self.groups = groups if groups is not None else runs(entries or [])

    @property
    def entries(self) -> list[ModelEntry]:
        return [entry for group in self.groups for entry in group.entries()]

    def __len__(self) -> int:
        return sum(group.count for group in self.groups)

    @overload
    def __getitem__(self, index: int) -> Model: ...

    @overload
    def __getitem__(self, index: slice) -> list[Model]: ...

    def __getitem__(self, index: int | slice) -> Model | list[Model]:
        if isinstance(index, slice):
            return [entry.model for entry in self.entries[index]]
        return self.entries[index].model

    def __iter__(self) -> Iterator[Model]:
        return (entry.model for group in self.groups for entry in group.entries())


def entries_of(models: Sequence[Model]) -> list[ModelEntry]:
    return list(models.entries) if isinstance(models, LazyModels) else [ModelEntry.of(m) for m in models]


def groups_of(models: Sequence[Model]) -> list[ProviderGroup]:
    return list(models.groups) if isinstance(models, LazyModels) else runs(ModelEntry.of(m) for m in models)


class EntryTable:
    """The model list, in order, as provider groups: a lookup for one provider makes only that provider's entries.

    A model (provider, id) given by several groups keeps the place of its first one and the entry of its last
    (as a dict keyed by (provider, id) filled in group order would).
    """

    def __init__(self, groups: Iterable[ProviderGroup]) -> None:
        self._groups = [group for group in groups if group.count]

    def __bool__(self) -> bool:
        return bool(self._groups)

    def providers(self) -> list[str]:
        """Every provider with models, in the order of their first model."""
        return list(dict.fromkeys(group.provider for group in self._groups))

    def where(self, keep: Callable[[str], bool]) -> list[ModelEntry]:
        """The entries of the providers ``keep`` accepts (asked once per provider), in list order."""
        chosen: dict[str, bool] = {}
        merged: dict[Key, ModelEntry] = {}
        for group in self._groups:
            wanted = chosen.get(group.provider)
            if wanted is None:
                wanted = chosen[group.provider] = keep(group.provider)
            if wanted:
                for entry in group.entries():
                    merged[entry.key] = entry
        return list(merged.values())

    def all(self) -> list[ModelEntry]:
        return self.where(lambda _provider: True)

    def of(self, provider: str) -> list[ModelEntry]:
        return self.where(provider.__eq__)

    def loaded_providers(self) -> list[str]:
        """Providers some of whose entries have been made (what lookups reached so far)."""
        return list(dict.fromkeys(group.provider for group in self._groups if group.loaded))

    def replaced(self, providers: set[str], changed: dict[Key, ModelEntry | None],
                 added: Iterable[ModelEntry] = ()) -> EntryTable:
        """A table where ``changed`` entries of ``providers`` take their model's place (None: removed) and
        ``added`` ones come last; the other providers' groups stay as they are."""
        current = {entry.key: entry for entry in self.where(providers.__contains__)}
        groups: list[ProviderGroup] = []
        placed: set[Key] = set()
        for group in self._groups:
            if group.provider not in providers:
                groups.append(group)
                continue
            kept = []
            for entry in group.entries():
                if entry.key in placed:
                    continue  # its first group holds its place
                placed.add(entry.key)
                new = changed.get(entry.key, current[entry.key])
                if new is not None:
                    kept.append(new)
            if kept:
                groups.append(ProviderGroup.of(kept))
        return EntryTable([*groups, *runs(added)])


def provider_entries(provider: str, entry: dict[str, Any], models: list[dict[str, Any]]) -> list[ModelEntry]:  # open: model fields, JSON as the catalog or models file has them
    """The entries of one catalog provider (``entry``: its api, baseUrl, headers) over its raw ``models``,
    each with the provider's defaults filled in and its name defaulting to its id; nothing validated yet."""
    defaults = {key: entry[key] for key in _PROVIDER_DEFAULTS if key in entry}
    api, base_url = defaults.get("api", ""), defaults.get("baseUrl", "")
    return [ModelEntry(provider, raw["id"], raw.get("name", raw["id"]), raw.get("api", api),
                       raw.get("baseUrl", base_url), fields=(defaults, raw)) for raw in models]


def catalog_entries(catalog: dict[str, Any]) -> LazyModels:  # open: model fields, JSON as the catalog or models file has them
    """The models of a catalog (``{"providers": {id: {api, baseUrl, headers, models}}}``), nothing validated yet."""
    return LazyModels([e for provider, entry in catalog["providers"].items()
                       for e in provider_entries(provider, entry, entry["models"])])
