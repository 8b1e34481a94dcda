"""A throw-away virtual environment on top of the test interpreter, to ``pi install`` packs into for real.

The venv is created ``--without-pip`` and a ``.pth`` file adds the running interpreter's site-packages
(pi-harness, its dependencies, pip, setuptools), so nothing is downloaded. (``--system-site-packages``
would expose the *base* interpreter's packages, not this venv's, when the tests run from a venv.) pip
runs with ``PIP_NO_INDEX`` and without build isolation, so a local path builds offline; packages are
built from copies in ``tmp_path``, never in the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.kit import run_pi, write_fake_models

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
# The Google wire is spoken with httpx2 alone: no vendor SDK import, so each `pi -p` starts quickly.
API = "google-generative-ai"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "venv: builds packages and pi-installs them into a throw-away venv "
                                       "(about 30 s in all; deselect with -m 'not venv')")


def can_build_offline() -> str | None:
    """Why a local package cannot be built without the network here, or None if it can."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not importable"
    major = int(setuptools.__version__.split(".")[0])
    if major < 70:  # setuptools gained its own bdist_wheel in 70.1; older ones need the wheel package
        try:
            import wheel  # noqa: F401
        except ImportError:
            return f"setuptools {setuptools.__version__} needs the 'wheel' package to build wheels"
    return None


def copy_example(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(EXAMPLES / name, target,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".pytest_cache"))
    return target


@dataclass
class Eco:
    venv: Path
    home: Path  # PI_CODING_AGENT_DIR
    cwd: Path  # the project pi runs in
    server: FakeModelServer

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONPATH"}
        env.update(PI_CODING_AGENT_DIR=str(self.home), **self.venv_env())
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        return env

    def venv_env(self) -> dict[str, str]:
        return {"VIRTUAL_ENV": str(self.venv), "PYTHONDONTWRITEBYTECODE": "1", "PIP_NO_INDEX": "1",
                "PIP_NO_BUILD_ISOLATION": "0",  # pip reads "0" here as "no isolation"
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def pi(self, *args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return run_pi(*args, agent_dir=self.home, cwd=cwd or self.cwd, pi=self.venv / "bin" / "pi", env=self.env(),
                      timeout=timeout)

    def project_site(self) -> Path:
        """Where ``pi install -l`` puts the project's distributions (pip's ``--prefix .pi/packages``)."""
        from pi_core.loader.plugins import project_site

        return project_site(self.cwd)

    def ask(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``pi --provider fake --model fake-model -p ARGS`` against the fake server."""
        return self.pi("--provider", "fake", "--model", "fake-model", "--no-session", "-p", *args)

    def pip_list(self) -> dict[str, str]:
        out = subprocess.run([str(self.python), "-m", "pip", "list", "--format=json"], capture_output=True,
                             text=True, env=self.env(), check=True).stdout
        return {row["name"]: row["version"] for row in json.loads(out)}

    def tool_definitions(self, index: int) -> list[dict]:
        """Tools offered to the model in request ``index`` (Gemini's functionDeclarations)."""
        return [d for group in self.server.requests[index].body.get("tools", []) for d in group["functionDeclarations"]]

    def sent_tools(self, index: int) -> list[str]:
        return [tool["name"] for tool in self.tool_definitions(index)]

    def tool_results(self, index: int) -> list[tuple[str, bool]]:
        """(text, is_error) of every tool result the model was sent in request ``index``."""
        found = []
        for content in self.server.requests[index].body["contents"]:
            for part in content["parts"]:
                if "functionResponse" in part:
                    response = part["functionResponse"]["response"]
                    found.append((response.get("error", response.get("output")), "error" in response))
        return found


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site_dir = Path(sysconfig.get_paths(vars={"base": str(path), "platbase": str(path)})["purelib"])
    base_site = sysconfig.get_paths()["purelib"]
    (site_dir / "_pi_test_base.pth").write_text(f"import site; site.addsitedir({base_site!r})\n")
    launcher = path / "bin" / "pi"  # what pip writes for pi-harness's console script
    launcher.write_text(f"#!{path / 'bin' / 'python'}\nimport sys\nfrom pi_core.app.cli import cli\nsys.exit(cli())\n")
    launcher.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def eco(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Eco]:
    reason = can_build_offline()
    if reason:
        pytest.skip(f"cannot build packages offline: {reason}")
    root = tmp_path_factory.mktemp("eco")
    venv = make_venv(root / "venv")
    cwd = root / "project"
    cwd.mkdir()
    with FakeModelServer() as server:
        write_fake_models(root / "agent", server, API)
        yield Eco(venv, root / "agent", cwd, server)
