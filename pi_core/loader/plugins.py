"""Find, load and layer plugins: built-in < installed < project (``.pi/extensions``, ``pi install -l``
packages, loaded only once the project is trusted) < explicit (``-e`` files).

One entry point per name: an installed distribution whose entry point is named like a built-in one
replaces the built-in plugin; two installed distributions with one name raise PluginConflict unless the
name is disabled. Entry points of group ``pi.optional`` are available but off until enabled by name
(setting ``enabledPlugins``, or ``-e plugin:NAME``). An installed plugin that fails to import is recorded in
``failures`` and skipped, as is one whose ``@hookimpl`` matches no hook (pi starts and warns, naming the
plugin, the hook and its file:line); an explicit plugin (``-e``, an extension file, an opt-in asked for by
name) that fails is a fatal failure (pi refuses to start, naming it), as Pi does for ``-e``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import FunctionType, MethodType, ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from pi_core import hookspecs
from pi_core.errors import PluginConflict
from pi_core.loader import discovery
from pi_core.loader.discovery import OPTIONAL_GROUP, PLUGIN_PREFIX, dist_label
from pi_core.loader.instances import instantiate
from pi_core.registry import HookManager, Layer, PluginFailure, PluginInfo, PluginSet

__all__ = ["OPTIONAL_GROUP", "Layer", "PluginFailure", "PluginInfo", "PluginSet", "load_plugins",
           "new_plugin_manager", "register_file", "register_module"]

if TYPE_CHECKING:
    from pi_core.loader.discovery import CachedEntryPoint as EntryPoint

_SPEC_NAMES = sorted(name for name in dir(hookspecs) if name.startswith("pi_"))


class _Manager(HookManager):
    """pluggy's manager, reading a module's functions from its ``__dict__``: pluggy looks at every name of
    every plugin module with ``inspect.getattr_static`` (most of a load's own time), which finds the same."""

    def parse_hookimpl_opts(self, plugin: object, name: str) -> pluggy.HookimplOpts | None:
        opts = _module_opts(plugin, name, "pi_impl")
        return super().parse_hookimpl_opts(plugin, name) if opts is _ASK_PLUGGY else opts

    def parse_hookspec_opts(self, module_or_class: ModuleType | type, name: str) -> pluggy.HookspecOpts | None:
        opts = _module_opts(module_or_class, name, "pi_spec")
        return super().parse_hookspec_opts(module_or_class, name) if opts is _ASK_PLUGGY else opts


_ASK_PLUGGY: Any = object()


def _module_opts(owner: object, name: str, marker: str) -> Any:
    """A module function's marker options (or None); anything bound or not a module is pluggy's to read."""
    if not isinstance(owner, ModuleType):
        return _ASK_PLUGGY
    value = owner.__dict__.get(name)
    if isinstance(value, FunctionType):
        opts = value.__dict__.get(marker)
        return opts if isinstance(opts, dict) else None
    return _ASK_PLUGGY if isinstance(value, (staticmethod, classmethod, MethodType)) else None


def new_plugin_manager() -> HookManager:
    pm = _Manager("pi")
    pm.add_hookspecs(hookspecs)
    return pm


def load_plugins(
    *,
    load_entry_points: bool = True,
    extensions: list[str | Path] = (),  # type: ignore[assignment]
    project_dir: Path | None = None,
    discover_extensions: bool = True,
    disabled: set[str] = frozenset(),  # type: ignore[assignment]
    agent_dir: Path | None = None,
    enabled: set[str] = frozenset(),  # type: ignore[assignment]
) -> PluginSet:
    """Build the plugin manager for one pi run. ``extensions`` are ``-e`` values: files, package
    directories, or ``plugin:NAME`` for an opt-in entry point; ``enabled`` names opt-in plugins to load.
    ``project_dir``'s ``.pi/extensions`` load here too; pi's start-up passes None and calls
    ``load_project_plugins`` once the project is trusted."""
    plugins = PluginSet(pm=new_plugin_manager())
    for name in disabled:
        plugins.pm.set_blocked(name)
    wanted = set(enabled) | {str(e)[len(PLUGIN_PREFIX):] for e in extensions if str(e).startswith(PLUGIN_PREFIX)}
    if load_entry_points or wanted:
        groups = discovery.discover_groups(("pi", OPTIONAL_GROUP))  # one look at what is installed for both
        _load_entry_points(plugins, groups["pi"] if load_entry_points else {}, disabled)
        _load_optional(plugins, groups[OPTIONAL_GROUP], wanted, disabled)
    if discover_extensions and agent_dir is not None:
        for path in _extension_files(agent_dir / "extensions"):
            register_file(plugins, path, disabled)
    if discover_extensions and project_dir is not None:
        load_project_plugins(plugins, project_dir, disabled, packages=False)
    for given in extensions:
        if not str(given).startswith(PLUGIN_PREFIX):
            register_file(plugins, Path(given), disabled)
    return plugins


def _extension_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.py")) if directory.is_dir() else []


def load_project_plugins(plugins: PluginSet, project_dir: Path, disabled: set[str] = frozenset(),  # type: ignore[assignment]
                         *, packages: bool = True, extensions: bool = True) -> None:
    """Add a trusted project's plugins (layer ``project``): its ``.pi/extensions/*.py`` files and the entry
    points of the distributions ``pi install -l`` put in ``.pi/packages`` (their folder joins the end of
    ``sys.path`` with its ``.pth`` files, so pi's own environment wins an import-name clash)."""
    if packages and (project_dir / ".pi" / "packages").is_dir():  # no sysconfig unless pi install -l ran here
        site = project_site(project_dir)
        if site.is_dir():
            from pi_core.loader.discovery import entry_points

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
        plugins.failures.append(PluginFailure(ep.name, f"{dist_label(ep)} (project)", f"{type(err).__name__}: {err}",
                                              details=traceback.format_exc()))
        return
    replaces = plugins.info[ep.name].layer if ep.name in plugins.info else None
    if replaces:
        plugins.pm.unregister(name=ep.name)
        del plugins.info[ep.name]
    _register(plugins, module, PluginInfo(ep.name, "project", f"{dist_label(ep)} (project)", replaces=replaces),
              fatal=False)


def _load_entry_points(plugins: PluginSet, found: dict[str, list[EntryPoint]], disabled: set[str]) -> None:
    for name, eps in sorted(found.items()):
        if name in disabled:
            continue  # checked first: --disable-plugin NAME is how a user resolves a conflict
        builtin = [ep for ep in eps if discovery.is_builtin(ep)]
        others = [ep for ep in eps if not discovery.is_builtin(ep)]
        if len(others) > 1:
            raise PluginConflict(
                f"plugin name {name!r} is registered by several packages: "
                + ", ".join(dist_label(ep) for ep in others)
                + f". Uninstall one, or disable the name with --disable-plugin {name}."
            )
        chosen = discovery.chosen_entry_point(eps)
        layer: Layer = "installed" if others else "builtin"
        _load_entry_point(plugins, chosen, PluginInfo(name, layer, dist_label(chosen),
                                                      replaces="builtin" if (others and builtin) else None))


def _load_optional(plugins: PluginSet, available: dict[str, list[EntryPoint]], wanted: set[str],
                   disabled: set[str]) -> None:
    plugins.available = {name: dist_label(eps[0]) for name, eps in available.items()}
    for name in sorted(wanted - disabled):
        eps = available.get(name)
        if not eps:
            known = ", ".join(sorted(available)) or "none installed"
            plugins.failures.append(PluginFailure(name, PLUGIN_PREFIX + name, "no opt-in plugin of that name "
                                                  f"(entry-point group {OPTIONAL_GROUP}; available: {known})",
                                                  fatal=True))
            continue
        _load_entry_point(plugins, eps[0], PluginInfo(name, "installed", dist_label(eps[0]), optional=True),
                          fatal=True)


def _load_entry_point(plugins: PluginSet, ep: EntryPoint, info: PluginInfo, *, fatal: bool = False) -> None:
    try:
        module = ep.load()
    except Exception as err:  # noqa: BLE001 - a broken installed plugin must not stop pi
        plugins.failures.append(PluginFailure(info.name, info.source, f"{type(err).__name__}: {err}", fatal=fatal,
                                              details=traceback.format_exc()))
        return
    _register(plugins, module, info, fatal=fatal)


def register_file(plugins: PluginSet, path: Path, disabled: set[str] = frozenset(),  # type: ignore[assignment]
                  layer: Layer = "explicit") -> None:
    """Load a plugin from a ``.py`` file or a package directory: ``-e`` and ``<agentDir>/extensions`` (layer
    explicit), a trusted project's ``.pi/extensions`` (project). A missing path or a failing import is a fatal
    failure."""
    name = path.stem if path.suffix == ".py" else path.name
    if name in disabled:
        return
    absolute = path.resolve()
    try:
        if not path.exists():
            raise FileNotFoundError(f"Extension path does not exist: {absolute}")
        module = _import_file(path)
    except Exception as err:  # noqa: BLE001 - reported as the plugin's failure
        reason = str(err) if isinstance(err, FileNotFoundError) else f"{type(err).__name__}: {err}"
        plugins.failures.append(PluginFailure(name, str(absolute), reason, fatal=True))
        return
    replaces = name if name in plugins.info else None
    if replaces:
        plugins.pm.unregister(name=name)
        del plugins.info[name]
    _register(plugins, module, PluginInfo(name, layer, str(path), replaces=replaces and "earlier plugin"))


def register_module(plugins: PluginSet, module: object, name: str, layer: Layer = "explicit") -> None:
    """Register an already imported module or object (tests, embedding)."""
    if name in plugins.info:
        plugins.pm.unregister(name=name)
        del plugins.info[name]
    _register(plugins, module, PluginInfo(name, layer, getattr(module, "__name__", repr(module))))


def _register(plugins: PluginSet, module: object, info: PluginInfo, *, fatal: bool = True) -> None:
    if isinstance(module, type):  # a class plugin: its first instance registers (pi_core.loader.instances)
        made = instantiate(plugins, module, info, fatal=fatal)
        if made is None:
            return
        module, info = made
    problem = _unmarked_hooks(module)
    try:
        plugins.pm.register(module, name=info.name)
    except Exception as err:  # noqa: BLE001 - e.g. a hookimpl whose arguments the spec does not have
        plugins.failures.append(PluginFailure(info.name, info.source, f"{type(err).__name__}: {err}", fatal=fatal))
        return
    problem = problem or _hook_problem(plugins.pm, module)
    if problem:
        plugins.pm.unregister(module)
        plugins.failures.append(PluginFailure(info.name, info.source, *problem, fatal=fatal))
        return
    plugins.info[info.name] = info


def _location(function: object) -> str:
    """``file:line`` of a hook function, or "" when it has no source (a builtin, a lambda in a REPL)."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


def _hook_problem(pm: pluggy.PluginManager, module: object) -> tuple[str, str] | None:
    """What pluggy's ``check_pending`` finds (an ``@hookimpl`` matching no spec: named with the closest spec),
    then a wrapper; asked of this module's own hooks rather than of every registered plugin's. Returns the
    reason and the hook's file:line."""
    hooks = [(opts.get("specname") or attr, attr, opts) for attr in dir(module)
             if (opts := pm.parse_hookimpl_opts(module, attr)) is not None]
    for hook, attr, opts in hooks:
        caller = getattr(pm.hook, hook, None)
        if not opts.get("optionalhook") and (caller is None or not caller.has_spec()):
            import difflib

            close = difflib.get_close_matches(hook, _SPEC_NAMES, n=1)
            hint = f'; did you mean "{close[0]}"?' if close else f"; hooks are: {', '.join(_SPEC_NAMES)}"
            return f'hook "{hook}" matches no hook specification{hint}', _location(getattr(module, attr))
    wrapped = next((attr for hook, attr, opts in hooks if opts.get("hookwrapper") or opts.get("wrapper")), None)
    return None if wrapped is None else ((f'hook "{wrapped}" is a pluggy wrapper: pi calls hooks under their own '
                                          "policy (collect, chain, notify, first) and does not run wrappers"),
                                         _location(getattr(module, wrapped)))


def _unmarked_hooks(module: object) -> tuple[str, str] | None:
    """A function named exactly like a hook but without ``@hookimpl`` would be silently ignored by pluggy."""
    # a module's own dict: a failed getattr on a module is slow, and most of the ~60 names are not there
    for name in sorted(vars(module).keys() & set(_SPEC_NAMES)) if isinstance(module, ModuleType) else _SPEC_NAMES:
        function = vars(module).get(name) if isinstance(module, ModuleType) else getattr(module, name, None)
        if callable(function) and not hasattr(function, "pi_impl") and not hasattr(function, "pi_spec"):
            return (f'function "{name}" looks like a hook but has no @hookimpl (from pi_core import hookimpl)',
                    _location(function))
    return None


def _import_file(path: Path) -> ModuleType:
    directory = path.is_dir()
    target = path / "__init__.py" if directory else path
    if not target.is_file():
        raise ImportError(f"{path} is neither a .py file nor a package directory with __init__.py")
    module_name = f"pi_extension_{path.stem}_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, target,
                                                  submodule_search_locations=[str(path)] if directory else None)
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
