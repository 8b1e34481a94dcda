"""What ``pi plugins`` shows: each plugin's origin, contributions and overrides, plus load failures."""

from __future__ import annotations

import textwrap
from typing import Any

from pi_core.registry import Registry


def plugin_rows(registry: Registry, status: dict[str, str] | None = None) -> list[dict[str, Any]]:  # open: plugin rows, JSON for --json
    """One row per plugin; ``status`` adds a line of state to some (the sandbox's active mode)."""
    plugins = registry.plugins
    status = status or {}
    kinds = {"tool": registry.tools, "provider": registry.providers, "renderer": registry.renderers,
             "mode": registry.modes}
    beaten: dict[str, list[str]] = {}
    lost: dict[str, list[str]] = {}
    for override in registry.overrides:
        # A later replacement (a higher layer, or toolOverrides inside one) makes the final owner the winner.
        held = kinds.get(override.kind)
        winner = held.owner.get(override.name, override.winner) if held else override.winner
        if winner != override.loser:
            beaten.setdefault(winner, []).append(f"{override.kind} {override.name} (from {override.loser})")
            lost.setdefault(override.loser, []).append(f"{override.kind} {override.name} (by {winner})")

    def owned(kind: str, plugin: str) -> list[str]:
        return [n for n in kinds[kind].by_plugin.get(plugin, []) if kinds[kind].owner.get(n) == plugin]

    rows: list[dict[str, Any]] = []
    for name, info in plugins.info.items():
        rows.append({
            "name": name,
            "layer": info.layer,
            "source": info.source,
            "replaces": info.replaces,
            "tools": owned("tool", name),
            "providers": owned("provider", name),
            "renderers": owned("renderer", name),
            "modes": owned("mode", name),
            "overrides": beaten.get(name, []),
            "overridden": lost.get(name, []),
            "error": None,
            "status": status.get(name),
        })
    for failure in plugins.failures:
        rows.append({"name": failure.name, "layer": "failed", "source": failure.source, "replaces": None,
                     "tools": [], "providers": [], "renderers": [], "modes": [], "overrides": [], "overridden": [],
                     "error": failure.reason, "status": None})
    for name, source in sorted(plugins.available.items()):
        if name not in plugins.info:
            rows.append({"name": name, "layer": "available", "source": source, "replaces": None, "tools": [],
                         "providers": [], "renderers": [], "modes": [], "overrides": [], "overridden": [],
                         "error": None, "status": None})
    return rows


def render_plugin_rows(rows: list[dict[str, Any]], registry: Registry) -> str:  # open: plugin rows, JSON for --json
    lines: list[str] = []
    loaded = [r for r in rows if r["layer"] != "available"]
    width = max((len(r["name"]) for r in loaded), default=4)
    for row in loaded:
        parts = [f"{row['name']:<{width}}  {row['layer']:<9}  {row['source']}"]
        if row["replaces"]:
            parts.append(f"replaces the {row['replaces']} plugin {row['name']!r}")
        lines.append("  ".join(parts))
        for kind in ("tools", "providers", "renderers", "modes"):
            if row[kind]:
                lines.append(f"{'':<{width}}  {kind}: {', '.join(row[kind])}")
        for override in row["overrides"]:
            lines.append(f"{'':<{width}}  overrides {override}")
        for override in row["overridden"]:
            lines.append(f"{'':<{width}}  overridden: {override}")
        if row["error"]:
            lines.append(f"{'':<{width}}  FAILED: {row['error']}")
        if row["status"]:
            lines.append(f"{'':<{width}}  {row['status']}")
    if not lines:
        lines.append("No plugins loaded.")
    available: dict[str, list[str]] = {}
    for row in rows:
        if row["layer"] == "available":
            available.setdefault(row["source"], []).append(row["name"])
    for source, names in available.items():
        lines += ["", f"Available, off until enabled (-e plugin:NAME, or the enabledPlugins setting), from {source}:",
                  *textwrap.wrap(", ".join(names), 100, initial_indent="  ", subsequent_indent="  ")]
    return "\n".join(lines)
