"""Plugin discovery and override-by-name, through real distributions found via importlib.metadata.

Each test builds throwaway distributions (a ``*.dist-info`` with an ``entry_points.txt`` next to the
module) in a temp dir and runs the real ``pi`` command with that dir on PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_core.loader.plugins import load_plugins, register_module
from pi_core.registry import build_registry

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]

READ_OVERRIDE = '''
from pi_core import Tool, hookimpl

def execute(args, ctx):
    return "acme read of " + args["path"]

TOOL = Tool(name="read", description="Acme's audited read.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            execute=execute)

@hookimpl
def pi_tools():
    return [TOOL]
'''


def make_dist(root: Path, dist: str, module: str, source: str, entry_name: str, version: str = "1.0",
              attr: str = "") -> None:
    """A minimal installed distribution: importlib.metadata finds it on sys.path. ``attr`` names an object
    of the module as the entry point (``module:attr``, e.g. a class plugin)."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[pi]\n{entry_name} = {module}{':' + attr if attr else ''}\n")


def run_pi(args: list[str], tmp_path: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    if extra_path is not None:
        env["PYTHONPATH"] = str(extra_path) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(PI + args, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60, check=False)


def plugin_rows(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_builtin_plugins_each_have_an_entry_point() -> None:
    repo = Path(__file__).resolve().parents[2]
    builtin_modules = sorted(p.stem for p in (repo / "builtin_tools").glob("*.py")
                             if not p.stem.startswith("_"))
    from importlib.metadata import entry_points

    names = {ep.value for ep in entry_points(group="pi")}
    for module in builtin_modules:
        assert f"pi_builtin_tools.{module}" in names, module


def test_third_party_tool_overrides_builtin_and_is_reported(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-tools", "acme_tools", READ_OVERRIDE, entry_name="acme")
    rows = plugin_rows(run_pi(["plugins", "--json"], tmp_path, site))
    assert rows["acme"]["layer"] == "installed"
    assert rows["acme"]["tools"] == ["read"]
    assert any(o.startswith("tool read") for o in rows["acme"]["overrides"])
    text = run_pi(["plugins"], tmp_path, site).stdout
    assert "overrides tool read (from read)" in text


def test_two_installed_plugins_with_one_tool_warn_and_tool_overrides_picks_the_owner(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-a", "acme_a", READ_OVERRIDE.replace("Acme's", "A's"), entry_name="corp-a")
    make_dist(site, "acme-b", "acme_b", READ_OVERRIDE.replace("Acme's", "B's"), entry_name="corp-b")

    def owners() -> tuple[str, dict[str, dict], str, str]:
        result = run_pi(["plugins", "--json"], tmp_path, site)
        tools = {row["name"]: row for row in json.loads(run_pi(["tools", "--json"], tmp_path, site).stdout)}
        return result.stderr, plugin_rows(result), tools["read"]["description"], run_pi(["list"], tmp_path, site).stdout

    warning, rows, description, listed = owners()
    assert ('Warning: Tool "read" is provided by plugins "corp-a" and "corp-b" of one layer; using "corp-a" '
            '(choose with toolOverrides = { read = "corp-b" } in settings)') in warning
    assert description == "A's audited read."  # the documented rule: the first entry point by name wins
    assert rows["corp-a"]["tools"] == ["read"] and rows["corp-b"]["tools"] == []
    assert "tool read (from corp-b)" in rows["corp-a"]["overrides"]
    assert rows["corp-b"]["overridden"] == ["tool read (by corp-a)"]
    assert "plugin corp-b\n      overridden: tool read (by corp-a)" in listed

    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.toml").write_text('toolOverrides = { read = "corp-b" }\n')
    warning, rows, description, listed = owners()
    assert "corp-a" not in warning and description == "B's audited read."  # chosen: nothing to warn about
    assert rows["corp-b"]["tools"] == ["read"] and rows["corp-a"]["tools"] == []
    assert rows["corp-a"]["overridden"] == ["tool read (by corp-b)"]
    assert rows["read"]["overridden"] == ["tool read (by corp-b)"]
    assert "plugin corp-a\n      overridden: tool read (by corp-b)" in listed
    assert "plugin corp-b\n      tools: read" in listed


def test_installed_plugin_with_builtin_name_replaces_whole_plugin(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-read", "acme_read", READ_OVERRIDE, entry_name="read")
    rows = plugin_rows(run_pi(["plugins", "--json"], tmp_path, site))
    assert rows["read"]["layer"] == "installed"
    assert rows["read"]["replaces"] == "builtin"
    assert rows["read"]["source"].startswith("acme-read")


def test_two_installed_plugins_with_one_name_conflict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-a", "acme_a", READ_OVERRIDE, entry_name="shared")
    make_dist(site, "acme-b", "acme_b", READ_OVERRIDE, entry_name="shared")
    result = run_pi(["plugins"], tmp_path, site)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "acme-a" in result.stderr and "acme-b" in result.stderr and "'shared'" in result.stderr


def test_explicit_file_beats_installed_and_builtin(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    make_dist(site, "acme-tools", "acme_tools", READ_OVERRIDE, entry_name="acme")
    (tmp_path / "mine.py").write_text(READ_OVERRIDE.replace("acme read", "my read"))
    plugins = load_plugins(extensions=[tmp_path / "mine.py"], discover_extensions=False)
    registry = build_registry(plugins)
    assert registry.tools.owner["read"] == "mine"
    # and through the CLI, with the project's .pi/extensions too
    ext = tmp_path / ".pi" / "extensions"
    ext.mkdir(parents=True)
    (ext / "project_read.py").write_text(READ_OVERRIDE)
    rows = plugin_rows(run_pi(["-a", "plugins", "--json"], tmp_path, site))
    assert rows["project_read"]["layer"] == "project"
    assert rows["project_read"]["tools"] == ["read"]


def test_disabled_plugin_contributes_nothing(tmp_path: Path) -> None:
    plugins = load_plugins(disabled={"bash"}, discover_extensions=False)
    registry = build_registry(plugins)
    assert "bash" not in registry.tools.items
    rows = plugin_rows(run_pi(["plugins", "--json"], tmp_path))
    assert "bash" in rows


def test_plugin_failing_at_import_is_reported_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('kaboom')\n")
    plugins = load_plugins(extensions=[tmp_path / "broken.py"], discover_extensions=False)
    assert [f.name for f in plugins.failures if f.name == "broken"] == ["broken"]
    assert "kaboom" in next(f.reason for f in plugins.failures if f.name == "broken")
    rows = plugin_rows(run_pi(["plugins", "--json"], tmp_path))
    assert "broken" not in rows  # not in the project's .pi: only -e loads it


def test_hook_that_raises_is_recorded_against_its_plugin(pi_pm) -> None:
    class Bad:
        from pi_core import hookimpl

        @staticmethod
        @hookimpl
        def pi_tools():
            raise ValueError("no tools today")

    register_module(pi_pm, Bad, "bad")
    registry = build_registry(pi_pm)
    assert registry.tools.items == {}
    assert "no tools today" in pi_pm.failures[0].reason and pi_pm.failures[0].name == "bad"


def test_help_imports_no_heavy_module() -> None:
    code = ("import sys; from pi_core.app.cli import main; main(['--help']); "
            "heavy = [m for m in ('anthropic', 'openai', 'rich', 'prompt_toolkit', 'pydantic', 'jsonschema', 'asyncio') "
            "if m in sys.modules]; print('HEAVY', heavy)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert "HEAVY []" in result.stdout, result.stdout


def test_help_lists_a_plugins_flags_from_the_cache_without_importing_it(tmp_path: Path) -> None:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    loaded = subprocess.run(PI + ["-e", "plugin:preset", "tools"], capture_output=True, text=True, cwd=tmp_path,
                            env=env, timeout=60, check=False)  # any load records the plugin's flags
    assert loaded.returncode == 0, loaded.stderr
    code = ("import sys; from pi_core.app.cli import main; main(['-e', 'plugin:preset', '--help']); "
            "prefixes = ('pi_plugins', 'pi_builtin_tools', 'pi_examples', 'anthropic', 'openai', 'rich', "
            "'prompt_toolkit', 'mcp'); print('LOADED', sorted(m for m in sys.modules if m.startswith(prefixes)))")
    helped = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=60, check=False)
    assert "LOADED []" in helped.stdout, helped.stdout + helped.stderr
    assert "Extension CLI Flags:" in helped.stdout and "--preset <value>" in helped.stdout


def test_help_lists_a_project_plugins_flags_only_while_the_project_is_trusted(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".pi" / "extensions").mkdir(parents=True)
    (project / ".pi" / "extensions" / "planner.py").write_text(textwrap.dedent('''
        from pi_core import hookimpl
        from pi_core import Flag

        @hookimpl
        def pi_flags():
            return [Flag("plan", "Plan before acting.")]
    '''))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def pi(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(PI + list(args), capture_output=True, text=True, cwd=project, env=env, timeout=60,
                              check=False)

    loaded = pi("-a", "tools")  # a trusted load records the project plugin's flag
    assert loaded.returncode == 0, loaded.stderr
    assert "--plan" in pi("-a", "--help").stdout
    assert "--plan" not in pi("--help").stdout  # untrusted (no saved decision): pi would not load it
    assert "--plan" not in pi("-na", "--help").stdout
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "trust.json").write_text(json.dumps({str(project.resolve()): True}))
    assert "--plan" in pi("--help").stdout


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version(flag: str, tmp_path: Path) -> None:
    result = run_pi([flag], tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "0.1.0"


def test_plugin_cli_command_runs_as_pi_subcommand(tmp_path: Path) -> None:
    (tmp_path / ".pi" / "extensions").mkdir(parents=True)
    (tmp_path / ".pi" / "extensions" / "hello_cmd.py").write_text(textwrap.dedent('''
        import click
        from pi_core import hookimpl

        @click.command("hello")
        @click.argument("name")
        def hello(name):
            click.echo(f"hello {name} from a plugin")

        @hookimpl
        def pi_cli_commands():
            return [hello]
    '''))
    result = run_pi(["-a", "hello", "world"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello world from a plugin\n"
