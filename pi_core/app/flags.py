"""Plugin command-line flags (``pi_flags``): their values for ``ctx.get_flag``, and the ``--help`` section.

Flags arrive as ``Args.unknown_flags`` (pi's parser keeps every ``--name`` it does not know). Once plugins
are loaded, ``parse_plugin_flags`` checks them against the registered flags. Every load also records the
flags per plugin in a small cache next to the entry-point cache, so ``pi --help`` can list them without
importing a single plugin.
"""

from __future__ import annotations

import marshal
import os
from pathlib import Path

from pi_core.errors import PiError

TYPE_CHECKING = False  # typing's, without importing typing (pi_core/__init__.py says why)
if TYPE_CHECKING:
    from typing import Any

    from pi_core.app.args import Args
    from pi_core.registry import PluginSet, Registry

    # A cached plugin: whether it is an opt-in one (group ``pi.optional``), and its flags (``Flag.to_json``).
    Entry = tuple[bool, list[dict[str, Any]]]  # open: flag declarations and values, JSON (the flag cache) as each plugin declares them

# The cache is marshal, not JSON: importing json compiles its regular expressions, which cost `pi --help`
# more than the whole plugin section. Format 4 is read and written alike by every Python 3 pi runs on.
CACHE_NAME = "plugin-flags.marshal"
CACHE_FORMAT = 2
_MARSHAL_VERSION = 4


def parse_plugin_flags(args: Args, registry: Registry) -> dict[str, Any]:  # open: flag declarations and values, JSON (the flag cache) as each plugin declares them
    """Every registered flag's value: given on the command line, else its default.

    A boolean flag that swallowed the next word (``--plan "fix it"``) gives the word back as a message; a
    string flag needs a value (Pi's error text). Names no plugin registered stay in ``args.unknown_flags``.
    Parsed once per ``args``: later calls return the first result.
    """
    if args.plugin_flag_values is not None:
        return args.plugin_flag_values
    values: dict[str, Any] = {}
    for name, flag in registry.flags.items.items():
        values[name] = flag.default
        if name not in args.unknown_flags:
            continue
        given = args.unknown_flags.pop(name)
        if flag.type == "boolean":
            values[name] = True
            at = args.unknown_flag_positions.get(name)
            if isinstance(given, str) and at is not None:
                args.messages.insert(min(at, len(args.messages)), given)
        elif isinstance(given, str):
            values[name] = given
        else:
            raise PiError(f'Extension flag "--{name}" requires a value')
    args.plugin_flag_values = values
    return values


# --- the --help cache ----------------------------------------------------------------------------------


def _cache_file() -> Path:
    from pi_core.config_paths import default_cache_dir

    return default_cache_dir() / CACHE_NAME


def plugin_key(name: str, source: str) -> str:
    """A plugin as the cache knows it: its name and origin, plus the file's mtime for a file plugin."""
    try:
        stamp = str(os.stat(source).st_mtime_ns) if os.path.isabs(source) else ""
    except OSError:
        stamp = "-"
    return f"{name}|{source}|{stamp}"


def _source(key: str) -> str:
    return key.partition("|")[2].rpartition("|")[0]


def _current(key: str) -> bool:
    """Whether a cached entry may still be asked for: a file plugin's entry dies with its file's mtime
    (each ``-e /tmp/x.py`` of a past run would otherwise stay in the cache for good)."""
    source = _source(key)
    return not os.path.isabs(source) or plugin_key(key.partition("|")[0], source) == key


def remember_flags(plugins: PluginSet, registry: Registry) -> None:
    """Record each loaded plugin's flags (an empty list too) for ``pi --help``; best effort."""
    found: dict[str, Entry] = {}
    for name, info in plugins.info.items():
        flags = [registry.flags.items[f].to_json() for f in registry.flags.by_plugin.get(name, [])]
        found[plugin_key(name, info.source)] = (info.optional, flags)
    target = _cache_file()
    entries = _read_cache(target)
    if all(entries.get(key) == value for key, value in found.items()):
        return
    entries = {key: value for key, value in entries.items() if key in found or _current(key)}
    entries.update(found)
    try:
        data = marshal.dumps({"format": CACHE_FORMAT, "plugins": entries}, _MARSHAL_VERSION)
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_suffix(f".{os.getpid()}.tmp")
        temp.write_bytes(data)
        os.replace(temp, target)
    except (OSError, ValueError):  # ValueError: a flag default marshal cannot write
        pass  # a read-only cache directory only costs --help its plugin section


