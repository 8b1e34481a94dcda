"""``get_commands``: plugin slash commands, then prompt templates, then skills (docs/rpc.md#slash-commands)."""

from __future__ import annotations

from typing import Any

from pi_core.registry import call_each

# Plugins come from entry points (installed into pi's environment), a trusted project (its .pi/extensions
# and `pi install -l` packages) or -e files (the explicit layer, loaded for this run only).
_PLUGIN_SOURCES = {"builtin": "auto", "installed": "auto", "project": "auto", "explicit": "local"}
_PLUGIN_SCOPES = {"builtin": "user", "installed": "user", "project": "project", "explicit": "temporary"}


def slash_commands(session: Any) -> list[dict[str, Any]]:
    resources = getattr(session, "resources", None)
    commands = plugin_commands(session)
    for template in getattr(resources, "templates", None) or []:
        commands.append(_entry(template.name, template.description, "prompt", template.source_info.to_json()))
    for skill in getattr(resources, "skills", None) or []:
        commands.append(_entry(f"skill:{skill.name}", skill.description, "skill", skill.source_info.to_json()))
    return commands


def plugin_commands(session: Any) -> list[dict[str, Any]]:
    commands: dict[str, dict[str, Any]] = {}  # a later layer's command replaces an earlier one
    for plugin_name, values in call_each(session.plugins, "pi_commands"):
        info = session.plugins.info.get(plugin_name)
        layer = info.layer if info else "explicit"
        source_info = {"path": info.source if info else plugin_name, "source": _PLUGIN_SOURCES[layer],
                       "scope": _PLUGIN_SCOPES[layer], "origin": "top-level"}
        for command in values or []:
            commands[command.name] = _entry(command.name, command.description, "extension", source_info)
    return list(commands.values())


def _entry(name: str, description: str | None, source: str, source_info: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if description:
        entry["description"] = description
    entry["source"] = source
    entry["sourceInfo"] = source_info
    return entry
