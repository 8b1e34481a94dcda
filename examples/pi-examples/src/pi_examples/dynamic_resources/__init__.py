"""dynamic_resources: a skill, a prompt template and a theme contributed from the plugin's own folder."""

from __future__ import annotations

from pathlib import Path

from pi_core import ResourcePaths, hookimpl

HERE = Path(__file__).resolve().parent


@hookimpl
def pi_resources_discover() -> ResourcePaths:
    return ResourcePaths(skill_paths=[HERE / "SKILL.md"], prompt_paths=[HERE / "dynamic.md"],
                         theme_paths=[HERE / "dynamic.json"])
