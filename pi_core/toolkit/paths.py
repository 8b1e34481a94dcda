"""Turn the paths models send into absolute paths: ``~``, a stray leading ``@``, odd spaces, macOS name variants."""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable

from pi_core.tools import expand_path, resolve_to_cwd

_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)

__all__ = ["expand_path", "read_path_candidates", "resolve_read_path", "resolve_to_cwd"]


def read_path_candidates(path: str, cwd: str) -> list[str]:
    """The resolved path followed by the macOS spellings of it that differ from it, in trial order."""
    resolved = resolve_to_cwd(path, cwd)
    nfd = unicodedata.normalize("NFD", resolved)
    variants = [
        # expand_path turned the narrow no-break space macOS puts before AM/PM into a plain one.
        _AM_PM.sub(lambda m: f"\u202f{m.group(1)}.", resolved),
        nfd,
        resolved.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ]
    candidates = [resolved]
    for variant in variants:
        if variant != resolved and variant not in candidates:
            candidates.append(variant)
    return candidates


def resolve_read_path(path: str, cwd: str, exists: Callable[[str], bool] | None = None) -> str:
    """The first candidate of ``read_path_candidates`` that exists, else the plainly resolved path."""
    check = exists or (lambda p: os.access(p, os.F_OK))
    candidates = read_path_candidates(path, cwd)
    for candidate in candidates:
        if check(candidate):
            return candidate
    return candidates[0]
