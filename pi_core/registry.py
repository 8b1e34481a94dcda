"""The loaded plugins (PluginSet) and what they contribute (tools, providers, renderers, modes) by name.

Contributions are gathered layer by layer (built-in, installed, project, explicit). When two plugins contribute
the same name, the later one wins and the loser is kept in ``overrides`` so ``pi plugins`` can show it.
A hook that raises is recorded in ``failures`` against its plugin and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import pluggy

T = TypeVar("T")
Layer = Literal["builtin", "installed", "project", "explicit"]
# project: a trusted project's .pi/extensions and ``pi install -l`` packages; explicit: ``-e`` files, embedding
LAYER_RANK: dict[str, int] = {"builtin": 0, "installed": 1, "project": 2, "explicit": 3}


@dataclass
class PluginInfo:
    name: str
    layer: Layer
    source: str  # module path, file path or "dist 1.0"
    replaces: str | None = None  # "builtin" when an installed plugin took a built-in's name


@dataclass
class PluginFailure:
    name: str
    source: str
    reason: str


@dataclass
class PluginSet:
    """The plugin manager plus what was learned while loading it."""

    pm: pluggy.PluginManager
    info: dict[str, PluginInfo] = field(default_factory=dict)
    failures: list[PluginFailure] = field(default_factory=list)

    def layer_of(self, plugin_name: str) -> Layer:
        info = self.info.get(plugin_name)
        return info.layer if info else "explicit"

    def ordered_impls(self, hook_name: str) -> list[tuple[str, object]]:
        """(plugin name, hookimpl) for one hook, lowest layer first, then load order."""
        caller = getattr(self.pm.hook, hook_name)
        order = list(self.info)
        impls = [(self.pm.get_name(impl.plugin) or "", impl) for impl in caller.get_hookimpls()]
        impls.sort(key=lambda pair: (LAYER_RANK[self.layer_of(pair[0])],
                                     order.index(pair[0]) if pair[0] in order else len(order)))
        return impls


@dataclass
class Override:
    kind: str  # "tool", "provider", "renderer", "model"
    name: str
    winner: str  # plugin name
    loser: str


@dataclass
class Contributions(Generic[T]):
    items: dict[str, T] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # item name -> plugin name
    by_plugin: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Registry:
    plugins: PluginSet
    tools: Contributions[Any] = field(default_factory=Contributions)
    providers: Contributions[Any] = field(default_factory=Contributions)
    renderers: Contributions[Any] = field(default_factory=Contributions)
    modes: Contributions[Any] = field(default_factory=Contributions)
    overrides: list[Override] = field(default_factory=list)

    @property
    def failures(self) -> list[PluginFailure]:
        return self.plugins.failures


def call_each(plugins: PluginSet, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """Call one hook implementation at a time, lowest layer first; record and skip any that raises."""
    results: list[tuple[str, Any]] = []
    for plugin_name, impl in plugins.ordered_impls(hook_name):
        try:
            args = {k: v for k, v in kwargs.items() if k in impl.argnames}  # type: ignore[attr-defined]
            value = impl.function(**args)  # type: ignore[attr-defined]
        except Exception as err:  # noqa: BLE001 - a broken plugin must not stop pi
            plugins.failures.append(
                PluginFailure(plugin_name, hook_name, f"{hook_name} raised {type(err).__name__}: {err}"))
            continue
        if value is not None:
            results.append((plugin_name, value))
    return results


def _collect(registry: Registry, target: Contributions[Any], kind: str, hook: str, key: str) -> None:
    for plugin_name, values in call_each(registry.plugins, hook):
        for item in values:
            name = getattr(item, key)
            if name in target.items and target.owner[name] != plugin_name:
                registry.overrides.append(Override(kind, name, plugin_name, target.owner[name]))
            target.items[name] = item
            target.owner[name] = plugin_name
            target.by_plugin.setdefault(plugin_name, []).append(name)


def build_registry(plugins: PluginSet) -> Registry:
    registry = Registry(plugins)
    _collect(registry, registry.tools, "tool", "pi_tools", "name")
    _collect(registry, registry.providers, "provider", "pi_providers", "api")
    _collect(registry, registry.renderers, "renderer", "pi_renderers", "tool_name")
    _collect(registry, registry.modes, "mode", "pi_modes", "name")
    return registry
