"""``pi install`` / ``remove`` / ``list`` / ``update``: tool packs are pip packages in the interpreter pi runs in.

pip runs as ``sys.executable -m pip`` in a child process whose output is streamed as it arrives. What
was installed is learned from ``importlib.metadata`` before and after each run: a failed install
uninstalls whatever distribution appeared during it, so the environment stays as it was.

``-l`` makes a package the project's own (docs/config.md#project-trust): pip installs it with
``--prefix .pi/packages`` (what pi's environment already has is not installed again), the requirement
is recorded in the project's ``.pi/settings.toml`` (key ``packages``), and its entry points load only in
that project, once it is trusted. Touching a project's packages needs the project trusted (``-a``).

The click commands are in ``pi_core.app.package_commands``. Importing this module is cheap: pip, plugins and
settings load inside the operations.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from pi_core.app.pip_env import (
    Echo,
    PackageError,
    path_files,
    read_new_path_files,
    run_pip,
)
from pi_core.errors import PiError
from pi_core.loader.plugins import OPTIONAL_GROUP, project_site

BUILTIN_DIST = "pi-harness"
SETTINGS_KEY = "packages"
PLUGIN_GROUPS = ("pi", OPTIONAL_GROUP)  # a pack of opt-in plugins is as much a pi package as one of plugins
_NAME_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(?:[<>=!~;@ ]|$)")
_EGG_RE = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")

Snapshot = dict[str, str]  # normalized distribution name -> version


def normalize(name: str) -> str:
    """PEP 503 name normalization (``Pi_Web.Tools`` -> ``pi-web-tools``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- the environment ------------------------------------------------------------------------------


def project_prefix(cwd: Path) -> Path:
    return Path(cwd) / ".pi" / "packages"


def _distributions(site: Path | None) -> Iterable[Any]:
    import importlib
    import importlib.metadata

    importlib.invalidate_caches()
    if site is None:
        return importlib.metadata.distributions()
    return importlib.metadata.distributions(path=[str(site)]) if site.is_dir() else []


def snapshot(site: Path | None = None) -> Snapshot:
    """Installed distributions of this interpreter (or of a project's ``site``), read fresh from disk."""
    found: Snapshot = {}
    for dist in _distributions(site):
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            found.setdefault(normalize(name), dist.version)
    return found


def pi_distributions(site: Path | None = None) -> dict[str, dict[str, Any]]:  # open: package reports, JSON for pi list --json
    """Distributions (other than pi itself) with entry points in group ``pi`` or the opt-in group ``pi.optional``:
    name -> version, entry points."""
    found: dict[str, dict[str, Any]] = {}
    for dist in _distributions(site):
        name = dist.metadata["Name"] if dist.metadata else None
        if not name or normalize(name) == BUILTIN_DIST:
            continue
        eps = [ep for ep in dist.entry_points if ep.group in PLUGIN_GROUPS]
        if eps:
            entry = found.setdefault(normalize(name), {"name": name, "version": dist.version, "entry_points": {}})
            entry["entry_points"].update({ep.name: ep.value for ep in eps})
    return found


def remove_from_site(site: Path, names: Iterable[str], echo: Echo) -> None:
    """Uninstall distributions from a project's ``site`` by their RECORD (pip refuses to: the folder is
    outside its environment). Only files under the project's ``.pi/packages`` are deleted."""
    prefix = site.resolve()
    while prefix.name != "packages" and prefix != prefix.parent:
        prefix = prefix.parent
    wanted = {normalize(n) for n in names}
    for dist in _distributions(site):
        name = dist.metadata["Name"] if dist.metadata else None
        if not name or normalize(name) not in wanted:
            continue
        folders: set[Path] = set()
        for entry in dist.files or []:
            path = Path(str(dist.locate_file(entry))).resolve()
            if prefix in path.parents and (path.is_file() or path.is_symlink()):
                path.unlink()
                folders.add(path.parent)
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            while folder != prefix and prefix in folder.parents and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
        echo(f"Removed {name} {dist.version} from {prefix}", False)


def _drop_stale_metadata(site: Path) -> None:
    """After an upgrade in place pip leaves the old version's ``.dist-info`` beside the new one: drop it."""
    import shutil

    by_name: dict[str, list[Path]] = {}
    for info in site.glob("*.dist-info") if site.is_dir() else []:
        by_name.setdefault(normalize(info.name.split("-")[0]), []).append(info)
    for folders in by_name.values():
        newest = max(folders, key=lambda folder: folder.stat().st_mtime)
        for stale in folders:
            if stale != newest:
                shutil.rmtree(stale, ignore_errors=True)


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


def project_trusted(cwd: Path, approve: bool | None = None) -> bool:
    from pi_core.app.trust import saved_trust
    from pi_core.config_paths import agent_dir

    return saved_trust(cwd, agent_dir(), approve=approve)


def _require_trust(cwd: Path, approve: bool | None) -> None:
    if not project_trusted(cwd, approve):
        raise PackageError("The project is not trusted; refusing to change its packages. Run the command with "
                           "--approve (-a), or trust the folder in interactive pi (/trust).")


def _has_protected(cwd: Path) -> bool:
    from pi_core.app.trust import protected_resources

    return bool(protected_resources(cwd))


def _trust_new_project(cwd: Path, echo: Echo) -> None:
    """The folder had nothing that needs trust until this install made it: the user's own, so trusted."""
    from pi_core.app.trust import TrustStore, TrustStoreError, TrustUpdate, canonical
    from pi_core.config_paths import agent_dir

    store = TrustStore(agent_dir())
    try:
        if store.saved(cwd) is None:
            store.save([TrustUpdate(str(cwd), True)])
            echo(f"Trusted {canonical(cwd)} for pi: it now has project packages (saved in {store.path})", False)
    except TrustStoreError as err:
        echo(f"Warning: {err}", True)


def _project_packages(cwd: Path, trusted: bool = True) -> tuple[Any, list[str]]:
    from pi_core.app.settings import Settings

    settings = Settings.load(cwd, project_trusted=trusted)
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


def contributions(dist_names: Iterable[str] | None = None, project: Path | None = None) -> dict[str, dict[str, Any]]:  # open: package reports, JSON for pi list --json
    """Per pi distribution (of pi's environment, or of a trusted ``project``'s packages): its plugins and
    what each contributes, overrides of built-ins included."""
    from pi_core.app.plugin_report import plugin_rows
    from pi_core.loader.plugins import load_plugins, load_project_plugins
    from pi_core.registry import build_registry

    dists = pi_distributions(project_site(project) if project is not None else None)
    wanted = {normalize(n) for n in dist_names} if dist_names is not None else set(dists)
    plugins = load_plugins(discover_extensions=False)
    if project is not None:
        load_project_plugins(plugins, project, extensions=False)
    from pi_core.app.startup import load_settings
    from pi_core.config_paths import agent_dir

    settings = load_settings(project or Path.cwd(), agent_dir(), [])
    registry = build_registry(plugins, tool_overrides=settings.tool_overrides)
    commands: dict[str, list[str]] = {}
    for plugin, values in registry.plugins.call_sync("pi_cli_commands"):
        commands[plugin] = [getattr(c, "name", None) or str(c) for c in values]
    rows = {row["name"]: row for row in plugin_rows(registry)}
    report: dict[str, dict[str, Any]] = {}
    for key in sorted(wanted & set(dists)):
        dist = dists[key]
        found: list[dict[str, Any]] = []
        for plugin in sorted(dist["entry_points"]):
            row = rows.get(plugin, {})
            label = f"{dist['name']} {dist['version']}"
            owned = row.get("source") in (label, f"{label} (project)") or row.get("layer") == "failed"
            found.append({
                "plugin": plugin,
                "tools": row.get("tools", []) if owned else [],
                "providers": row.get("providers", []) if owned else [],
                "renderers": row.get("renderers", []) if owned else [],
                "commands": commands.get(plugin, []) if owned else [],
                "replaces_builtin_plugin": bool(owned and row.get("replaces") == "builtin"),
                "overrides": row.get("overrides", []) if owned else [],
                "overridden": row.get("overridden", []) if owned else [],
                "error": row.get("error") if owned else "not loaded (another package uses this name)",
            })
        report[key] = {"name": dist["name"], "version": dist["version"], "plugins": found}
    return report


def describe(report: dict[str, dict[str, Any]]) -> list[str]:  # open: package reports, JSON for pi list --json
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
            lines.extend(f"      overridden: {o}" for o in plugin.get("overridden", []))
            if plugin["error"]:
                lines.append(f"      FAILED: {plugin['error']}")
    return lines


# --- the operations -------------------------------------------------------------------------------


def _rollback(before: Snapshot, echo: Echo, site: Path | None = None) -> str:
    """Uninstall what appeared since ``before``; returns how the failure message should end."""
    after = snapshot(site)
    appeared = sorted(set(after) - set(before))
    if appeared:
        echo(f"Rolling back: uninstalling {', '.join(appeared)}", True)
        if site is not None:
            remove_from_site(site, appeared, echo)
        elif run_pip(["uninstall", "-y", *appeared], echo) != 0:
            echo("Warning: the rollback did not finish; check `pip list`", True)
    changed = sorted(n for n in set(after) & set(before) if after[n] != before[n])
    for name in changed:
        echo(f"Warning: {name} changed from {before[name]} to {after[name]}; pip cannot undo this", True)
    left = set(snapshot(site)) - set(before) if appeared else set()
    if changed or left:
        return "some changes could not be undone (see the warnings above)"
    return "nothing was installed"


def _prepare_prefix(cwd: Path) -> None:
    prefix = project_prefix(cwd)
    prefix.mkdir(parents=True, exist_ok=True)
    ignore = prefix / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# installed by `pi install -l`; the requirements are in ../settings.toml\n*\n",
                          encoding="utf-8")


