"""Instructions of one ``pi -p hi`` per wire, under callgrind: a load-independent start-up figure.

    .venv/bin/python -m bench.print_instructions [--wires anthropic-messages,openai-completions] [--builds]

Each wire gets the bench's agent dir (a ``models.json`` naming the fake model server), one untimed run
(bytecode caches written), then one run under ``valgrind --tool=callgrind``. ``--builds`` also prints
which pydantic validators the (uninstrumented) run built, in order, and from where (a ``sitecustomize``
on ``PYTHONPATH`` wraps pydantic's public ``BaseModel.model_rebuild``, which every deferred build goes
through).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import FAKE_MODEL, FAKE_PROVIDER, write_models

WIRES = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")
_BUILDS_HOOK = """\
import sys, traceback
from pathlib import Path

from pydantic import BaseModel

_rebuild = BaseModel.model_rebuild.__func__

def _logged(cls, *args, **kwargs):
    if not cls.__pydantic_complete__:
        frames = [f for f in traceback.extract_stack()[:-1] if "pydantic" not in f.filename][-1:]
        where = ", ".join(f"{Path(f.filename).name}:{f.lineno}" for f in frames)
        sys.stderr.write(f"build {cls.__module__}.{cls.__qualname__} <- {where}\\n")
    return _rebuild(cls, *args, **kwargs)

BaseModel.model_rebuild = classmethod(_logged)
"""


def run(wire: str, server: FakeModelServer, scratch: Path, builds: bool) -> str:
    home = scratch / wire
    write_models(home, server.base_url_for(wire), wire)
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(home), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
           "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pi = [str(Path(sys.executable).parent / "pi"), "--provider", FAKE_PROVIDER, "--model", FAKE_MODEL,
          "--no-session", "-p", "hi"]
    warm = subprocess.run(pi, env=env, cwd=scratch, capture_output=True, text=True, check=False)
    if warm.returncode != 0:
        return f"{wire}: pi failed: {warm.stderr.strip()[-300:]}"
    lines = []
    if builds:
        hook = scratch / "hook"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(_BUILDS_HOOK)
        logged = subprocess.run(pi, env={**env, "PYTHONPATH": str(hook)}, cwd=scratch, capture_output=True,
                                text=True, check=False)
        lines += [f"  {line}" for line in logged.stderr.splitlines() if line.startswith("build ")]
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *pi], env=env,
                         cwd=scratch, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    figure = f"{int(found.group(1)) / 1e6:,.1f} M instructions" if found else "no callgrind figure"
    return "\n".join([f"{wire}: {figure}", *lines])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wires", default=",".join(WIRES[:2]))
    parser.add_argument("--builds", action="store_true", help="also list the pydantic validators built")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    wires = [w for w in args.wires.split(",") if w]
    with tempfile.TemporaryDirectory(prefix="pi-instructions-") as tmp, FakeModelServer() as server:
        server.add(*[Reply(text="DONE") for _ in range(3 * len(wires))])
        for wire in wires:
            print(run(wire, server, Path(tmp), args.builds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
