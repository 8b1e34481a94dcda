"""pip for the interpreter pi runs in: run it with its output streamed, and make what it installed importable in
this process (``pi install`` checks a new package's contributions right away)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

import click

from pi_core.errors import PiError

Echo = Callable[[str, bool], None]  # (line, to_stderr)


class PackageError(PiError):
    """A package command failed; the CLI prints ``Error: <message>`` and exits 1."""


def _pump(stream: IO[str], to_stderr: bool, echo: Echo) -> None:
    for line in iter(stream.readline, ""):
        if not line.startswith("Requirement already satisfied: "):  # pi's own dependencies, one line each
            echo(line.rstrip("\n"), to_stderr)


def path_files(site: Path | None) -> dict[Path, float]:
    import sysconfig

    folders = {site} if site is not None else {Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    return {pth: pth.stat().st_mtime for folder in folders if folder.is_dir() for pth in folder.glob("*.pth")}


def read_new_path_files(before: dict[Path, float], site: Path | None) -> None:
    """Read the .pth files pip just wrote (an editable install's source folder or import hook): this process
    read its .pth files at start-up only, so the contribution check could not import the new package."""
    import importlib
    import site as site_module

    for pth, mtime in sorted(path_files(site).items()):
        if before.get(pth) != mtime:
            site_module.addpackage(str(pth.parent), pth.name, None)
    importlib.invalidate_caches()


def run_pip(args: Sequence[str], echo: Echo | None = None, site: Path | None = None) -> int:
    """Run ``python -m pip ARGS`` for this interpreter, streaming stdout and stderr line by line. With a
    project's ``site`` pip also sees what is installed there (to upgrade or uninstall it in place)."""
    out = echo or (lambda line, err: click.echo(line, err=err))
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONUNBUFFERED": "1"}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    try:
        proc = subprocess.Popen([sys.executable, "-m", "pip", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
    except OSError as err:
        raise PackageError(f"could not run pip with {sys.executable}: {err}") from err
    assert proc.stdout is not None and proc.stderr is not None
    err_thread = threading.Thread(target=_pump, args=(proc.stderr, True, out), daemon=True)
    err_thread.start()
    try:
        _pump(proc.stdout, False, out)
        err_thread.join()
    except KeyboardInterrupt:
        proc.wait()  # Ctrl+C reached pip too: let it clean up before anything is rolled back
        raise
    return proc.wait()
