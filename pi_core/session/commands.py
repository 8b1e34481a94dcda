"""The plugins' slash commands (``pi_commands``): collected by name, listed for ``get_commands``, run."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from pi_core.hookspecs.results import CommandInfo, SlashCommand
from pi_core.registry import ExtensionError, PluginSet, keyed

_COMMAND_SOURCES = {"builtin": ("auto", "user"), "installed": ("auto", "user"), "project": ("auto", "project"),
                    "explicit": ("local", "temporary")}


class PluginCommands:
    """The plugins' slash commands (``pi_commands``), each with the plugin that gave it; ``collect`` on reload."""

    def __init__(self, plugins: PluginSet) -> None:
        self.plugins = plugins
        self.items: dict[str, SlashCommand] = {}
        self.owner: dict[str, str] = {}
        self.collect()

    def collect(self) -> None:
        found = keyed(self.plugins, self.plugins.call_sync("pi_commands"), "command", "name")
        self.items, self.owner = found.items, found.owner

    def infos(self) -> list[CommandInfo]:
        """The commands as ``get_commands`` lists them (``sourceInfo`` says which layer each came from)."""
        infos = []
        for name, command in self.items.items():
            plugin = self.owner.get(name, "")
            source, scope = _COMMAND_SOURCES[self.plugins.layer_of(plugin)]
            infos.append(CommandInfo(name, command.description, "extension", {
                "path": self.plugins.path_of(plugin), "source": source, "scope": scope, "origin": "top-level"}))
        return infos

    async def run(self, name: str, args: str, context_for: Callable[[str], object]) -> bool:
        """Run ``/name`` with ``context_for(plugin)`` (a CommandContext); False when no plugin has it. A raising
        handler is reported as an extension error (hook ``command:<name>``)."""
        command = self.items.get(name)
        if command is None:
            return False
        plugin = self.owner.get(name, "")
        try:
            outcome = command.handler(args, context_for(plugin))
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as err:  # noqa: BLE001 - a plugin command's failure is reported, not fatal
            self.plugins.report(ExtensionError(plugin, self.plugins.source_of(plugin), f"command:{name}", err))
        return True