def _read_cache(target: Path) -> dict[str, Entry]:
    """The cached plugins; a missing, torn or foreign file reads as none (the next load rewrites it)."""
    try:
        cached = marshal.loads(target.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    plugins = cached.get("plugins") if isinstance(cached, dict) and cached.get("format") == CACHE_FORMAT else None
    if not isinstance(plugins, dict):
        return {}
    # Exact type checks, and a plugin's flags only when it has some: --help reads every entry (~150 of them).
    return {key: value for key, value in plugins.items() if type(key) is str and type(value) is tuple
            and len(value) == 2 and type(value[1]) is list and (not value[1] or _flags_ok(value[1]))}


def _flags_ok(flags: list[dict[str, Any]]) -> bool:
    return all(type(f) is dict and type(f.get("name")) is str and type(f.get("type")) is str for f in flags)


def cached_flags(args: Args, cwd: Path) -> list[dict[str, Any]]:  # open: flag declarations and values, JSON (the flag cache) as each plugin declares them
    """The flags of the plugins this command line would load, as last recorded; imports no plugin.

    Only the kinds of plugin that have flags in the cache are looked for: plugins without flags add
    nothing, and finding what is installed or enabled costs most of ``pi --help``."""
    flagged = {key: entry for key, entry in _read_cache(_cache_file()).items() if entry[1]}
    if not flagged:
        return []
    kinds = {"file" if os.path.isabs(_source(key)) else "optional" if optional else "installed"
             for key, (optional, _flags) in flagged.items()}
    flags: dict[str, dict[str, Any]] = {}
    for key in _keys_to_load(args, cwd, kinds):
        for flag in flagged.get(key, (False, []))[1]:
            flags.setdefault(flag["name"], flag)
    return list(flags.values())


def _keys_to_load(args: Args, cwd: Path, kinds: set[str]) -> list[str]:
    """The keys of the plugins this command line loads, in load order, of the given kinds ("installed"
    entry points, "optional" ones enabled by name, "file" plugins); the other kinds are not looked for."""
    from pi_core.config_paths import agent_dir

    directory = agent_dir()
    plugin_names, paths = _extension_args(args)
    settings = None
    if kinds & {"installed", "optional"}:
        from pi_core.app.settings import Settings

        settings = Settings.load(cwd, directory, project_trusted=False)
    project_files = [] if args.no_extensions or "file" not in kinds else _py_files(cwd / ".pi" / "extensions")
    if project_files or (settings is not None and settings.has_project_file()):  # trust decides what the project adds
        from pi_core.app.trust import saved_trust

        if not saved_trust(cwd, directory, approve=args.approve):
            project_files = []
        elif settings is not None:
            settings.trust_project()
    keys: list[str] = []
    wanted = [*settings.enabled_plugins, *plugin_names] if settings is not None and "optional" in kinds else []
    if settings is not None and ("installed" in kinds or wanted):
        from pi_core.loader import discovery

        groups = discovery.discover_groups(("pi", discovery.OPTIONAL_GROUP))
        if "installed" in kinds:
            disabled = set(args.disable_plugins) | set(settings.disabled_plugins)
            keys += [plugin_key(name, discovery.dist_label(discovery.chosen_entry_point(eps)))
                     for name, eps in sorted(groups["pi"].items()) if name not in disabled]
        optional = groups[discovery.OPTIONAL_GROUP]
        keys += [plugin_key(name, discovery.dist_label(optional[name][0])) for name in wanted if name in optional]
    if "file" in kinds:
        files = [] if args.no_extensions else [*_py_files(directory / "extensions"), *project_files]
        files += [cwd / path for path in paths]
        keys += [plugin_key(path.stem if path.suffix == ".py" else path.name, str(path)) for path in files]
    return keys


def _extension_args(args: Args) -> tuple[list[str], list[str]]:
    """``-e`` values split into opt-in plugin names (``-e plugin:NAME``) and paths."""
    if not args.extensions:
        return [], []  # discovery, which knows the prefix, stays unimported
    from pi_core.loader.discovery import PLUGIN_PREFIX

    return ([e[len(PLUGIN_PREFIX):] for e in args.extensions if e.startswith(PLUGIN_PREFIX)],
            [e for e in args.extensions if not e.startswith(PLUGIN_PREFIX)])


def _py_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.py")) if folder.is_dir() else []  # no pattern to compile for a missing folder


def help_section(flags: list[dict[str, Any]]) -> str:  # open: flag declarations and values, JSON (the flag cache) as each plugin declares them
    """Pi's "Extension CLI Flags:" block (``--name <value>`` padded to 30 columns), or ""."""
    if not flags:
        return ""
    lines = [f"  --{f['name']}{' <value>' if f['type'] == 'string' else ''}".ljust(30)
             + (f.get("description") or "") for f in flags]
    return "\nExtension CLI Flags:\n" + "\n".join(lines) + "\n"
