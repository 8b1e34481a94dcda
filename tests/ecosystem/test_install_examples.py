"""The example packs installed with the real ``pi install`` into a venv, then used by the real CLI.

Tests run in file order against one venv: install, use, list, then remove.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply

from .conftest import Eco, copy_example

# One worker runs the whole file (pytest-xdist --dist loadfile): each test builds on the one before.
pytestmark = pytest.mark.venv


@pytest.fixture(scope="module")
def packs(eco: Eco, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    src = tmp_path_factory.mktemp("packs")
    return {name: copy_example(name, src) for name in ("pi-web-tools", "pi-acme-tools")}


def test_install_streams_pip_and_shows_contributions(eco: Eco, packs: dict[str, Path]) -> None:
    before = eco.pip_list()
    result = eco.pi("install", "-l", str(packs["pi-web-tools"]))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert f"Installing {packs['pi-web-tools']}..." in out
    assert "Successfully installed pi-web-tools-0.1.0" in out  # pip's own output, passed through
    assert f"Installed {packs['pi-web-tools']}" in out
    assert "plugin web_fetch" in out and "tools: web_fetch" in out and "tools: todo" in out
    # -l: the project's own, in .pi/packages; pi's environment is unchanged (httpx2 and pi come from it)
    assert eco.pip_list() == before
    site = eco.project_site()
    assert sorted(p.name for p in site.glob("*.dist-info")) == ["pi_web_tools-0.1.0.dist-info"]
    settings = tomllib.loads((eco.cwd / ".pi" / "settings.toml").read_text())
    assert settings["packages"] == [str(packs["pi-web-tools"])]
    assert f"Trusted {eco.cwd}" in out  # the folder had nothing to trust before: the user's own install trusts it


def test_a_project_package_stays_in_its_project(eco: Eco, tmp_path: Path) -> None:
    eco.server.add(Reply(text="hello"))
    first = len(eco.server.requests)
    other = tmp_path / "elsewhere"
    other.mkdir()
    result = eco.pi("--provider", "fake", "--model", "fake-model", "--no-session", "-p", "hi", cwd=other)
    assert result.returncode == 0, result.stderr
    assert "todo" not in eco.sent_tools(first) and "web_fetch" not in eco.sent_tools(first)


def test_install_of_an_override_pack_names_what_it_replaces(eco: Eco, packs: dict[str, Path]) -> None:
    result = eco.pi("install", str(packs["pi-acme-tools"]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "plugin read (replaces the built-in plugin 'read')" in result.stdout
    assert "plugin bash (replaces the built-in plugin 'bash')" in result.stdout


def test_list_shows_packages_and_project_requirements(eco: Eco, packs: dict[str, Path]) -> None:
    result = eco.pi("list")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Installed packages:\n  pi-acme-tools 0.1.0\n")
    assert "  pi-web-tools 0.1.0\n" not in result.stdout  # not installed for every project
    assert f"Project packages:\n  {packs['pi-web-tools']}\n    installed 0.1.0" in result.stdout
    data = json.loads(eco.pi("list", "--json").stdout)
    assert data["installed"]["pi-acme-tools"]["plugins"][0]["tools"] == ["bash"]
    assert data["project"] == [{"requirement": str(packs["pi-web-tools"]), "distribution": "pi-web-tools",
                                "installed": "0.1.0"}]


def test_the_model_receives_the_installed_tools(eco: Eco) -> None:
    eco.server.add(Reply(text="hello"))
    first = len(eco.server.requests)
    result = eco.ask("hi")
    assert result.returncode == 0, result.stderr
    assert eco.sent_tools(first) == ["read", "bash", "edit", "write", "todo", "web_fetch"]
    read = next(t for t in eco.tool_definitions(first) if t["name"] == "read")
    assert "ACME policy" in read["description"]


def test_company_read_runs_and_its_denial_reaches_the_model(eco: Eco) -> None:
    (eco.cwd / ".env").write_text("API_TOKEN=hunter2\n")
    (eco.cwd / "notes.md").write_text("meeting at noon\n")
    eco.server.add(Reply(tool_calls=[("read", {"path": ".env"}), ("read", {"path": "notes.md"})]),
                   Reply(text="I may not read .env"))
    first = len(eco.server.requests)
    result = eco.ask("show me the secrets")
    assert result.returncode == 0, result.stderr
    (denied, denied_is_error), (allowed, allowed_is_error) = eco.tool_results(first + 1)
    assert denied_is_error and denied.startswith("ACME policy: reading .env is not allowed")
    assert not allowed_is_error and allowed == "meeting at noon\n"
    log = [json.loads(line) for line in (eco.cwd / ".pi" / "acme-access.log").read_text().splitlines()]
    assert sorted(entry["decision"] for entry in log) == ["allowed", "denied"]


def test_company_bash_refuses_denied_commands(eco: Eco) -> None:
    eco.server.add(Reply(tool_calls=[("bash", {"command": "sudo cat /etc/shadow"})]), Reply(text="ok"))
    first = len(eco.server.requests)
    assert eco.ask("become root").returncode == 0
    ((text, is_error),) = eco.tool_results(first + 1)
    assert is_error and text == "ACME policy: this command is not allowed (needs root). Find another way or ask the user."


def test_the_packs_own_test_suites_pass_against_the_installed_packages(eco: Eco, packs: dict[str, Path]) -> None:
    result = subprocess.run([str(eco.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--import-mode=importlib", str(packs["pi-web-tools"] / "tests"),
                             str(packs["pi-acme-tools"] / "tests")],
                            capture_output=True, text=True, cwd=eco.cwd,
                            env={**eco.env(), "PYTHONPATH": str(eco.project_site())},  # web tools: the project's
                            timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout


def test_update_reinstalls_what_is_installed_offline(eco: Eco) -> None:
    result = eco.pi("update", "pi-acme-tools")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Updated pi-acme-tools" in result.stdout
    refused = eco.pi("update", "self")
    assert refused.returncode == 1 and refused.stderr.startswith("Error: pi does not update itself")


def test_a_failing_install_leaves_the_environment_as_it_was(eco: Eco, tmp_path: Path) -> None:
    broken = tmp_path / "pi-broken"
    broken.mkdir()
    (broken / "setup.py").write_text("raise SystemExit('this package refuses to build')\n")
    before = eco.pip_list()
    result = eco.pi("install", str(broken))
    assert result.returncode == 1
    assert "this package refuses to build" in result.stdout + result.stderr  # pip's error, streamed
    assert result.stderr.rstrip().endswith(f"Error: pip install {broken} failed (exit code 1); nothing was installed")
    assert f"Installed {broken}" not in result.stdout
    assert eco.pip_list() == before


def test_remove_restores_the_builtin_tools(eco: Eco, packs: dict[str, Path]) -> None:
    result = eco.pi("remove", "pi-acme-tools")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith("Removed pi-acme-tools")
    assert "pi-acme-tools" not in eco.pip_list()
    eco.server.add(Reply(tool_calls=[("read", {"path": ".env"})]), Reply(text="ok"))
    first = len(eco.server.requests)
    assert eco.ask("again").returncode == 0
    read = next(t for t in eco.tool_definitions(first) if t["name"] == "read")
    assert "ACME" not in read["description"]
    ((text, is_error),) = eco.tool_results(first + 1)
    assert not is_error and text == "API_TOKEN=hunter2\n"  # the built-in read has no deny-list
    plugins = eco.pi("plugins", "--json")
    rows = {row["name"]: row for row in json.loads(plugins.stdout)}
    assert rows["read"]["layer"] == "builtin" and rows["bash"]["layer"] == "builtin"


def test_remove_by_path_and_local_drops_the_project_requirement(eco: Eco, packs: dict[str, Path]) -> None:
    result = eco.pi("uninstall", "-l", str(packs["pi-web-tools"]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pi-web-tools" not in eco.pip_list()
    assert not list(eco.project_site().glob("pi_web_tools*")), result.stdout + result.stderr
    settings = tomllib.loads((eco.cwd / ".pi" / "settings.toml").read_text())
    assert settings.get("packages", []) == []
    assert eco.pi("list").stdout == "No packages installed.\n"


def test_removing_something_unknown_fails(eco: Eco) -> None:
    result = eco.pi("remove", "pi-nothing-like-this")
    assert result.returncode == 1
    assert result.stderr == "Error: No matching package found for pi-nothing-like-this\n"