def install(spec: str, *, local: bool = False, editable: bool = False, pip_args: Sequence[str] = (),
            cwd: Path | None = None, echo: Echo | None = None, approve: bool | None = None,
            ) -> dict[str, dict[str, Any]]:  # open: package reports, JSON for pi list --json
    """pip-install ``spec`` (``local``: into the project's packages); returns the contributions of the pi
    distributions it added or changed."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    site = None
    target: list[str] = []
    first = False
    if local:
        _require_trust(where, approve)
        first = not _has_protected(where)
        _prepare_prefix(where)
        site = project_site(where)
        target = ["--prefix", str(project_prefix(where))]
    before, pth_before = snapshot(site), path_files(site)
    out(click.style(f"Installing {spec}...", dim=True), False)
    try:
        code = run_pip(["install", *target, *pip_args, *(["-e"] if editable else []), spec], out, site)
    except KeyboardInterrupt:
        outcome = _rollback(before, out, site)
        raise PackageError(f"pip install {spec} was interrupted; {outcome}") from None
    if code != 0:
        raise PackageError(f"pip install {spec} failed (exit code {code}); {_rollback(before, out, site)}")
    if site is not None:
        _drop_stale_metadata(site)
    read_new_path_files(pth_before, site)
    after = snapshot(site)
    touched = {n for n, v in after.items() if before.get(n) != v}
    named = dist_name_of(spec, where)
    if named:
        touched.add(named)
    if local:
        settings, entries = _project_packages(where)
        if not any(_matches(e, spec, where) for e in entries):
            settings.set(SETTINGS_KEY, [*entries, spec], scope="project")
        if first:
            _trust_new_project(where, out)
        if named and named not in after and named in snapshot():
            out(f"Note: {named} is installed in pi's own environment, so it loads in every project; "
                f"`pi remove {named}` keeps it to the projects that install it with -l", True)
    out(f"Installed {spec}", False)
    try:
        report = contributions(touched, where if local else None)
    except PiError as err:  # e.g. PluginConflict: installed, but pi will refuse to start until fixed
        out(f"Warning: {err}", True)
        return {}
    if report:
        out("Contributes:", False)
        for line in describe(report):
            out(line, False)
        failed = [p["plugin"] for d in report.values() for p in d["plugins"] if p["error"]]
        if failed:
            raise PackageError(f"{spec} is installed, but its plugin{'s' * (len(failed) > 1)} {', '.join(failed)} "
                               f"failed to load (FAILED above); pi starts without {'them' if len(failed) > 1 else 'it'}")
    elif named not in pi_distributions(site) and named not in pi_distributions():
        out(f"Warning: {spec} has no entry points in group 'pi'; it adds nothing to pi", True)
    return report


def remove(spec: str, *, local: bool = False, cwd: Path | None = None, echo: Echo | None = None,
           approve: bool | None = None) -> None:
    """Uninstall ``spec`` from pi's environment, or (``local``) from the project's packages and settings."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    name = dist_name_of(spec, where)
    if name == BUILTIN_DIST:
        raise PackageError(f"{spec} is pi itself; uninstall it with pip if you mean to")
    trusted = project_trusted(where, approve)
    if local and not trusted:
        _require_trust(where, approve)
    site = project_site(where) if local else None
    settings, entries = _project_packages(where, trusted)
    recorded = [e for e in entries if _matches(e, spec, where)]
    installed = name is not None and name in snapshot(site)
    if not installed and not recorded:
        raise PackageError(f"No matching package found for {spec}")
    if installed and name is not None and name not in pi_distributions(site):
        raise PackageError(_not_a_pi_package(spec, name))
    if installed and site is not None:
        remove_from_site(site, [name], out)  # type: ignore[list-item]
    elif installed:
        code = run_pip(["uninstall", "-y", name], out)  # type: ignore[list-item]
        if code != 0:
            raise PackageError(f"pip uninstall {name} failed (exit code {code})")
    if recorded and local:
        settings.set(SETTINGS_KEY, [e for e in entries if e not in recorded], scope="project")
    elif recorded and not local:
        out(f"Note: {spec} is still listed in .pi/settings.toml; `pi remove -l {spec}` drops it", True)
    out(f"Removed {spec}", False)


