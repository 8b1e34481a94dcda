"""The walk of ``argv`` through pi: ``app/cli.py`` is entered once (``cli()``), parses, dispatches and hands the
run over; other modules call back into it at most three times (issue 32 part 6). Traced with ``sys.setprofile``
over a real ``pi --version`` and ``pi -p`` against the fake model server; counts calls, never time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner

# Runs pi's console entry under a profile hook that records every call into a function of app/cli.py: an
# entry (no cli.py frame on the stack yet) or a climb back (called from another module while cli.py runs).
TRACER = """\
import json, sys
from pathlib import Path
import pi_core.app.cli as cli_module

CLI = cli_module.__file__
walk = {"entries": [], "climbs": []}

def where(frame):
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"

def profile(frame, event, arg):
    if event != "call" or frame.f_code.co_filename != CLI:
        return
    caller = frame.f_back
    if caller is not None and caller.f_code.co_filename == CLI:
        return
    outer, in_cli = caller, False
    while outer is not None and not in_cli:
        in_cli, outer = outer.f_code.co_filename == CLI, outer.f_back
    walk["climbs" if in_cli else "entries"].append(f"{where(caller) if caller else '?'} -> {frame.f_code.co_name}")

sys.argv = ["pi", *sys.argv[2:]]
sys.setprofile(profile)
try:
    cli_module.cli()
except SystemExit:
    pass
finally:
    sys.setprofile(None)
    Path(sys.argv_out if hasattr(sys, "argv_out") else OUT).write_text(json.dumps(walk))
"""


def _walk(pi: PiRunner, tmp_path: Path, *args: str) -> dict[str, list[str]]:
    out = tmp_path / "walk.json"
    script = TRACER.replace("Path(sys.argv_out if hasattr(sys, \"argv_out\") else OUT)", f"Path({str(out)!r})")
    done = subprocess.run([sys.executable, "-c", script, "-", *args], capture_output=True, text=True, cwd=pi.cwd,
                          env=pi.env(), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    walk: dict[str, list[str]] = json.loads(out.read_text())
    walk["stdout"] = [done.stdout]
    return walk


FAKE = ("--provider", "fake", "--model", "fake-model")


# Each of pi's ways through cli.py (the version fast path, help, a mode, a flag action with and without plugins)
# and what its stdout starts with.
@pytest.mark.parametrize(("args", "shown"), [
    (("--version",), "0.1.0"),
    (("--help",), "pi - a minimal, hackable coding agent"),
    ((*FAKE, "-p", "hello"), "hi there"),
    ((*FAKE, "--mode", "json", "hello"), '{"type":'),
    ((*FAKE, "--list-models"), "provider"),
    (("--export", "SESSION"), "Exported to: "),
], ids=["version", "help", "print", "json", "list-models", "export"])
def test_argv_enters_cli_py_once_and_climbs_back_at_most_three_times(tmp_path: Path, args: tuple[str, ...],
                                                                      shown: str) -> None:
    with pi_runner(tmp_path) as pi:
        pi.server.add(Reply(text="hi there"))
        if "SESSION" in args:  # a session to export: written by a print run first
            assert pi.run(*FAKE, "-p", "hello").returncode == 0
            [session] = pi.session_files()
            args = (*(str(session) if a == "SESSION" else a for a in args), str(tmp_path / "out.html"))
        walk = _walk(pi, tmp_path, *args)
    assert walk["stdout"][0].startswith(shown), walk["stdout"]
    assert walk["entries"] == ["<string>:<module> -> cli"], walk
    assert len(walk["climbs"]) <= 3, walk["climbs"]
