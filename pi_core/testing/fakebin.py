"""Fake executables for tests (``gh``, ``ssh``, ``osascript``, ``powershell.exe``, a bridge...): small Python
scripts in a folder put first on PATH, each recording how it was called.

``bins = FakeBin(tmp_path / "bin")``; ``bins.add("gh", 'print("[]")')`` writes ``gh``; run the program under
test with ``env=bins.env()``; ``bins.calls("gh")`` lists each call's argv, cwd and (with ``read_stdin=True``)
stdin. The body is Python run after the call is logged; it sees ``ARGV`` (arguments without the program
name) and ``STDIN`` (str, or None when stdin is left for the body).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

PRELUDE = """#!{python}
import json, os, sys
ARGV = sys.argv[1:]
STDIN = sys.stdin.read() if {read_stdin} else None
with open({log!r}, "a", encoding="utf-8") as _log:
    _log.write(json.dumps({{"argv": ARGV, "cwd": os.getcwd(), "stdin": STDIN}}) + "\\n")
"""


@dataclass(frozen=True)
class FakeCall:
    argv: list[str]
    cwd: str
    stdin: str | None


class FakeBin:
    """A folder of fake programs that shadow real ones on PATH."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    def add(self, name: str, body: str = "", *, read_stdin: bool = False) -> Path:
        """Write program ``name``: log the call, then run ``body`` (Python; ``sys.exit(n)`` sets the code)."""
        path = self.directory / name
        prelude = PRELUDE.format(python=sys.executable, read_stdin=read_stdin, log=str(self.log_path(name)))
        path.write_text(prelude + textwrap.dedent(body) + "\n", encoding="utf-8")
        path.chmod(0o755)
        return path

    def log_path(self, name: str) -> Path:
        return self.directory / f"{name}.calls.jsonl"

    def calls(self, name: str) -> list[FakeCall]:
        """Every call of ``name`` so far, oldest first."""
        path = self.log_path(name)
        if not path.is_file():
            return []
        return [FakeCall(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: this process's environment) with PATH starting at the fake programs."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = os.pathsep.join([str(self.directory), env.get("PATH", "")])
        return env
