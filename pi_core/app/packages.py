"""``pi install`` / ``remove`` / ``list`` / ``update``: tool packs are pip packages in the interpreter pi runs in.

pip runs as ``sys.executable -m pip`` in a child process whose output is streamed as it arrives. What
was installed is learned from ``importlib.metadata`` before and after each run: a failed install
uninstalls whatever distribution appeared during it, so the environment stays as it was. ``-l`` also
records the requirement in the project's ``.pi/settings.toml`` (key ``packages``).

Importing this module is cheap (click only): pip, plugins and settings load inside the commands.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import click

from pi_core.errors import PiError

BUILTIN_DIST = "pi-harness"
SETTINGS_KEY = "packages"
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?:[<>=!~;@ ]|$)")
_EGG_RE = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")

Snapshot = dict[str, str]  # normalized distribution name -> version
Echo = Callable[[str, bool], None]  # (line, to_stderr)


class PackageError(PiError):
    """A package command failed; the CLI prints ``Error: <message>`` and exits 1."""


def normalize(name: str) -> str:
    """PEP 503 name normalization (``Pi_Web.Tools`` -> ``pi-web-tools``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- the environment ------------------------------------------------------------------------------


def snapshot() -> Snapshot:
    """Installed distributions of this interpreter, read fresh from disk."""
    import importlib
    import importlib.metadata

    importlib.invalidate_caches()
    found: Snapshot = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            found.setdefault(normalize(name), dist.version)
    return found


def pi_distributions() -> dict[str, dict[str, Any]]:
    """Distributions (other than pi itself) with entry points in group ``pi``: name -> version, entry points."""
    import importlib
    import importlib.metadata

    importlib.invalidate_caches()
    found: dict[str, dict[str, Any]] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if not name or normalize(name) == BUILTIN_DIST:
            continue
        eps = [ep for ep in dist.entry_points if ep.group == "pi"]
        if eps:
            entry = found.setdefault(normalize(name), {"name": name, "version": dist.version, "entry_points": {}})
            entry["entry_points"].update({ep.name: ep.value for ep in eps})
    return found


def _pump(stream: IO[str], to_stderr: bool, echo: Echo) -> None:
    for line in iter(stream.readline, ""):
        echo(line.rstrip("\n"), to_stderr)


def run_pip(args: Sequence[str], echo: Echo | None = None) -> int:
    """Run ``python -m pip ARGS`` for this interpreter, streaming stdout and stderr line by line."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pip", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
    except OSError as err:
        raise PackageError(f"could not run pip with {sys.executable}: {err}") from err
    assert proc.stdout is not None and proc.stderr is not None
    err_thread = threading.Thread(target=_pump, args=(proc.stderr, True, out), daemon=True)
    err_thread.start()
    try:
        _pump(proc.stdout, False, out)
        err_thread.join()
    except KeyboardInterrupt:
        proc.wait()  # Ctrl+C reached pip too: let it clean up before anything is rolled back
        raise
    return proc.wait()


# --- requirement strings --------------------------------------------------------------------------


def dist_name_of(spec: str, cwd: Path) -> str | None:
    """The distribution a pip requirement names, if it can be told without building it."""
    looks_like_path = "://" not in spec and " @ " not in spec and (
        "/" in spec or os.sep in spec or spec.startswith((".", "~")))
    if looks_like_path and spec.endswith(".whl"):  # name-version-tags.whl, name already normalized to _
        return normalize(Path(spec).name.split("-")[0])
    if looks_like_path:
        path = cwd / os.path.expanduser(spec)
        pyproject = path / "pyproject.toml"
        if pyproject.is_file():
            import tomllib

            try:
                name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
            except (OSError, tomllib.TOMLDecodeError):
                return None
            return normalize(name) if isinstance(name, str) else None
        return None
    egg = _EGG_RE.search(spec)
    if egg:
        return normalize(egg.group(1))
    if "://" in spec and " @ " not in spec:
        return None
    match = _NAME_RE.match(spec)
    return normalize(match.group(1)) if match else None


def _project_packages(cwd: Path) -> tuple[Any, list[str]]:
    from pi_core.app.settings import Settings

    settings = Settings.load(cwd)
    for error in settings.drain_errors():
        click.echo(error.warning("package command"), err=True)
    value = settings.scope_data("project").get(SETTINGS_KEY, [])
    return settings, [str(v) for v in value] if isinstance(value, list) else []


def _matches(entry: str, spec: str, cwd: Path) -> bool:
    if entry == spec:
        return True
    a, b = dist_name_of(entry, cwd), dist_name_of(spec, cwd)
    return a is not None and a == b


# --- what a package contributes -------------------------------------------------------------------


def contributions(dist_names: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per pi distribution: its plugins and what each contributes, overrides of built-ins included."""
    from pi_core.app.plugin_report import plugin_rows
    from pi_core.plugins import load_plugins
    from pi_core.registry import build_registry, call_each

    dists = pi_distributions()
    wanted = {normalize(n) for n in dist_names} if dist_names is not None else set(dists)
    registry = build_registry(load_plugins(discover_extensions=False))
    commands: dict[str, list[str]] = {}
    for plugin, values in call_each(registry.plugins, "pi_cli_commands"):
        commands[plugin] = [getattr(c, "name", None) or str(c) for c in values]
    rows = {row["name"]: row for row in plugin_rows(registry)}
    report: dict[str, dict[str, Any]] = {}
    for key in sorted(wanted & set(dists)):
        dist = dists[key]
        plugins = []
        for plugin in sorted(dist["entry_points"]):
            row = rows.get(plugin, {})
            label = f"{dist['name']} {dist['version']}"
            owned = row.get("source") == label or row.get("layer") == "failed"
            plugins.append({
                "plugin": plugin,
                "tools": row.get("tools", []) if owned else [],
                "providers": row.get("providers", []) if owned else [],
                "renderers": row.get("renderers", []) if owned else [],
                "commands": commands.get(plugin, []) if owned else [],
                "replaces_builtin_plugin": bool(owned and row.get("replaces") == "builtin"),
                "overrides": row.get("overrides", []) if owned else [],
                "error": row.get("error") if owned else "not loaded (another package uses this name)",
            })
        report[key] = {"name": dist["name"], "version": dist["version"], "plugins": plugins}
    return report


def describe(report: dict[str, dict[str, Any]]) -> list[str]:
    """Human lines for ``contributions()``: one header per package, one line per kind."""
    lines: list[str] = []
    for dist in report.values():
        lines.append(f"  {dist['name']} {dist['version']}")
        for plugin in dist["plugins"]:
            head = f"    plugin {plugin['plugin']}"
            if plugin["replaces_builtin_plugin"]:
                head += f" (replaces the built-in plugin {plugin['plugin']!r})"
            lines.append(head)
            for kind in ("tools", "providers", "renderers", "commands"):
                if plugin[kind]:
                    lines.append(f"      {kind}: {', '.join(plugin[kind])}")
            lines.extend(f"      overrides {o}" for o in plugin["overrides"])
            if plugin["error"]:
                lines.append(f"      FAILED: {plugin['error']}")
    return lines


# --- the operations -------------------------------------------------------------------------------


def _rollback(before: Snapshot, echo: Echo) -> str:
    """Uninstall what appeared since ``before``; returns how the failure message should end."""
    after = snapshot()
    appeared = sorted(set(after) - set(before))
    if appeared:
        echo(f"Rolling back: uninstalling {', '.join(appeared)}", True)
        if run_pip(["uninstall", "-y", *appeared], echo) != 0:
            echo("Warning: the rollback did not finish; check `pip list`", True)
    changed = sorted(n for n in set(after) & set(before) if after[n] != before[n])
    for name in changed:
        echo(f"Warning: {name} changed from {before[name]} to {after[name]}; pip cannot undo this", True)
    left = set(snapshot()) - set(before) if appeared else set()
    if changed or left:
        return "some changes could not be undone (see the warnings above)"
    return "nothing was installed"


def install(spec: str, *, local: bool = False, editable: bool = False, pip_args: Sequence[str] = (),
            cwd: Path | None = None, echo: Echo | None = None) -> dict[str, dict[str, Any]]:
    """pip-install ``spec``; returns the contributions of the pi distributions it added or changed."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    before = snapshot()
    out(click.style(f"Installing {spec}...", dim=True), False)
    try:
        code = run_pip(["install", *pip_args, *(["-e"] if editable else []), spec], out)
    except KeyboardInterrupt:
        outcome = _rollback(before, out)
        raise PackageError(f"pip install {spec} was interrupted; {outcome}") from None
    if code != 0:
        raise PackageError(f"pip install {spec} failed (exit code {code}); {_rollback(before, out)}")
    after = snapshot()
    touched = {n for n, v in after.items() if before.get(n) != v}
    named = dist_name_of(spec, where)
    if named:
        touched.add(named)
    if local:
        settings, entries = _project_packages(where)
        if not any(_matches(e, spec, where) for e in entries):
            settings.set(SETTINGS_KEY, [*entries, spec], scope="project")
    out(f"Installed {spec}", False)
    try:
        report = contributions(touched)
    except PiError as err:  # e.g. PluginConflict: installed, but pi will refuse to start until fixed
        out(f"Warning: {err}", True)
        return {}
    if report:
        out("Contributes:", False)
        for line in describe(report):
            out(line, False)
    elif named not in pi_distributions():
        out(f"Warning: {spec} has no entry points in group 'pi'; it adds nothing to pi", True)
    return report


def remove(spec: str, *, local: bool = False, cwd: Path | None = None, echo: Echo | None = None) -> None:
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    name = dist_name_of(spec, where)
    if name == BUILTIN_DIST:
        raise PackageError(f"{spec} is pi itself; uninstall it with pip if you mean to")
    settings, entries = _project_packages(where)
    recorded = [e for e in entries if _matches(e, spec, where)]
    installed = name is not None and name in snapshot()
    if not installed and not recorded:
        raise PackageError(f"No matching package found for {spec}")
    if installed:
        code = run_pip(["uninstall", "-y", name], out)  # type: ignore[list-item]
        if code != 0:
            raise PackageError(f"pip uninstall {name} failed (exit code {code})")
    if recorded and local:
        settings.set(SETTINGS_KEY, [e for e in entries if e not in recorded], scope="project")
    elif recorded and not local:
        out(f"Note: {spec} is still listed in .pi/settings.toml; `pi remove -l {spec}` drops it", True)
    out(f"Removed {spec}", False)


def update(specs: Sequence[str] = (), *, pip_args: Sequence[str] = (), cwd: Path | None = None,
           echo: Echo | None = None) -> list[str]:
    """Upgrade the named packages, or every installed pi package and project requirement."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    if any(s in ("self", "pi", BUILTIN_DIST) for s in specs):
        raise PackageError("pi does not update itself; run: python -m pip install --upgrade pi-harness")
    if os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        out("Offline (PI_OFFLINE): nothing updated", False)
        return []
    _, entries = _project_packages(where)
    targets = list(specs) or [*entries, *(d["name"] for k, d in pi_distributions().items()
                                          if not any(dist_name_of(e, where) == k for e in entries))]
    if not targets:
        out("No packages installed.", False)
        return []
    before = snapshot()
    code = run_pip(["install", "--upgrade", *pip_args, *targets], out)
    if code != 0:
        raise PackageError(f"pip install --upgrade failed (exit code {code}); {_rollback(before, out)}")
    out(f"Updated {targets[0]}" if specs and len(targets) == 1 else "Updated packages", False)
    return targets


def list_packages(cwd: Path | None = None) -> dict[str, Any]:
    """Installed pi packages with their contributions, and the project's recorded requirements."""
    where = cwd or Path.cwd()
    _, entries = _project_packages(where)
    installed = snapshot()
    project = [{"requirement": e, "distribution": dist_name_of(e, where),
                "installed": installed.get(dist_name_of(e, where) or "")} for e in entries]
    try:
        report = contributions()
    except PiError as err:  # e.g. PluginConflict: still list what is installed, with the reason pi won't load it
        click.echo(f"Warning: {err}", err=True)
        report = {key: {"name": d["name"], "version": d["version"], "plugins": [
            {"plugin": p, "tools": [], "providers": [], "renderers": [], "commands": [],
             "replaces_builtin_plugin": False, "overrides": [], "error": "not loaded: see the warning above"}
            for p in sorted(d["entry_points"])]} for key, d in pi_distributions().items()}
    return {"installed": report, "project": project}


# --- click commands -------------------------------------------------------------------------------


def _source(ctx: click.Context, source: str | None, command: str) -> str:
    if not source:
        click.echo(ctx.get_usage(), err=True)
        raise PackageError(f"Missing {command} source.")
    return source


def register_package_commands(group: click.Group) -> None:
    """Add install, remove (alias uninstall), list and update to the ``pi`` sub-command group."""
    passthrough = {"ignore_unknown_options": False, "allow_extra_args": True}

    @group.command("install", context_settings=passthrough)
    @click.argument("source", required=False)
    @click.option("-l", "--local", is_flag=True, help="Also record the requirement in .pi/settings.toml.")
    @click.option("-e", "--editable", is_flag=True, help="Install a local path in editable mode.")
    @click.pass_context
    def install_command(ctx: click.Context, source: str | None, local: bool, editable: bool) -> None:
        """Install a tool pack with pip (name, name==1.2, a path or a git URL); pip options go after --."""
        install(_source(ctx, source, "install"), local=local, editable=editable, pip_args=list(ctx.args))

    for command_name in ("remove", "uninstall"):
        @group.command(command_name)
        @click.argument("source", required=False)
        @click.option("-l", "--local", is_flag=True, help="Also drop the requirement from .pi/settings.toml.")
        @click.pass_context
        def remove_command(ctx: click.Context, source: str | None, local: bool) -> None:
            """Uninstall a tool pack (its distribution name, or the requirement it was installed with)."""
            remove(_source(ctx, source, ctx.info_name or "remove"), local=local)

    @group.command("update", context_settings=passthrough)
    @click.argument("sources", nargs=-1)
    @click.option("--models", "models_only", is_flag=True,
                  help="Refresh the model catalog only (from Pi's model data on the npm registry).")
    @click.pass_context
    def update_command(ctx: click.Context, sources: tuple[str, ...], models_only: bool) -> None:
        """Upgrade the named packs, or every installed pack and project requirement."""
        if models_only:
            if sources:
                raise PackageError("--models cannot be combined with a positional source")
            from pi_core.models.catalog_build import refresh_cached_catalog

            click.echo(refresh_cached_catalog())
            return
        update(sources, pip_args=list(ctx.args))

    @group.command("list")
    @click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
    def list_command(json_: bool) -> None:
        """Installed packs with the tools, providers, renderers and commands they add."""
        data = list_packages()
        if json_:
            import json

            click.echo(json.dumps(data, indent=2))
            return
        if not data["installed"] and not data["project"]:
            click.echo("No packages installed.")
            return
        if data["installed"]:
            click.echo("Installed packages:")
            for line in describe(data["installed"]):
                click.echo(line)
        if data["project"]:
            click.echo("Project packages:")
            for entry in data["project"]:
                click.echo(f"  {entry['requirement']}")
                state = f"installed {entry['installed']}" if entry["installed"] else "not installed"
                click.echo(click.style(f"    {state}", dim=True))
