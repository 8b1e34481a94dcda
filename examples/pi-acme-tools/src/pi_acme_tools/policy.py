"""ACME's policy: which paths may not be read, which commands may not run, and where access is logged.

Defaults below; add to them with ``ACME_DENY_PATHS`` (globs separated by ``os.pathsep``) and
``ACME_DENY_COMMANDS`` (one regular expression per line). The log is JSON lines in
``ACME_ACCESS_LOG``, else ``<cwd>/.pi/acme-access.log``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import time
from pathlib import Path
from typing import Any

# A pattern with a "/" is matched against the whole absolute path, one without against the file name.
DEFAULT_DENY_PATHS = (".env", ".env.*", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "*/secrets/*", "*/.ssh/*")

DEFAULT_DENY_COMMANDS = (
    (r"\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(/|~)(\s|$)", "deletes a whole file system tree"),
    (r"\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b", "pipes a download into a shell"),
    (r"\bsudo\b", "needs root"),
    (r"\bgit\s+push\b.*(--force|\s-f\b)", "force-pushes"),
)


def deny_paths() -> list[str]:
    extra = [p for p in os.environ.get("ACME_DENY_PATHS", "").split(os.pathsep) if p.strip()]
    return [*DEFAULT_DENY_PATHS, *extra]


def deny_commands() -> list[tuple[str, str]]:
    extra = [(line, f"matches {line!r}") for line in os.environ.get("ACME_DENY_COMMANDS", "").splitlines()
             if line.strip()]
    return [*DEFAULT_DENY_COMMANDS, *extra]


def denied_path(absolute: str) -> str | None:
    """The deny-list pattern ``absolute`` matches, or None."""
    posix = Path(absolute).as_posix()
    name = Path(absolute).name
    for pattern in deny_paths():
        if fnmatch.fnmatch(posix if "/" in pattern else name, pattern):
            return pattern
    return None


def denied_command(command: str) -> str | None:
    """Why ``command`` is blocked, or None."""
    for pattern, reason in deny_commands():
        if re.search(pattern, command):
            return reason
    return None


def log_access(cwd: Path, tool: str, target: str, decision: str) -> None:
    path = Path(os.environ.get("ACME_ACCESS_LOG") or Path(cwd) / ".pi" / "acme-access.log")
    entry: dict[str, Any] = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "user": os.environ.get("USER", ""),
                             "tool": tool, "target": target, "decision": decision}
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:  # one write per line: concurrent calls do not interleave
        fh.write(json.dumps(entry) + "\n")
