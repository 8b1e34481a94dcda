"""``/reload`` for plugin files: import every ``-e`` / extension-folder plugin again, in place, so edits run."""

from __future__ import annotations

from pathlib import Path

from pi_core.errors import PiError
from pi_core.loader.plugins import _import_file, _register
from pi_core.registry import ExtensionError, PluginFailure, PluginSet

__all__ = ["reimport_files", "reload_plugins"]


def reload_plugins(plugins: PluginSet) -> list[str]:
    """``SessionParts.reimport`` (``/reload``): ``reimport_files``, each new failure reported as an extension
    error of its plugin (hook "reload": an ``extension_error`` event, a notice in the TUI, a line on stderr)
    instead of staying a start-up failure; the session goes on with the plugin's previous version."""
    before = len(plugins.failures)
    names = reimport_files(plugins)
    failed = plugins.failures[before:]
    del plugins.failures[before:]
    for failure in failed:
        plugins.report(ExtensionError(failure.name, failure.source, "reload", PiError(failure.reason)))
    return names


def reimport_files(plugins: PluginSet) -> list[str]:
    """Import every plugin loaded from a file or package folder (``-e``, extension folders) again, in place,
    so ``/reload`` picks up edits; returns the names re-imported. One that no longer imports (or now breaks
    a rule) keeps its previous module and gets a non-fatal entry in ``failures`` saying why."""
    done = []
    for name, info in list(plugins.info.items()):
        path = Path(info.source)
        if info.layer not in ("explicit", "project") or not (path.suffix == ".py" or path.is_dir()):
            continue
        old = plugins.pm.get_plugin(name)
        try:
            module = _import_file(path)
        except Exception as err:  # noqa: BLE001 - reported; the running version stays
            plugins.failures.append(PluginFailure(name, str(path.resolve()), f"{type(err).__name__}: {err}"))
            continue
        plugins.pm.unregister(name=name)
        failures = len(plugins.failures)
        _register(plugins, module, info)
        if len(plugins.failures) > failures:  # refused: keep what ran before
            plugins.failures[-1].fatal = False
            plugins.pm.register(old, name=name)
            continue
        done.append(name)
    return done
