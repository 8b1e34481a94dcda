"""Context files (AGENTS.md / CLAUDE.md): the global one from the agent dir, then one per directory
from the filesystem root down to cwd, so the most specific instructions come last in the prompt.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Per directory only the first existing name counts.
CONTEXT_FILE_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")

Warn = Callable[[str], None]


@dataclass(frozen=True)
class ContextFile:
    """A context file (AGENTS.md, CLAUDE.md) and its text."""

    path: Path
    content: str


def read_verbatim(path: Path) -> str:
    """The file's text exactly as stored (no newline translation; invalid UTF-8 replaced)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def stderr_warning(message: str) -> None:
    print(message, file=sys.stderr)


def context_file_in(directory: Path, warn: Warn = stderr_warning) -> ContextFile | None:
    """The directory's context file, or None. An unreadable candidate is reported and the next tried."""
    for name in CONTEXT_FILE_NAMES:
        path = directory / name
        if not os.path.exists(path):
            continue
        try:
            return ContextFile(path, read_verbatim(path))
        except OSError as err:
            warn(f"Warning: Could not read {path}: {err}")
    return None


def discover_context_files(
    cwd: Path, agent_dir: Path, *, no_context_files: bool = False, warn: Warn = stderr_warning
) -> list[ContextFile]:
    """Global file first, then ancestors outermost first and cwd last; a path is never listed twice."""
    if no_context_files:
        return []
    found: list[ContextFile] = []
    seen: set[str] = set()
    global_file = context_file_in(Path(agent_dir), warn)
    if global_file is not None:
        found.append(global_file)
        seen.add(os.path.normpath(global_file.path))
    start = Path(os.path.abspath(cwd))
    walk: list[ContextFile] = []
    for directory in (start, *start.parents):
        item = context_file_in(directory, warn)
        if item is not None and os.path.normpath(item.path) not in seen:
            walk.append(item)
            seen.add(os.path.normpath(item.path))
    found.extend(reversed(walk))
    return found
