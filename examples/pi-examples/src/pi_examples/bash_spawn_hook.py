"""bash_spawn_hook: a ``bash`` that sources ``~/.profile`` and sets ``PI_SPAWN_HOOK=1`` before each command."""

from __future__ import annotations

from pi_builtin_tools.bash import BashOptions, SpawnContext, create_bash_tool

from pi_core import Tool, hookimpl


def spawn_hook(spawn: SpawnContext) -> SpawnContext:
    return SpawnContext(command=f"source ~/.profile\n{spawn.command}", cwd=spawn.cwd,
                        env={**spawn.env, "PI_SPAWN_HOOK": "1"})


TOOL = create_bash_tool(BashOptions(spawn_hook=spawn_hook))


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
