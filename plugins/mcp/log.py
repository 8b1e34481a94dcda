"""Server log notifications, appended to ``<agentDir>/mcp.log`` as ``<time> [<server>] <level> <logger>: <text>``.

Several pi processes may share the file, so each message is one append; past 5 MB it moves to ``mcp.log.1``.
Logging never breaks a tool: write errors are ignored.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

MAX_LOG_BYTES = 5 * 1024 * 1024


def format_line(server: str, level: str | None, logger: str | None, data: Any,
                now: datetime.datetime | None = None) -> str:
    stamp = (now or datetime.datetime.now(datetime.UTC)).isoformat(timespec="milliseconds")
    stamp = stamp.replace("+00:00", "Z")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    who = f" {logger}:" if logger else ""
    return f"{stamp} [{server}] {level or 'info'}{who} {text.replace(chr(13), '').replace(chr(10), chr(10) + '    ')}\n"


class ServerLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.size: int | None = None

    def _current_size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def write(self, server: str, level: str | None, logger: str | None, data: Any) -> None:
        line = format_line(server, level, logger, data).encode("utf-8", errors="replace")
        try:
            if self.size is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.size = self._current_size()
            if self.size > MAX_LOG_BYTES:
                if self._current_size() > MAX_LOG_BYTES:  # another pi may have rotated it already
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                self.size = self._current_size()
            with open(self.path, "ab") as handle:
                handle.write(line)
            self.size += len(line)
        except OSError:
            pass
