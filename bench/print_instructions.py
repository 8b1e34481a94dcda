"""Instructions of one ``pi -p hi`` per wire, under callgrind: a load-independent start-up figure.

    .venv/bin/python -m bench.print_instructions [--wires anthropic-messages,openai-completions] [--builds] [--phases]

Each wire gets the bench's agent dir (a ``models.json`` naming the fake model server), one untimed run
(bytecode caches written), then one run under ``valgrind --tool=callgrind``. ``--builds`` also prints
which pydantic validators the (uninstrumented) run built, in order, and from where (a ``sitecustomize``
on ``PYTHONPATH`` wraps pydantic's public ``BaseModel.model_rebuild``, which every deferred build goes
through). ``--phases`` splits the run into start-up phases (one more run under callgrind, through a driver
that calls ``os.getppid()`` at each phase's end and ``--dump-before=getppid``): where the instructions go, not
only how many there are. The driver runs pi's CLI in-process, so its total is a little above the plain run's.
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
_PHASES_DRIVER = """\
import atexit
import os
import sys

_getppid = os.getppid
labels = []


def mark(label):
    labels.append(label)
    _getppid()  # callgrind dumps the counts so far (--dump-before=getppid)


mark("interpreter start")
import pi_core.app.cli as cli
from pi_core.app import startup as boot

mark("import pi_core.app.cli and pi_core.app.startup")


def after(fn, label):
    def wrapped(*args, **kwargs):
        result = fn(*args, **kwargs)
        mark(label)
        return result
    return wrapped


boot.load_environment = after(boot.load_environment, "load_environment: settings, plugins, registry, trust")
_model_registry = boot.model_registry


def model_registry(*args, **kwargs):
    mark("build_session up to the model registry")
    result = _model_registry(*args, **kwargs)
    mark("model_registry: catalog, models file")
    return result


boot.model_registry = model_registry
boot.mode_request = after(boot.mode_request, "the rest of mode_request (session store, tools, prompt)")


def write_labels():
    with open(os.environ["PI_PHASE_LABELS"], "w") as out:
        out.write("\\n".join([*labels, "the run: the request, the answer, exit"]))


atexit.register(write_labels)  # pi leaves by os._exit after running the atexit handlers
sys.argv = ["pi", *sys.argv[1:]]
cli.cli()
"""


def phases(pi: list[str], env: dict[str, str], scratch: Path) -> list[str]:
    """Instructions per start-up phase of one print run (``--phases``)."""
    driver = scratch / "phases_driver.py"
    driver.write_text(_PHASES_DRIVER)
    out_dir = scratch / "phases"
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    labels = scratch / "phase-labels.txt"
    command = [sys.executable, str(driver), *pi[1:]]
    env = {**env, "PI_PHASE_LABELS": str(labels)}
    subprocess.run(command, env=env, cwd=scratch, capture_output=True, check=False)  # warm: its own entry-point cache
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid",
                    f"--callgrind-out-file={out_dir / 'cg.out'}", *command],
                   env=env, cwd=scratch, capture_output=True, check=False)
    names = labels.read_text().splitlines() if labels.exists() else []
    dumps = sorted(out_dir.glob("cg.out.*"), key=lambda p: int(p.suffix[1:])) + [out_dir / "cg.out"]
    if len(dumps) != len(names):
        return [f"  phases: {len(dumps)} dumps for {len(names)} phases (a phase ran twice or not at all)"]
    rows, total = [], 0
    for name, dump in zip(names, dumps, strict=True):
        found = re.search(r"^summary: (\d+)", dump.read_text(errors="replace"), re.MULTILINE)
        count = int(found.group(1)) if found else 0
        total += count
        rows.append(f"  {count / 1e6:9,.1f} M  {name}")
    return [*rows, f"  {total / 1e6:9,.1f} M  total (driver)"]


def run(wire: str, server: FakeModelServer, scratch: Path, builds: bool, split: bool = False) -> str:
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
    if split:
        lines += phases(pi, env, home)
    return "\n".join([f"{wire}: {figure}", *lines])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wires", default=",".join(WIRES[:2]))
    parser.add_argument("--builds", action="store_true", help="also list the pydantic validators built")
    parser.add_argument("--phases", action="store_true", help="also split the run's instructions by start-up phase")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    wires = [w for w in args.wires.split(",") if w]
    with tempfile.TemporaryDirectory(prefix="pi-instructions-") as tmp, FakeModelServer() as server:
        server.add(*[Reply(text="DONE") for _ in range(5 * len(wires))])
        for wire in wires:
            print(run(wire, server, Path(tmp), args.builds, args.phases), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
