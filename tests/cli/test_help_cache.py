"""``pi --help`` lists plugins' flags from the cache the last load wrote, looking only for the kinds of plugin
that have flags there (installed, opt-in, file), and ``--help``/``--version`` import neither ``typing`` nor
``json`` (issue 19's ``--help`` row). Asserts output and module sets, never how long anything takes."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_core.app.help_text import HELP

PI = [sys.executable, "-X", "importtime", "-c", "from pi_core.app.cli import cli; cli()"]

FLAGGED = '''
from pi_core import hookimpl
from pi_core import Flag

@hookimpl
def pi_flags():
    return [Flag("acme-mode", "Run the acme way.", type="string")]
'''


class Pi:
    """The real ``pi`` with its own agent dir, cache dir and project; ``site`` goes on PYTHONPATH."""

    def __init__(self, root: Path, site: Path | None = None) -> None:
        self.root, self.cwd = root, root / "project"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "PI_CODING_AGENT_DIR": str(root / "agent"), "XDG_CACHE_HOME": str(root / "cache")}
        if site is not None:
            self.env["PYTHONPATH"] = str(site) + os.pathsep + self.env.get("PYTHONPATH", "")
        self.imported: set[str] = set()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*PI, *args], capture_output=True, text=True, cwd=self.cwd, env=self.env, timeout=60,
                              check=False)
        self.imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def help(self, *args: str) -> str:
        return self.run(*args, "--help").stdout


def make_dist(site: Path, dist: str, module: str, entry: str) -> None:
    """An installed distribution whose entry point ``entry`` (group ``pi``) registers a string flag."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(FLAGGED))
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pi]\n{entry} = {module}\n")


SECTION = "\nExtension CLI Flags:\n"


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_neither_typing_nor_json(tmp_path: Path, flag: str) -> None:
    pi = Pi(tmp_path)
    pi.run("tools")  # the cache now holds the built-in plugins, none of them with a flag
    pi.run("-e", "plugin:preset", "tools")  # and an opt-in plugin with one, not enabled by this command line
    out = pi.run(flag).stdout
    assert out == (HELP if flag == "--help" else "0.1.0\n")
    assert not pi.imported & {"typing", "json", "pi_core.discovery", "pi_core.app.trust"}, sorted(pi.imported)


def test_help_lists_an_installed_plugins_flag_until_it_is_disabled(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "acme-flags", "acme_flags", entry="acme")
    pi = Pi(tmp_path, site)
    assert pi.help() == HELP  # nothing recorded yet: --help imports no plugin to find out
    pi.run("tools")
    assert pi.help() == HELP + SECTION + "  --acme-mode <value>".ljust(30) + "Run the acme way.\n"
    assert "pi_core.discovery" in pi.imported and "acme_flags" not in pi.imported
    assert SECTION not in pi.help("--disable-plugin", "acme")
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"disabledPlugins": ["acme"]}))
    assert SECTION not in pi.help()


def test_help_lists_an_opt_in_plugins_flag_once_settings_enable_it(tmp_path: Path) -> None:
    pi = Pi(tmp_path)
    pi.run("-e", "plugin:preset", "tools")
    assert pi.help() == HELP
    assert "pi_core.discovery" not in pi.imported  # no plugin is enabled by name: nothing installed to look up
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"enabledPlugins": ["preset"]}))
    assert pi.help() == HELP + SECTION + "  --preset <value>".ljust(30) + "Preset configuration to use\n"


def test_help_lists_a_file_plugins_flag_from_the_agent_extensions_while_the_file_is_unchanged(tmp_path: Path) -> None:
    extensions = tmp_path / "agent" / "extensions"
    extensions.mkdir(parents=True)
    plugin = extensions / "acme.py"
    plugin.write_text(textwrap.dedent(FLAGGED))
    pi = Pi(tmp_path)
    pi.run("tools")
    assert "--acme-mode <value>" in pi.help()
    assert SECTION not in pi.help("-ne")
    plugin.write_text(textwrap.dedent(FLAGGED) + "\n# edited\n")
    os.utime(plugin, ns=(1, 1))  # another mtime: the recorded flags may be stale until a load records them again
    assert SECTION not in pi.help()
    pi.run("tools")
    assert "--acme-mode <value>" in pi.help()


@pytest.mark.parametrize("content", [b"", b"\x00garbage", json.dumps({"format": 1, "plugins": {}}).encode(),
                                     b"\xfb\x00\x00\x00\x00"])
def test_a_torn_or_foreign_cache_file_costs_help_only_its_section(tmp_path: Path, content: bytes) -> None:
    extensions = tmp_path / "agent" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "acme.py").write_text(textwrap.dedent(FLAGGED))
    pi = Pi(tmp_path)
    pi.run("tools")
    [cache] = (tmp_path / "cache" / "pi").glob("plugin-flags.*")
    cache.write_bytes(content)
    assert pi.help() == HELP
    pi.run("tools")  # the next load writes it again
    assert "--acme-mode <value>" in pi.help()


def test_a_cached_flag_of_the_wrong_shape_is_left_out(tmp_path: Path) -> None:
    plugin = tmp_path / "agent" / "extensions" / "acme.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(textwrap.dedent(FLAGGED))
    pi = Pi(tmp_path)
    pi.run("tools")
    [cache] = (tmp_path / "cache" / "pi").glob("plugin-flags.*")
    data = marshal.loads(cache.read_bytes())
    key = f"acme|{plugin}|{plugin.stat().st_mtime_ns}"
    assert data["plugins"][key][1][0]["name"] == "acme-mode"  # the entry --help would list
    data["plugins"][key] = (False, [{"name": "acme-mode", "description": "no type"}])
    cache.write_bytes(marshal.dumps(data))
    assert pi.help() == HELP


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_pi_itself_imports_no_pathlib_or_importlib_util_for_version(tmp_path: Path, flag: str) -> None:
    """What pi imports, apart from any install's own start-up: run without site (no editable finder, whose
    pathlib and importlib.util would hide pi's), from the source tree. A wheel install's --version needs
    neither (its launcher's own ``import re`` is pip's); --help reads the agent dir and the cache with pathlib."""
    repo = Path(__file__).resolve().parents[2]
    code = f"import sys; sys.path.insert(0, {str(repo)!r}); from pi_core.app.cli import cli; cli()"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", code, flag], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == (HELP if flag == "--help" else "0.1.0\n"), done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "pi_core.app.cli" in imported
    assert not imported & {"typing", "json", "importlib.util"}, sorted(imported)
    if flag == "--version":
        assert not imported & {"pathlib", "re", "contextlib"}, sorted(imported)
