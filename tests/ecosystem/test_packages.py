"""pi_core.app.packages without installing anything: requirement names, rollback, settings, messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pi_core.app import package_commands, packages
from pi_core.app.packages import PackageError, dist_name_of
from pi_core.loader.plugins import project_site

SITE = project_site(Path("/")).relative_to(Path("/.pi/packages"))


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    monkeypatch.delenv("PI_OFFLINE", raising=False)
    return home


class FakePip:
    """Stands in for pip: records calls, and makes the environment look changed as told."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], code: int = 0,
                 adds: dict[str, str] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.env, self.code, self.adds = env, code, adds or {}
        monkeypatch.setattr(packages, "run_pip", self.run)
        self.sites: list[Path | None] = []
        monkeypatch.setattr(packages, "snapshot", lambda site=None: dict(self.env))
        monkeypatch.setattr(packages, "contributions", lambda names=None, project=None: {})
        # Installed "pi-*" names provide pi plugins; anything else (idna, rich...) is some other distribution.
        monkeypatch.setattr(packages, "pi_distributions", lambda site=None: {
            name: {"name": name, "version": version, "entry_points": {}} for name, version in self.env.items()
            if name.startswith("pi-") and name != "pi-harness"})

    def run(self, args: list[str], echo: object = None, site: Path | None = None) -> int:
        self.calls.append(list(args))
        self.sites.append(site)
        if args[0] == "install":
            self.env.update(self.adds)
            return self.code
        for name in args[2:]:
            self.env.pop(name, None)
        return 0


def lines() -> tuple[list[tuple[str, bool]], packages.Echo]:
    seen: list[tuple[str, bool]] = []
    return seen, lambda line, err: seen.append((click.unstyle(line), err))


@pytest.mark.parametrize(("spec", "name"), [
    ("pi-web-tools", "pi-web-tools"),
    ("Pi_Web.Tools==1.2", "pi-web-tools"),
    ("pi-web-tools[extra] >= 1", "pi-web-tools"),
    ("acme @ git+https://example.invalid/acme.git", "acme"),
    ("git+https://example.invalid/x.git#egg=Foo_Bar", "foo-bar"),
    ("git+https://example.invalid/x.git", None),
    ("./no-such-dir", None),
    ("dist/Pi_Web_Tools-0.1.0-py3-none-any.whl", "pi-web-tools"),
])
def test_distribution_names_of_requirements(spec: str, name: str | None, tmp_path: Path) -> None:
    assert dist_name_of(spec, tmp_path) == name


def test_a_local_path_is_named_by_its_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "pyproject.toml").write_text('[project]\nname = "My_Pack"\nversion = "1"\n')
    assert dist_name_of("./pack", tmp_path) == "my-pack"
    assert dist_name_of(str(tmp_path / "pack"), Path("/")) == "my-pack"


def test_a_failed_install_uninstalls_what_appeared(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {"pi-harness": "0.1.0", "idna": "3.0"}, code=1,
                  adds={"half-done-dep": "1.0", "idna": "3.1"})
    seen, echo = lines()
    with pytest.raises(PackageError, match=r"^pip install pi-x failed \(exit code 1\); some changes could not be "):
        packages.install("pi-x", cwd=tmp_path, echo=echo)
    assert pip.calls == [["install", "pi-x"], ["uninstall", "-y", "half-done-dep"]]
    assert pip.env == {"pi-harness": "0.1.0", "idna": "3.1"}
    assert ("Warning: idna changed from 3.0 to 3.1; pip cannot undo this", True) in seen
    assert not (tmp_path / ".pi").exists()


def test_install_passes_pip_options_and_editable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {}, adds={"pi-x": "1.0"})
    seen, echo = lines()
    packages.install("./x", editable=True, pip_args=["--no-deps"], cwd=tmp_path, echo=echo)
    assert pip.calls == [["install", "--no-deps", "-e", "./x"]]
    assert seen[0] == ("Installing ./x...", False) and ("Installed ./x", False) in seen


def test_local_install_records_each_requirement_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                     agent_dir: Path) -> None:
    pip = FakePip(monkeypatch, {}, adds={"pi-x": "1.0"})
    seen, echo = lines()
    packages.install("pi-x==1.0", local=True, cwd=tmp_path, echo=echo)
    packages.install("pi_x", local=True, cwd=tmp_path, echo=echo)  # the same distribution
    packages.install("pi-y", local=True, cwd=tmp_path, echo=echo)
    stored = tomllib.loads((tmp_path / ".pi" / "settings.toml").read_text())
    assert stored["packages"] == ["pi-x==1.0", "pi-y"]
    prefix = tmp_path / ".pi" / "packages"
    assert pip.calls[0] == ["install", "--prefix", str(prefix), "pi-x==1.0"]
    assert pip.sites == [prefix / SITE] * 3  # pip sees what the project has, to upgrade it in place
    assert (prefix / ".gitignore").read_text().endswith("\n*\n")
    # the folder had nothing needing trust before: the user's own first install trusts it
    assert json.loads((agent_dir / "trust.json").read_text()) == {os.path.realpath(tmp_path): True}
    assert sum(line.startswith("Trusted ") for line, _ in seen) == 1