def _not_a_pi_package(spec: str, name: str) -> str:
    """Why ``pi remove`` leaves ``name`` alone: it provides no pi plugins (and may be one of pi's own dependencies)."""
    rule = "pi remove only removes packages that provide pi plugins (entry points in group 'pi' or 'pi.optional')"
    if name in _requirements_of(BUILTIN_DIST):
        return f"{spec} is a dependency of pi, not a pi package; {rule}, never pi's own dependencies"
    return f"{spec} provides no pi plugins; {rule}. Use pip to remove other packages"


def _requirements_of(dist: str) -> set[str]:
    """The normalised names ``dist`` needs, directly or through its dependencies (extras left out)."""
    import importlib.metadata

    seen: set[str] = set()
    todo = [dist]
    while todo:
        try:
            requires = importlib.metadata.requires(todo.pop()) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra ==" in requirement:
                continue
            match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if match and normalize(match.group(1)) not in seen:
                seen.add(normalize(match.group(1)))
                todo.append(match.group(1))
    return seen


def update(specs: Sequence[str] = (), *, pip_args: Sequence[str] = (), cwd: Path | None = None,
           echo: Echo | None = None, approve: bool | None = None) -> list[str]:
    """Upgrade the named packages, or every installed pi package and (in a trusted project) every
    project requirement, each where it is installed."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    where = cwd or Path.cwd()
    if any(s in ("self", "pi", BUILTIN_DIST) for s in specs):
        raise PackageError("pi does not update itself; run: python -m pip install --upgrade pi-harness")
    if os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        out("Offline (PI_OFFLINE): nothing updated", False)
        return []
    _, entries = _project_packages(where, project_trusted(where, approve))
    if specs:
        project = [s for s in specs if any(_matches(e, s, where) for e in entries)]
        shared = [s for s in specs if s not in project]
    else:
        project = entries
        shared = [d["name"] for k, d in pi_distributions().items()
                  if not any(dist_name_of(e, where) == k for e in entries)]
    if not project and not shared:
        out("No packages installed.", False)
        return []
    for group, site, target in ((project, project_site(where), ["--prefix", str(project_prefix(where))]),
                                (shared, None, [])):
        if not group:
            continue
        before = snapshot(site)
        code = run_pip(["install", "--upgrade", *target, *pip_args, *group], out, site)
        if code != 0:
            raise PackageError(f"pip install --upgrade failed (exit code {code}); {_rollback(before, out, site)}")
        if site is not None:
            _drop_stale_metadata(site)
    targets = [*project, *shared]
    out(f"Updated {targets[0]}" if specs and len(targets) == 1 else "Updated packages", False)
    return targets


def list_packages(cwd: Path | None = None, approve: bool | None = None) -> dict[str, Any]:  # open: package reports, JSON for pi list --json
    """Installed pi packages with their contributions, and (in a trusted project) its recorded requirements,
    installed in its packages folder or not."""
    where = cwd or Path.cwd()
    _, entries = _project_packages(where, project_trusted(where, approve))
    installed = snapshot(project_site(where))
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
