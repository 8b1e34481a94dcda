"""Gitignore-style matching for resource scans: ``.gitignore``, ``.ignore`` and ``.fdignore`` files
found inside the scanned tree apply to what lies below their own directory (ignore files above the
scan root do not count). Later rules win, so a deeper file or a ``!pattern`` can re-include.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True)
class _Rule:
    base: str  # directory of the ignore file, relative to the scan root ("" for the root)
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


@dataclass
class IgnoreMatcher:
    root: Path
    _rules: list[_Rule] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def add_dir(self, directory: Path) -> None:
        """Read the ignore files of ``directory`` (once) and add their rules."""
        base = Path(directory).relative_to(self.root).as_posix()
        base = "" if base == "." else base
        if base in self._seen:
            return
        self._seen.add(base)
        for name in IGNORE_FILE_NAMES:
            try:
                text = (Path(directory) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue  # absent or unreadable: nothing to ignore
            for line in text.splitlines():
                rule = _parse_line(line, base)
                if rule is not None:
                    self._rules.append(rule)

    def ignores(self, rel_path: str, is_dir: bool) -> bool:
        """Whether ``rel_path`` (posix, relative to the scan root) is ignored."""
        ignored = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not rel_path.startswith(rule.base + "/"):
                    continue
                sub = rel_path[len(rule.base) + 1 :]
            else:
                sub = rel_path
            if rule.regex.fullmatch(sub):
                ignored = not rule.negated
        return ignored


def _parse_line(line: str, base: str) -> _Rule | None:
    pattern = line.rstrip()
    if not pattern.strip() or pattern.startswith("#"):
        return None
    negated = False
    if pattern.startswith("!"):
        negated, pattern = True, pattern[1:]
    elif pattern.startswith(("\\!", "\\#")):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return None
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    body = _glob_to_regex(pattern)
    regex = body if anchored else f"(?:.*/)?{body}"
    return _Rule(base, re.compile(regex), negated, dir_only)


def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i) and i + 2 == n and (i == 0 or glob[i - 1] == "/"):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[":
            close = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if close == -1:
                out.append(re.escape("["))
                i += 1
                continue
            inner = glob[i + 1 : close]
            if inner[:1] in ("!", "^"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = close + 1
        elif glob[i] == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
