"""The interactive command table: a plugin command named like one of Pi's built-ins is skipped with Pi's warning;
the built-ins pi alone has (/tools, /theme, /exit) give way to it (lead decision 2)."""

from __future__ import annotations

import types

from pi_plugins.interactive.builtin_commands import BUILTIN_COMMANDS
from pi_plugins.interactive.commands import collect_commands

from pi_core import SlashCommand


async def _handler(args: str, ctx: object) -> None:
    return None


def test_plugin_commands_meet_the_builtins_as_in_pi() -> None:
    commands = {name: SlashCommand(name, f"plugin {name}", _handler) for name in ("tools", "model", "deploy")}
    warnings: list[str] = []
    table = collect_commands(BUILTIN_COMMANDS, types.SimpleNamespace(commands=commands), None, warn=warnings.append)
    assert table["tools"].source == "plugin" and table["tools"].description == "plugin tools"
    assert table["model"].source == "builtin" and table["deploy"].source == "plugin"
    expected = "Extension command '/model' conflicts with built-in interactive command. Skipping in autocomplete."
    assert warnings == [expected]
