"""Plugin command-line flags (``pi_flags``): their values for ``ctx.get_flag``, and the ``--help`` section.

Flags arrive as ``Args.unknown_flags`` (pi's parser keeps every ``--name`` it does not know). Once plugins
are loaded, ``parse_plugin_flags`` checks them against the registered flags. Every load also records the
flags per plugin in a small cache next to the entry-point cache, so ``pi --help`` can list them without
importing a single plugin.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.app.args import Args
    from pi_core.registry import PluginSet, Registry

CACHE_FORMAT = 1


def parse_plugin_flags(args: Args, registry: Registry) -> dict[str, Any]:
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
    import sys

    from pi_core.discovery import cache_file, default_cache_dir

    return cache_file(default_cache_dir(), sys.path).with_name("plugin-flags.json")


def plugin_key(name: str, source: str) -> str:
    """A plugin as the cache knows it: its name and origin, plus the file's mtime for a file plugin."""
    try:
        stamp = str(os.stat(source).st_mtime_ns) if os.path.isabs(source) else ""
    except OSError:
        stamp = "-"
    return f"{name}|{source}|{stamp}"


def _current(key: str) -> bool:
    """Whether a cached entry may still be asked for: a file plugin's entry dies with its file's mtime
    (each ``-e /tmp/x.py`` of a past run would otherwise stay in the cache for good)."""
    name, _, rest = key.partition("|")
    source, _, _stamp = rest.rpartition("|")
    return not os.path.isabs(source) or plugin_key(name, source) == key


def remember_flags(plugins: PluginSet, registry: Registry) -> None:
    """Record each loaded plugin's flags (an empty list too) for ``pi --help``; best effort."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, info in plugins.info.items():
        flags = [registry.flags.items[f].to_json() for f in registry.flags.by_plugin.get(name, [])]
        found[plugin_key(name, info.source)] = flags
    target = _cache_file()
    entries = _read_cache(target)
    if all(entries.get(key) == value for key, value in found.items()):
        return
    entries = {key: value for key, value in entries.items() if key in found or _current(key)}
    entries.update(found)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_suffix(f".{os.getpid()}.tmp")
        temp.write_text(json.dumps({"format": CACHE_FORMAT, "plugins": entries}), encoding="utf-8")
        os.replace(temp, target)
    except OSError:
        pass  # a read-only cache directory only costs --help its plugin section


def _read_cache(target: Path) -> dict[str, list[dict[str, Any]]]:
    try:
        cached = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = cached.get("plugins") if isinstance(cached, dict) and cached.get("format") == CACHE_FORMAT else None
    return entries if isinstance(entries, dict) else {}


def cached_flags(args: Args, cwd: Path) -> list[dict[str, Any]]:
    """The flags of the plugins this command line would load, as last recorded; imports no plugin."""
    entries = _read_cache(_cache_file())
    if not entries:
        return []
    flags: dict[str, dict[str, Any]] = {}
    for key in _keys_to_load(args, cwd):
        for flag in entries.get(key, []):
            flags.setdefault(flag["name"], flag)
    return list(flags.values())


def _keys_to_load(args: Args, cwd: Path) -> list[str]:
    from pi_core import discovery
    from pi_core.app.settings import Settings
    from pi_core.config_paths import agent_dir

    directory = agent_dir()
    settings = Settings.load(cwd, directory, project_trusted=False)
    project_files = [] if args.no_extensions else sorted((cwd / ".pi" / "extensions").glob("*.py"))
    if project_files or settings.has_project_file():  # trust decides only what the project adds
        from pi_core.app.trust import saved_trust

        if saved_trust(cwd, directory, approve=args.approve):
            settings.trust_project()
        else:
            project_files = []
    disabled = set(args.disable_plugins) | set(settings.disabled_plugins)
    groups = discovery.discover_groups(("pi", discovery.OPTIONAL_GROUP))
    keys = [plugin_key(name, discovery.dist_label(discovery.chosen_entry_point(eps)))
            for name, eps in sorted(groups["pi"].items()) if name not in disabled]
    optional = groups[discovery.OPTIONAL_GROUP]
    wanted = [*settings.enabled_plugins, *(e[len(discovery.PLUGIN_PREFIX):] for e in args.extensions
                                           if e.startswith(discovery.PLUGIN_PREFIX))]
    keys += [plugin_key(name, discovery.dist_label(optional[name][0])) for name in wanted if name in optional]
    files = [] if args.no_extensions else [*sorted((directory / "extensions").glob("*.py")), *project_files]
    files += [cwd / e for e in args.extensions if not e.startswith(discovery.PLUGIN_PREFIX)]
    keys += [plugin_key(path.stem if path.suffix == ".py" else path.name, str(path)) for path in files]
    return keys


def help_section(flags: list[dict[str, Any]]) -> str:
    """Pi's "Extension CLI Flags:" block (``--name <value>`` padded to 30 columns), or ""."""
    if not flags:
        return ""
    lines = [f"  --{f['name']}{' <value>' if f['type'] == 'string' else ''}".ljust(30)
             + (f.get("description") or "") for f in flags]
    return "\nExtension CLI Flags:\n" + "\n".join(lines) + "\n"