def test_local_install_in_an_untrusted_project_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          agent_dir: Path) -> None:
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.json").write_text('{"packages": ["evil-pack"]}')
    pip = FakePip(monkeypatch, {}, adds={"pi-x": "1.0"})
    _, echo = lines()
    with pytest.raises(PackageError, match=r"not trusted; refusing to change its packages. Run the command with "
                                           r"--approve \(-a\)"):
        packages.install("pi-x", local=True, cwd=tmp_path, echo=echo)
    assert pip.calls == [] and not (tmp_path / ".pi" / "packages").exists()
    packages.install("pi-x", local=True, cwd=tmp_path, echo=echo, approve=True)
    assert pip.calls[0][:2] == ["install", "--prefix"]
    assert not (agent_dir / "trust.json").exists()  # -a decides for this command only


def test_remove_local_drops_the_requirement_and_keeps_other_settings(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.toml").write_text('theme = "light"\npackages = ["pi-x==1.0", "pi-y"]\n')
    pip = FakePip(monkeypatch, {"pi-x": "1.0"})
    seen, echo = lines()
    with pytest.raises(PackageError, match="^The project is not trusted; refusing to change its packages"):
        packages.remove("pi-x", local=True, cwd=tmp_path, echo=echo)
    removed: list[tuple[Path, list[str]]] = []
    monkeypatch.setattr(packages, "remove_from_site", lambda site, names, echo: removed.append((site, list(names))))
    packages.remove("pi-x", local=True, cwd=tmp_path, echo=echo, approve=True)
    assert pip.calls == []  # pip refuses to uninstall outside its environment: pi removes by RECORD
    assert removed == [(tmp_path / ".pi" / "packages" / SITE, ["pi-x"])]
    assert tomllib.loads((tmp_path / ".pi" / "settings.toml").read_text()) == {"theme": "light", "packages": ["pi-y"]}
    assert seen[-1] == ("Removed pi-x", False)


def test_remove_of_a_recorded_but_missing_package_only_touches_settings(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.toml").write_text('packages = ["pi-y"]\n')
    pip = FakePip(monkeypatch, {})
    _, echo = lines()
    packages.remove("pi-y", local=True, cwd=tmp_path, echo=echo, approve=True)
    assert pip.calls == []
    assert tomllib.loads((tmp_path / ".pi" / "settings.toml").read_text()) == {"packages": []}


def test_remove_refuses_unknown_packages_and_pi_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {"pi-harness": "0.1.0"})
    with pytest.raises(PackageError, match="^No matching package found for pi-nope$"):
        packages.remove("pi-nope", cwd=tmp_path)
    with pytest.raises(PackageError, match="is pi itself"):
        packages.remove("pi-harness", cwd=tmp_path)
    assert pip.calls == []


def test_remove_refuses_pis_own_dependencies_and_other_non_pi_packages(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {"pi-harness": "0.1.0", "rich": "15.0.0", "left-pad": "1.0"})
    with pytest.raises(PackageError, match=r"^rich is a dependency of pi, not a pi package; pi remove only removes "
                                           r"packages that provide pi plugins \(entry points in group 'pi' or 'pi.optional'\), never "
                                           r"pi's own dependencies$"):
        packages.remove("rich", cwd=tmp_path)
    with pytest.raises(PackageError, match=r"^left-pad provides no pi plugins; .* Use pip to remove other packages$"):
        packages.remove("left-pad", cwd=tmp_path)
    assert pip.calls == []


def test_pi_remove_rich_is_refused_before_pip_runs(tmp_path: Path, agent_dir: Path) -> None:
    """Through the CLI, with a stand-in ``pip`` first on the path: were pi to call pip, the log would show it
    (and no real package is ever uninstalled by this test)."""
    fake = tmp_path / "fakepip" / "pip"
    fake.mkdir(parents=True)
    log = tmp_path / "pip.log"
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(f"import sys\nopen({str(log)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n")
    env = {**os.environ, "PYTHONPATH": str(fake.parent), "PI_CODING_AGENT_DIR": str(agent_dir)}
    result = subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", "remove", "rich"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: rich is a dependency of pi, not a pi package; "), result.stderr
    assert "Traceback" not in result.stderr and not log.exists()


