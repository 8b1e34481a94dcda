"""Which discovered resource files are used: settings entries (``skills`` / ``prompts`` arrays in
settings.json) and their patterns, and the precedence between project, user and explicit sources
(docs/config.md#resources).

Entries mix plain paths (loaded; relative to ``.pi/`` or the agent dir) with patterns: a glob
includes, ``!glob`` excludes, ``+path`` force-includes an exact path, ``-path`` force-excludes one.
For auto-discovered files only the ``!``/``+``/``-`` entries apply (no include list: all enabled).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pi_core.resources.diagnostics import Scope, canonical, expand_user_path

Collector = Callable[[Path], list[Path]]  # files of one kind under a directory


@dataclass(frozen=True, repr=False)
class Candidate:
    """A resource file and how it was found, before it is loaded."""

    path: Path
    source: str  # "local" (a settings entry or explicit path) or "auto" (discovered)
    scope: Scope
    base_dir: Path
    enabled: bool = True

    @property
    def rank(self) -> int:
        return (0 if self.scope == "project" else 2) + (0 if self.source == "local" else 1)


@dataclass(frozen=True, repr=False)
class ResourceSettings:
    """The ``skills`` and ``prompts`` arrays of each settings scope (other keys are ignored)."""

    project: dict[str, list[str]] = field(default_factory=dict)
    user: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_scopes(cls, global_data: dict[str, Any], project_data: dict[str, Any]) -> ResourceSettings:  # open: settings JSON (settings.json)
        def arrays(data: dict[str, Any]) -> dict[str, list[str]]:
            return {k: [str(v) for v in data[k]] for k in ("skills", "prompts") if isinstance(data.get(k), list)}

        return cls(project=arrays(project_data), user=arrays(global_data))

    def entries(self, scope: Scope, kind: str) -> list[str]:
        return list((self.project if scope == "project" else self.user).get(kind, []))


def is_pattern(entry: str) -> bool:
    return entry.startswith(("!", "+", "-")) or "*" in entry or "?" in entry


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    from pi_core.resources.ignore import _glob_to_regex  # when settings name patterns

    return re.compile(_glob_to_regex(pattern))


def _forms(path: Path, base_dir: Path) -> tuple[list[str], list[str]]:
    """(forms for globs, forms for exact matches): relative path, name, absolute path, and for a
    SKILL.md the same forms of its directory, so a pattern can name the skill folder."""
    rel = Path(os.path.relpath(path, base_dir)).as_posix()
    forms = [rel, path.name, path.as_posix()]
    exact = [rel, path.as_posix()]
    if path.name == "SKILL.md":
        parent = path.parent
        parent_rel = Path(os.path.relpath(parent, base_dir)).as_posix()
        forms += [parent_rel, parent.name, parent.as_posix()]
        exact += [parent_rel, parent.as_posix()]
    return forms, exact


def matches_any(path: Path, patterns: Iterable[str], base_dir: Path) -> bool:
    forms = _forms(path, base_dir)[0]
    return any(_compiled(p.replace("\\", "/")).fullmatch(f) for p in patterns for f in forms)


def matches_any_exact(path: Path, patterns: Iterable[str], base_dir: Path) -> bool:
    exact = _forms(path, base_dir)[1]
    normalized = [(p[2:] if p.startswith(("./", ".\\")) else p).replace("\\", "/") for p in patterns]
    return any(p in exact for p in normalized)


def enabled_by_overrides(path: Path, entries: Sequence[str], base_dir: Path) -> bool:
    excludes = [e[1:] for e in entries if e.startswith("!")]
    force_in = [e[1:] for e in entries if e.startswith("+")]
    force_out = [e[1:] for e in entries if e.startswith("-")]
    enabled = not (excludes and matches_any(path, excludes, base_dir))
    if force_in and matches_any_exact(path, force_in, base_dir):
        enabled = True
    if force_out and matches_any_exact(path, force_out, base_dir):
        enabled = False
    return enabled


def apply_patterns(paths: Sequence[Path], patterns: Sequence[str], base_dir: Path) -> set[Path]:
    """Includes (none: all), then ``!`` excludes, then ``+`` force-includes, then ``-`` force-excludes."""
    includes = [p for p in patterns if not p.startswith(("!", "+", "-"))]
    result = [p for p in paths if not includes or matches_any(p, includes, base_dir)]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    if excludes:
        result = [p for p in result if not matches_any(p, excludes, base_dir)]
    force_in = [p[1:] for p in patterns if p.startswith("+")]
    result += [p for p in paths if p not in result and force_in and matches_any_exact(p, force_in, base_dir)]
    force_out = [p[1:] for p in patterns if p.startswith("-")]
    return {p for p in result if not (force_out and matches_any_exact(p, force_out, base_dir))}


def settings_candidates(entries: Sequence[str], scope: Scope, base_dir: Path, collect: Collector) -> list[Candidate]:
    """Files named by a settings array: plain entries are files or directories (scanned with
    ``collect``), relative to ``base_dir``; the pattern entries then decide which are enabled."""
    plain = [e for e in entries if not is_pattern(e)]
    patterns = [e for e in entries if is_pattern(e)]
    files: list[Path] = []
    for entry in plain:
        path = expand_user_path(entry, base_dir)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(collect(path))
    enabled = apply_patterns(files, patterns, base_dir)
    return [Candidate(f, "local", scope, base_dir, f in enabled) for f in files]


def auto_candidates(files: Iterable[Path], scope: Scope, base_dir: Path, entries: Sequence[str]) -> list[Candidate]:
    return [Candidate(f, "auto", scope, base_dir, enabled_by_overrides(f, entries, base_dir)) for f in files]


def scoped_candidates(settings: ResourceSettings, kind: str, collect: Collector,
                      project: tuple[Path, list[Path]] | None, user: tuple[Path, list[Path]]) -> list[Candidate]:
    """The ``kind`` entries of both settings scopes, then the files discovered in each, in precedence order. A
    scope is its base directory and its discovered files; ``project`` None (an untrusted project) leaves it out."""
    scopes: list[tuple[Scope, Path, list[Path]]] = [("project", *project)] if project else []
    scopes.append(("user", *user))
    entries = {scope: settings.entries(scope, kind) for scope, _, _ in scopes}
    return order_candidates([
        *(c for scope, base, _ in scopes for c in settings_candidates(entries[scope], scope, base, collect)),
        *(c for scope, base, found in scopes for c in auto_candidates(found, scope, base, entries[scope])),
    ])


def order_candidates(candidates: Iterable[Candidate]) -> list[Candidate]:
    """First mention of a path keeps its labels; then by precedence rank (stable); then one per
    real file; disabled ones dropped."""
    by_path: dict[Path, Candidate] = {}
    for candidate in candidates:
        by_path.setdefault(candidate.path, candidate)
    seen: set[str] = set()
    ordered = []
    for candidate in sorted(by_path.values(), key=lambda c: c.rank):
        real = canonical(candidate.path)
        if real in seen:
            continue
        seen.add(real)
        if candidate.enabled:
            ordered.append(candidate)
    return ordered
