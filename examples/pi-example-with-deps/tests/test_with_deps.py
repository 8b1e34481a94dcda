"""with_deps: ``pi install`` brings the pack's own dependency (pytimeparse) along; the tool then answers in
milliseconds, an unreadable duration is an error result, and ``pi remove`` takes the pack away.

The pack is installed for real, into a throw-away venv on top of this interpreter's packages (as in
tests/ecosystem). pip may fetch pytimeparse from the configured index or wheel folders; with none reachable
the test is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.kit import run_pi, write_fake_models
from tests.ecosystem.conftest import can_build_offline, make_venv

PACK = Path(__file__).resolve().parents[1]
NO_INDEX = ("No matching distribution found for pytimeparse", "Could not find a version that satisfies")


def test_install_use_and_remove(tmp_path: Path) -> None:
    reason = can_build_offline()
    if reason:
        pytest.skip(f"cannot build packages here: {reason}")
    venv = make_venv(tmp_path / "venv")
    pack = tmp_path / "pi-example-with-deps"
    shutil.copytree(PACK, pack, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    home, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    env = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "PIP_NO_BUILD_ISOLATION": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    env = {k: v for k, v in {**os.environ, **env}.items() if k not in ("PYTHONPATH", "PIP_NO_INDEX")}

    def pi(*args: str) -> subprocess.CompletedProcess[str]:
        return run_pi(*args, agent_dir=home, cwd=cwd, pi=venv / "bin" / "pi", env=env, timeout=300)

    installed = pi("install", str(pack))
    output = installed.stdout + installed.stderr
    if installed.returncode != 0 and any(text in output for text in NO_INDEX):
        pytest.skip(f"no package index reachable for pytimeparse:\n{output[-500:]}")
    assert installed.returncode == 0, output
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import pytimeparse; print(pytimeparse.__file__)"],
                           capture_output=True, text=True, env=env, check=False)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), "pip installed the dependency into pi's environment"

    with FakeModelServer() as server:
        write_fake_models(home, server)
        server.add(Reply(tool_calls=[("parse_duration", {"duration": "2 days"}),
                                     ("parse_duration", {"duration": "1500"}),
                                     ("parse_duration", {"duration": "soon"})]), Reply(text="done"))
        done = pi("-e", "plugin:with_deps", "--provider", "fake", "--model", "fake-model", "--no-session",
                  "--mode", "json", "how long?")
        assert done.returncode == 0, done.stderr
        results = [part["functionResponse"]["response"] for content in server.requests[1].body["contents"]
                   for part in content["parts"] if "functionResponse" in part]
        assert results[0] == {"output": "2 days = 172800000 milliseconds"}
        assert results[1] == {"output": "1500 = 1500 milliseconds"}
        assert results[2] == {"error": 'Invalid duration: "soon"'}

    removed = pi("remove", "pi-example-with-deps")
    assert removed.returncode == 0, removed.stdout + removed.stderr
    gone = pi("-e", "plugin:with_deps", "--provider", "fake", "--model", "fake-model", "-p", "hi")
    assert gone.returncode != 0 and "with_deps" in gone.stderr