def test_update_targets_and_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {})
    seen, echo = lines()
    assert packages.update(cwd=tmp_path, echo=echo) == []
    assert seen == [("No packages installed.", False)]
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi" / "settings.toml").write_text('packages = ["pi-y>=2"]\n')
    monkeypatch.setattr(packages, "pi_distributions",
                        lambda site=None: {"pi-x": {"name": "pi-x"}, "pi-y": {"name": "pi-y"}})
    assert packages.update(cwd=tmp_path, echo=echo) == ["pi-x", "pi-y"]  # untrusted: the project's are not read
    assert packages.update(cwd=tmp_path, echo=echo, approve=True) == ["pi-y>=2", "pi-x"]
    assert pip.calls[-2:] == [["install", "--upgrade", "--prefix", str(tmp_path / ".pi" / "packages"), "pi-y>=2"],
                              ["install", "--upgrade", "pi-x"]]
    assert seen[-1] == ("Updated packages", False)
    monkeypatch.setenv("PI_OFFLINE", "1")
    assert packages.update(cwd=tmp_path, echo=echo) == []
    assert len(pip.calls) == 3


def test_list_with_nothing_installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    FakePip(monkeypatch, {})
    monkeypatch.chdir(tmp_path)
    group = click.Group("pi")
    package_commands.register_package_commands(group)
    result = CliRunner().invoke(group, ["list"])
    assert result.exit_code == 0 and result.output == "No packages installed.\n"
    assert sorted(group.commands) == ["install", "list", "remove", "uninstall", "update"]


def test_run_pip_streams_stdout_and_stderr_separately() -> None:
    seen, echo = lines()
    assert packages.run_pip(["--version"], echo) == 0
    assert seen[0][0].startswith("pip ") and seen[0][1] is False
    seen.clear()
    assert packages.run_pip(["install", "--no-such-option"], echo) != 0
    assert any("no such option: --no-such-option" in line for line, err in seen if err)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PI_CODING_AGENT_DIR": str(cwd / "agent")}, check=False)


def test_missing_source_is_an_error_with_usage(tmp_path: Path) -> None:
    for command in ("install", "remove", "uninstall"):
        result = run_cli(command, cwd=tmp_path)
        assert result.returncode == 1
        assert result.stderr == f"Usage: pi {command} [OPTIONS] [SOURCE]\nError: Missing {command} source.\n"


def test_list_survives_a_plugin_conflict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pi_core.errors import PluginConflict

    def conflict(names: object = None, project: object = None) -> dict:
        raise PluginConflict("plugin name 'read' is registered by several packages: a 1, b 1")

    monkeypatch.setattr(packages, "contributions", conflict)
    monkeypatch.setattr(packages, "pi_distributions", lambda site=None: {"a": {"name": "a", "version": "1",
                                                                    "entry_points": {"read": "a.read"}}})
    data = packages.list_packages(tmp_path)
    assert data["installed"]["a"]["plugins"][0]["error"] == "not loaded: see the warning above"


def test_importing_the_cli_does_not_import_pip(tmp_path: Path) -> None:
    code = "import sys, pi_core.app.cli; print(sorted(m for m in sys.modules if m == 'pip' or m.startswith('pip.')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_describe_names_overrides_commands_and_failures() -> None:
    report = {"pi-x": {"name": "pi-x", "version": "1.0", "plugins": [
        {"plugin": "x", "tools": ["read", "x_tool"], "providers": ["x-api"], "renderers": [], "commands": ["x-cmd"],
         "replaces_builtin_plugin": False, "overrides": ["tool read (from read)"], "error": None},
        {"plugin": "bash", "tools": [], "providers": [], "renderers": [], "commands": [],
         "replaces_builtin_plugin": True, "overrides": [], "error": "ImportError: no module"},
    ]}}
    assert packages.describe(report) == [
        "  pi-x 1.0",
        "    plugin x",
        "      tools: read, x_tool",
        "      providers: x-api",
        "      commands: x-cmd",
        "      overrides tool read (from read)",
        "    plugin bash (replaces the built-in plugin 'bash')",
        "      FAILED: ImportError: no module",
    ]


def test_an_interrupted_install_is_rolled_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = FakePip(monkeypatch, {"pi-harness": "0.1.0"}, adds={"half-done": "1.0"})

    def interrupted(args: list[str], echo: object = None, site: Path | None = None) -> int:
        if args[0] == "install":
            pip.run(args)
            raise KeyboardInterrupt
        return pip.run(args)

    monkeypatch.setattr(packages, "run_pip", interrupted)
    _, echo = lines()
    with pytest.raises(PackageError, match="^pip install pi-x was interrupted; nothing was installed$"):
        packages.install("pi-x", cwd=tmp_path, echo=echo)
    assert pip.calls[-1] == ["uninstall", "-y", "half-done"]
    assert pip.env == {"pi-harness": "0.1.0"}
