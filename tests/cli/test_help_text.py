"""``pi --help`` to Pi 1.6.0's standard (issue 37.3): a Commands section naming every command pi has, built-in
or shipped as a plugin, and each of Pi 1.6.0's; examples that pi's own parser accepts; the environment
variables, every provider key among them. docs/cli.md's grammar names the same commands."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from pi_core.app.args import parse_args, split_command
from pi_core.models.env_keys import BEARER_ENV, ENV_VARS, REQUIRED_ENV

ROOT = Path(__file__).resolve().parents[2]
PI16_COMMANDS = ("install", "remove", "uninstall", "update", "list", "config", "auth", "mcp")


def _pi(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(home / "agent"), "XDG_CACHE_HOME": str(home / "cache")}
    return subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args], cwd=home,
                          env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)


@pytest.fixture(scope="module")
def help_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    done = _pi("--help", home=tmp_path_factory.mktemp("help"))
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout


def _section(text: str, title: str) -> list[str]:
    """The lines under ``Title:`` up to the next line at column 0 (blank lines inside are kept)."""
    lines: list[str] = []
    for line in text.split(f"\n{title}:\n", 1)[1].splitlines():
        if line and not line.startswith(" "):
            break
        lines.append(line)
    assert any(lines), f"empty {title} section"
    return lines


def _shipped_commands() -> set[str]:
    """The names of the commands pi's own plugins register (group ``pi``, modules of this repository)."""
    import click

    from pi_core.app.subcommands import commands

    names = set(commands.commands) | {"auth"}
    for ep in entry_points(group="pi"):
        if not ep.value.startswith(("pi_plugins.", "plugins.")):
            continue
        hook = getattr(ep.load(), "pi_cli_commands", None)
        if hook is not None:
            names |= {c.name for c in hook() if isinstance(c, click.Command) and c.name}
    return names


def test_every_command_is_listed_and_has_its_own_help(help_text: str, tmp_path: Path) -> None:
    listed = {m.group(1) for line in _section(help_text, "Commands")
              if (m := re.match(r"  pi ([a-z][a-z-]*)\b", line))}
    listed |= set(re.findall(r"alias: pi ([a-z-]+)", help_text))
    expected = _shipped_commands() | set(PI16_COMMANDS)
    assert {"batch", "mcp", "acp", "auth", "plugins", "tools"} <= expected  # the shipped plugins were found
    assert expected <= listed, sorted(expected - listed)
    for name in sorted(expected):
        done = _pi(name, "--help", home=tmp_path)
        assert done.returncode == 0, (name, done.stdout, done.stderr)
        assert "Usage:" in done.stdout and "Traceback" not in done.stderr, (name, done.stdout, done.stderr)


def test_examples_are_many_and_each_parses(help_text: str) -> None:
    commands = [line.strip() for line in _section(help_text, "Examples") if line.strip().startswith("pi")]
    assert len(commands) >= 25, commands
    known = _shipped_commands() | set(PI16_COMMANDS)
    for example in commands:
        argv = shlex.split(example)[1:]
        command = split_command(argv)
        if command is not None and command.name in known:
            args = command.options
        else:
            args = parse_args(argv)
        assert not args.errors and not args.warnings and not args.unknown_flags, (example, args)


def test_environment_names_pi_settings_and_every_provider_variable(help_text: str) -> None:
    environment = "\n".join(_section(help_text, "Environment"))
    wanted = {name for names in ENV_VARS.values() for name in names} | set(BEARER_ENV.values())
    wanted |= {name for names in REQUIRED_ENV.values() for name in names}
    wanted |= {"PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "PI_OFFLINE", "PI_CACHE_RETENTION",
               "AWS_PROFILE", "AWS_REGION", "GOOGLE_CLOUD_PROJECT", "AZURE_OPENAI_BASE_URL"}
    missing = sorted(name for name in wanted if not re.search(rf"\b{name}\b", environment))
    assert not missing, missing


def test_docs_grammar_names_every_command() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text()
    grammar = doc.split("```", 2)[1]
    missing = sorted(name for name in _shipped_commands() | set(PI16_COMMANDS) if not re.search(rf"\b{name}\b", grammar))
    assert not missing, missing
