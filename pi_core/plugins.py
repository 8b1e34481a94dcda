"""Find, load and layer plugins: built-in < installed < project (``.pi/extensions``, ``pi install -l``
packages, loaded only once the project is trusted) < explicit (``-e`` files).

One entry point per name: an installed distribution whose entry point is named like a built-in one
replaces the built-in plugin; two installed distributions with one name raise PluginConflict. A plugin
that fails to import is recorded in ``failures`` and skipped, so pi still starts.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pluggy

from pi_core import hookspecs
from pi_core.errors import PluginConflict
from pi_core.registry import LAYER_RANK, Layer, PluginFailure, PluginInfo, PluginSet

__all__ = ["BUILTIN_DIST", "LAYER_RANK", "Layer", "PluginFailure", "PluginInfo", "PluginSet", "discover_entry_points",
           "load_plugins", "load_project_plugins", "new_plugin_manager", "project_site", "register_file", "register_module"]

if TYPE_CHECKING:
    from pi_core.discovery import CachedEntryPoint as EntryPoint

BUILTIN_DIST = "pi-harness"


def new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("pi")
    pm.add_hookspecs(hookspecs)
    return pm


def discover_entry_points() -> dict[str, list[EntryPoint]]:
    """Entry points of group ``pi``, grouped by name. Imports nothing; the metadata scan is cached,
    keyed on what is installed, so a start-up does not re-read every distribution's metadata."""
    from pi_core.discovery import entry_points

    found: dict[str, list[EntryPoint]] = {}
    for ep in entry_points("pi"):
        found.setdefault(ep.name, []).append(ep)
    return found


