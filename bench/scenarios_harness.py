"""The two harnesses under test and how one child run is measured (wall time and the child's peak RSS).

Peak RSS comes from ``/usr/bin/time -f %M`` when it exists: it reads the rusage of the process it
waited for, which covers that process and every descendant it waited for (the shell of ``bash``, ``rg``
of ``grep``), so both harnesses are measured the same way. Without it, a fresh Python intermediary
reports ``getrusage(RUSAGE_CHILDREN)`` instead (same semantics, a little more overhead).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pi_core.testing.pi_home import FAKE_MODEL, FAKE_PROVIDER, write_models

GNU_TIME = "/usr/bin/time"
_INTERMEDIARY = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(sys.argv[1], 'w').write(f'{u.ru_maxrss} {u.ru_utime} {u.ru_stime}')\n"
    "sys.exit(code)\n"
)
PRINT_ARGS = ["--provider", FAKE_PROVIDER, "--model", FAKE_MODEL]


@dataclass
class Harness:
    """One ``pi`` under test: ``label`` keys it (``pi``, ``pi16``, ``pi073``), ``title`` heads its column."""

    label: str
    argv: list[str]
    kind: str  # "python" or "node"
    root: Path  # per-harness scratch: agent dirs live under it
    title: str = ""

    def agent_dir(self, key: str, base_url: str | None = None, api: str | None = None) -> Path:
        """A fresh agent dir for one scenario (settings never leak between tools or scenarios)."""
        home = self.root / "agents" / key
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        if base_url and api:
            write_models(home, base_url, api)
        return home

    def env(self, agent_dir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
        # A user's pi caches its bytecode: a test shell's PYTHONDONTWRITEBYTECODE would make every
        # changed module recompile on each start.
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("PI_") and key != "PYTHONDONTWRITEBYTECODE"}
        # Both find the same ripgrep (the venv's); offline Pi cannot download its own.
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        env.update({"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                    "NO_COLOR": "1", "TERM": "dumb"})
        env.update(extra or {})
        return env


@dataclass
class Sample:
    seconds: float
    peak_kib: int | None
    ok: bool
    problem: str = ""
    cpu_seconds: float | None = None  # user + system time of the child and its waited-for descendants
    started: float = 0.0  # time.perf_counter() just before the spawn
    ended: float = 0.0  # ... and once the child has exited
    metrics: dict[str, float] = field(default_factory=dict)  # from the fake server's timestamps (bench/run.py)


@dataclass
class Child:
    """One measured child run: what to run, where, and how to tell it did the work."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    expect: str | None = None  # must appear in stdout
    timeout: float = 900.0


def measure(child: Child) -> Sample:
    """Run ``child`` once; wall time is taken around the whole run (the wrapper's exec is ~1 ms)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss", delete=False) as rss_file:
        rss_path = rss_file.name
    if os.path.exists(GNU_TIME):
        argv = [GNU_TIME, "-q", "-f", "%M %U %S", "-o", rss_path, *child.argv]
    else:
        argv = [sys.executable, "-S", "-c", _INTERMEDIARY, rss_path, *child.argv]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=child.cwd, env=child.env, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=child.timeout, check=False)
    except subprocess.TimeoutExpired:
        return Sample(time.perf_counter() - start, None, False, f"timed out after {child.timeout:.0f} s")
    end = time.perf_counter()
    seconds = end - start
    peak, cpu = _read_usage(rss_path)
    stdout = done.stdout.decode(errors="replace")
    if done.returncode != 0:
        stderr = _tail(done.stderr.decode(errors="replace"))
        return Sample(seconds, peak, False, f"exit {done.returncode}: {stderr}", cpu, start, end)
    if child.expect is not None and child.expect not in stdout:
        return Sample(seconds, peak, False, f"expected {child.expect!r} in output, got {_tail(stdout)!r}", cpu,
                      start, end)
    return Sample(seconds, peak, True, cpu_seconds=cpu, started=start, ended=end)


def _read_usage(path: str) -> tuple[int | None, float | None]:
    """(peak RSS in KiB, user + system seconds) from the wrapper's report."""
    try:
        lines = Path(path).read_text().strip().splitlines()
    finally:
        os.unlink(path)
    # GNU time prints "Command exited with non-zero status N" before the figures on failure.
    fields = lines[-1].split() if lines else []
    try:
        return int(fields[0]), float(fields[1]) + float(fields[2])
    except (IndexError, ValueError):
        return None, None


def _tail(text: str, limit: int = 300) -> str:
    text = " ".join(text.strip().split())
    return text if len(text) <= limit else "…" + text[-limit:]


def find_pi(explicit: str | None) -> list[str]:
    """Our ``pi``: the given path, else the script next to this interpreter, else ``pi`` on PATH."""
    if explicit:
        return [explicit]
    beside = Path(sys.executable).parent / "pi"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("pi")
    if not found:
        raise SystemExit("bench: cannot find pi; install this repo (pip install -e .) or pass --pi PATH")
    return [found]
