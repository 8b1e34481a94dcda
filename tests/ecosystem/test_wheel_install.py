"""pi as a user gets it: a non-editable wheel in a fresh venv, beside a distribution that ships its own top-level
``plugins`` package.

The wheel is built from a copy of the sources. The venv has no pip and no pi of its own: a ``.pth`` file adds a
directory of links to this interpreter's site-packages *minus* pi-harness (so its dependencies and pip come from
there, offline, and only the wheel provides pi).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.kit import run_pi, write_fake_models
from tests.ecosystem.conftest import can_build_offline

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "CONTRIBUTING.md", "CHANGELOG.md", "docs", "pi_core",
           "plugins", "builtin_tools", "examples/pi-examples/src")
API = "google-generative-ai"  # spoken with httpx2 alone: each pi starts quickly


@dataclass
class Installed:
    venv: Path
    home: Path
    cwd: Path
    server: FakeModelServer
    wheel: Path

    @property
    def site(self) -> Path:
        return Path(sysconfig.get_paths(vars={"base": str(self.venv), "platbase": str(self.venv)})["purelib"])

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("PYTHONPATH", "TMUX")}
        env.update(PI_CODING_AGENT_DIR=str(self.home), VIRTUAL_ENV=str(self.venv), PIP_NO_INDEX="1",
                   PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        return env

    def pi(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run_pi(*args, agent_dir=self.home, cwd=self.cwd, pi=self.venv / "bin" / "pi",
                      env={**self.env(), **(env or {})})

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "python"), "-m", "pip", *args], capture_output=True,
                              text=True, env=self.env(), check=True, timeout=300)


def _dependency_links(target: Path) -> None:
    """Links to every entry of this interpreter's site-packages except pi-harness's own."""
    base = Path(sysconfig.get_paths()["purelib"])
    target.mkdir()
    for entry in base.iterdir():
        name = entry.name.lower()
        if name.startswith(("pi_harness", "__editable__.pi_harness", "__editable___pi_harness", "pi_core",
                            "pi_plugins", "pi_builtin_tools", "_pi_test")):
            continue
        (target / entry.name).symlink_to(entry)


def _build_wheel(dest: Path) -> Path:
    source = dest / "src"
    source.mkdir()
    for name in SOURCES:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(item, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "-q", "-w", str(dest), str(source)], check=True, capture_output=True, timeout=300)
    return next(dest.glob("pi_harness-*.whl"))


def _shadowing_dist(dest: Path) -> Path:
    """A distribution whose top-level ``plugins`` package has a catalog of its own (what once replaced pi's)."""
    root = dest / "shadow"
    (root / "plugins").mkdir(parents=True)
    (root / "plugins" / "__init__.py").write_text("")
    (root / "plugins" / "catalog.py").write_text("raise ImportError('the other distribution\\'s catalog')\n")
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "shadow-plugins"\nversion = "1.0"\n[tool.setuptools]\npackages = ["plugins"]\n')
    return root


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    reason = can_build_offline()
    if reason:
        pytest.skip(f"cannot build packages offline: {reason}")
    root = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _dependency_links(root / "deps")
    cwd = root / "project"
    cwd.mkdir()
    with FakeModelServer() as server:
        write_fake_models(root / "agent", server, API)
        found = Installed(venv, root / "agent", cwd, server, wheel)
        (found.site / "_pi_test_deps.pth").write_text(f"import site; site.addsitedir({str(root / 'deps')!r})\n")
        found.pip("install", "--no-deps", str(wheel))
        yield found


def test_the_wheel_installs_collision_proof_import_names(installed: Installed) -> None:
    names = {name.split("/")[0] for name in zipfile.ZipFile(installed.wheel).namelist()}
    assert {"pi_core", "pi_plugins", "pi_builtin_tools"} <= names
    assert "pi_core/types.py" in zipfile.ZipFile(installed.wheel).namelist()
    assert not names & {"plugins", "builtin_tools"}
    assert (installed.site / "pi_plugins" / "catalog_models.json").is_file()  # package data came along


def test_plugins_and_tools_commands_work_from_the_wheel(installed: Installed) -> None:
    plugins = installed.pi("plugins", "--json")
    assert plugins.returncode == 0, plugins.stderr
    rows = {row["name"]: row for row in json.loads(plugins.stdout)}
    assert {"catalog", "read", "anthropic-messages", "interactive", "modes"} <= set(rows)
    assert all(row["layer"] != "failed" for row in rows.values())
    tools = installed.pi("tools")
    assert tools.returncode == 0 and "read" in tools.stdout and "bash" in tools.stdout
    assert "hello" not in tools.stdout  # the example plugins ship opt-in
    enabled = installed.pi("-e", "plugin:hello", "tools")
    assert enabled.returncode == 0 and "hello" in enabled.stdout, enabled.stderr


def test_print_json_and_rpc_modes_answer_from_the_wheel(installed: Installed) -> None:
    installed.server.add(Reply(text="printed answer"), Reply(text="json answer"), Reply(text="rpc answer"))
    ask = ("--provider", "fake", "--model", "fake-model", "--no-session")
    printed = installed.pi(*ask, "-p", "hello")
    assert printed.returncode == 0 and printed.stdout.strip() == "printed answer", printed.stderr
    events = installed.pi(*ask, "--mode", "json", "hello")
    assert events.returncode == 0, events.stderr
    assert any(json.loads(line).get("type") == "agent_end" for line in events.stdout.splitlines())
    assert "json answer" in events.stdout
    with RpcClient(list(ask), command=[str(installed.venv / "bin" / "pi")], cwd=installed.cwd,
                   env=installed.env()) as client:
        client.prompt_and_wait("hello")
        assert client.get_last_assistant_text() == "rpc answer"


def test_the_documentation_pi_names_ships_inside_the_wheel(installed: Installed, tmp_path: Path) -> None:
    """Issue 16 item 11: the system prompt's documentation paths, and the guides the no-models text names,
    exist after a non-editable install, inside the installed package."""
    installed.server.add(Reply(text="ok"))
    done = installed.pi("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hello")
    assert done.returncode == 0, done.stderr
    system = installed.server.requests[-1].body["systemInstruction"]["parts"][0]["text"]
    docs = re.findall(r"^- [^:]+: (/\S+\.md)$", system, flags=re.MULTILINE)
    assert len(docs) == 3, system
    for doc in map(Path, docs):
        assert doc.is_file() and installed.site in doc.parents, doc
    shipped = installed.site / "pi_core" / "_docs"
    for link in re.findall(r"\]\((docs/[\w-]+\.md)", (shipped / "README.md").read_text()):
        assert (shipped / link).is_file(), link  # README's links into docs/ resolve in the wheel too
    assert (shipped / "docs" / "cli.md").is_file() and (shipped / "docs" / "rpc.md").is_file()
    changelog = subprocess.run([str(installed.venv / "bin" / "python"), "-c",
                                "from pi_plugins.interactive.session_commands import changelog_path as p; print(p())"],
                               capture_output=True, text=True, env=installed.env(), cwd=installed.cwd, check=True)
    assert Path(changelog.stdout.strip()) == shipped / "CHANGELOG.md"  # /changelog works from a wheel too

    empty = tmp_path / "no-models"
    empty.mkdir()
    listed = installed.pi("--list-models", env={"PI_CODING_AGENT_DIR": str(empty)})
    guides = [Path(line.strip()) for line in listed.stdout.splitlines() if line.strip().endswith(".md")]
    assert len(guides) == 2 and all(g.is_file() and installed.site in g.parents for g in guides), listed.stdout


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_interactive_mode_answers_from_the_wheel(installed: Installed) -> None:
    installed.server.add(Reply(text="interactive answer"))
    socket = f"pi-wheel-{os.getpid()}"
    pi = f"{installed.venv / 'bin' / 'pi'} --provider fake --model fake-model --no-session --tui-mode regular"
    env = {**installed.env(), "TERM": "xterm-256color"}
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "pi", "-x", "100", "-y", "30", "-c",
                    str(installed.cwd), f"{pi}; sleep 60"], env=env, check=True, timeout=20)
    try:
        screen = _wait_for_screen(socket, "fake-model")
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "pi", "-l", "hello there"], check=True)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "pi", "Enter"], check=True)
        screen = _wait_for_screen(socket, "interactive answer")
        assert "hello there" in screen
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "pi", "-l", "/changelog"], check=True)
        time.sleep(0.5)  # let the completion menu settle
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "pi", "Enter"], check=True)
        _wait_for_screen(socket, "The export is a viewer like Pi's")  # the wheel's own CHANGELOG.md, issue 21
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def _wait_for_screen(socket: str, text: str, limit: float = 60.0) -> str:
    deadline = time.monotonic() + limit
    screen = ""
    while time.monotonic() < deadline:
        screen = subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", "pi"], capture_output=True,
                                text=True, check=False).stdout
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared:\n{screen}")


def test_a_distribution_with_its_own_plugins_package_installs_and_uninstalls_beside_pi(
        installed: Installed, tmp_path: Path) -> None:
    installed.pip("install", "--no-deps", "--no-build-isolation", str(_shadowing_dist(tmp_path)))
    assert (installed.site / "plugins" / "catalog.py").is_file()
    for phase in ("installed", "uninstalled"):
        listed = installed.pi("plugins", "--json")
        rows = {row["name"]: row for row in json.loads(listed.stdout)}
        assert rows["catalog"]["layer"] == "builtin", (phase, rows["catalog"])
        assert (installed.site / "pi_plugins" / "catalog.py").is_file(), phase
        models = installed.pi("--list-models", "claude", env={"ANTHROPIC_API_KEY": "dummy"})
        assert "claude" in models.stdout, (phase, models.stderr)  # the built-in catalog's models
        if phase == "installed":
            installed.pip("uninstall", "-y", "shadow-plugins")
            assert not (installed.site / "plugins").exists()