def _dist_label(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist else ep.value


def _is_builtin(ep: EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.name.replace("_", "-").lower() == BUILTIN_DIST


def load_plugins(
    *,
    load_entry_points: bool = True,
    extensions: list[str | Path] = (),  # type: ignore[assignment]
    project_dir: Path | None = None,
    discover_extensions: bool = True,
    disabled: set[str] = frozenset(),  # type: ignore[assignment]
    agent_dir: Path | None = None,
) -> PluginSet:
    """Build the plugin manager for one pi run. ``project_dir``'s ``.pi/extensions`` load here too; pi's
    start-up passes None and calls ``load_project_plugins`` once the project is trusted."""
    plugins = PluginSet(pm=new_plugin_manager())
    for name in disabled:
        plugins.pm.set_blocked(name)
    if load_entry_points:
        _load_entry_points(plugins, disabled)
    if discover_extensions and agent_dir is not None:
        for path in _extension_files(agent_dir / "extensions"):
            register_file(plugins, path, disabled)
    if discover_extensions and project_dir is not None:
        load_project_plugins(plugins, project_dir, disabled, packages=False)
    for given in extensions:
        register_file(plugins, Path(given), disabled)
    return plugins


def _extension_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.py")) if directory.is_dir() else []


def load_project_plugins(plugins: PluginSet, project_dir: Path, disabled: set[str] = frozenset(),  # type: ignore[assignment]
                         *, packages: bool = True, extensions: bool = True) -> None:
    """Add a trusted project's plugins (layer ``project``): its ``.pi/extensions/*.py`` files and the entry
    points of the distributions ``pi install -l`` put in ``.pi/packages`` (their folder joins the end of
    ``sys.path`` with its ``.pth`` files, so pi's own environment wins an import-name clash)."""
    if packages:
        site = project_site(project_dir)
        if site.is_dir():
            from pi_core.discovery import entry_points

            if str(site) not in sys.path:
                import site as site_module

                site_module.addsitedir(str(site))  # appends, and reads .pth files (editable installs)
            found = sorted(entry_points("pi", paths=[str(site)]), key=lambda ep: ep.name)
            for ep in found:
                _load_project_entry_point(plugins, ep, disabled)
    for path in _extension_files(project_dir / ".pi" / "extensions") if extensions else []:
        register_file(plugins, path, disabled, layer="project")


def project_site(project_dir: Path) -> Path:
    """Where ``pi install -l`` puts distributions: ``.pi/packages`` is pip's ``--prefix``, and this its
    ``site-packages`` for the running Python."""
    import sysconfig

    prefix = str(Path(project_dir) / ".pi" / "packages")
    return Path(sysconfig.get_paths(vars={"base": prefix, "platbase": prefix})["purelib"])


def _load_project_entry_point(plugins: PluginSet, ep: EntryPoint, disabled: set[str]) -> None:
    if ep.name in disabled:
        return
    try:
        module = ep.load()
    except Exception as err:  # noqa: BLE001 - a broken plugin must not stop pi
        plugins.failures.append(PluginFailure(ep.name, f"{_dist_label(ep)} (project)", f"{type(err).__name__}: {err}"))
        return
    replaces = plugins.info[ep.name].layer if ep.name in plugins.info else None
    if replaces:
        plugins.pm.unregister(name=ep.name)
        del plugins.info[ep.name]
    _register(plugins, module, ep.name, PluginInfo(ep.name, "project", f"{_dist_label(ep)} (project)",
                                                   replaces=replaces))


def _load_entry_points(plugins: PluginSet, disabled: set[str]) -> None:
    for name, eps in sorted(discover_entry_points().items()):
        builtin = [ep for ep in eps if _is_builtin(ep)]
        others = [ep for ep in eps if not _is_builtin(ep)]
        if len(others) > 1:
            raise PluginConflict(
                f"plugin name {name!r} is registered by several packages: "
                + ", ".join(_dist_label(ep) for ep in others)
                + f". Uninstall one, or disable the name with --disable-plugin {name}."
            )
        chosen = others[0] if others else builtin[0]
        layer: Layer = "installed" if others else "builtin"
        if name in disabled:
            continue
        try:
            module = chosen.load()
        except Exception as err:  # noqa: BLE001 - a broken plugin must not stop pi
            plugins.failures.append(PluginFailure(name, _dist_label(chosen), f"{type(err).__name__}: {err}"))
            continue
        _register(plugins, module, name, PluginInfo(
            name, layer, _dist_label(chosen), replaces="builtin" if (others and builtin) else None))


def register_file(plugins: PluginSet, path: Path, disabled: set[str] = frozenset(),  # type: ignore[assignment]
                  layer: Layer = "explicit") -> None:
    """Load a plugin from a ``.py`` file: ``-e path.py`` and ``<agentDir>/extensions`` (explicit), a trusted
    project's ``.pi/extensions`` (project)."""
    name = path.stem
    if name in disabled:
        return
    try:
        module = _import_file(path)
    except Exception as err:  # noqa: BLE001 - a broken plugin must not stop pi
        plugins.failures.append(PluginFailure(name, str(path), f"{type(err).__name__}: {err}"))
        return
    replaces = name if name in plugins.info else None
    if replaces:
        plugins.pm.unregister(name=name)
        del plugins.info[name]
    _register(plugins, module, name, PluginInfo(name, layer, str(path), replaces=replaces and "earlier plugin"))


def register_module(plugins: PluginSet, module: object, name: str, layer: Layer = "explicit") -> None:
    """Register an already imported module or object (tests, embedding)."""
    if name in plugins.info:
        plugins.pm.unregister(name=name)
        del plugins.info[name]
    _register(plugins, module, name, PluginInfo(name, layer, getattr(module, "__name__", repr(module))))


def _register(plugins: PluginSet, module: object, name: str, info: PluginInfo) -> None:
    try:
        plugins.pm.register(module, name=name)
    except Exception as err:  # noqa: BLE001 - e.g. a hookimpl with a misspelt name
        plugins.failures.append(PluginFailure(name, info.source, f"{type(err).__name__}: {err}"))
        return
    plugins.info[name] = info


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    module_name = f"pi_extension_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
