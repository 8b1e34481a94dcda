"""Class plugins: an entry point (or an embedder's ``register_module``) may name a class instead of a module.

Pi gives each extension its own closure per session; a class plugin is pi's way to the same: its state lives on
the instance, and pi makes one instance per session. The loader makes the first when the plugin loads (so
``pi plugins``, ``pi tools`` and the registry see its contributions, layered as a module's would be), and
registers it under the entry point's name. When its session ends (quit, and also ``/new``, ``/resume``, a fork,
``/reload``: the session is replaced) the instance is unregistered; the next session start makes a fresh one.

The instances of a ``PluginSet`` belong to one session at a time (``claim``): the session that started them ends
them. The SDK, the CLI and RPC build one ``PluginSet`` per session; a second session sharing one (ACP's sessions
of one project) shares the first session's instances and neither makes nor ends them.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from pi_core.registry import ExtensionError, PluginFailure, PluginInfo, PluginSet

__all__ = ["ClassPluginInfo", "end_session", "instantiate", "start_session"]


@dataclass(eq=False, repr=False)
class ClassPluginInfo(PluginInfo):
    """A plugin loaded from a class: ``factory`` makes its instance for each session."""

    factory: type | None = None
    owner: object = field(default=None, compare=False, repr=False)  # the session its live instance belongs to


def instantiate(plugins: PluginSet, target: type, info: PluginInfo, *, fatal: bool) -> tuple[object, PluginInfo] | None:
    """The first instance of class plugin ``target`` and its info; None (a failure recorded) when the class
    cannot be called without arguments or its ``__init__`` raises."""
    described = ClassPluginInfo(info.name, info.layer, info.source, info.replaces, info.optional, factory=target)
    try:
        return target(), described
    except Exception as err:  # noqa: BLE001 - a broken plugin is reported like a failed import
        plugins.failures.append(PluginFailure(info.name, info.source, f"{target.__qualname__}() raised "
                                              f"{type(err).__name__}: {err}", fatal=fatal,
                                              details=traceback.format_exc()))
        return None


def _class_plugins(plugins: PluginSet) -> list[ClassPluginInfo]:
    return [info for info in plugins.info.values() if isinstance(info, ClassPluginInfo) and info.factory]


def start_session(plugins: PluginSet, session: object) -> list[str]:
    """A session starts on ``plugins``: each class plugin without a live instance gets a fresh one, owned by
    ``session`` (as are the live ones nobody owns yet: the loader's first instances). Returns the names of the
    plugins whose instance is new, whose contributions (tools, commands, handlers) are to be collected again.
    A constructor that raises now is reported as the plugin's extension error; the plugin stays off."""
    renewed = []
    for info in _class_plugins(plugins):
        if plugins.pm.is_blocked(info.name):
            continue
        if plugins.pm.get_plugin(info.name) is not None:
            if info.owner is None:
                info.owner = session
            continue
        assert info.factory is not None
        try:
            instance = info.factory()
        except Exception as err:  # noqa: BLE001 - reported; the other plugins go on
            plugins.report(ExtensionError(info.name, info.source, "session_start", err))
            continue
        plugins.pm.register(instance, name=info.name)
        info.owner = session
        renewed.append(info.name)
    return renewed


def end_session(plugins: PluginSet, session: object) -> list[str]:
    """``session`` ends: the class plugin instances it owns are unregistered (their hooks are no longer called).
    Returns their names."""
    ended = []
    for info in _class_plugins(plugins):
        if info.owner is not session:
            continue
        info.owner = None
        if plugins.pm.get_plugin(info.name) is not None:
            plugins.pm.unregister(name=info.name)
            ended.append(info.name)
    return ended
