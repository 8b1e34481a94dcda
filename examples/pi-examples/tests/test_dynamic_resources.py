"""dynamic_resources: the plugin's skill and prompt template become commands, and /dynamic expands its text."""

from __future__ import annotations

import json
from pathlib import Path

import pi_examples.dynamic_resources as plugin

from pi_core.resources.themes import load_theme_file
from pi_core.testing.fake_script import Reply

PACKAGE = Path(plugin.__file__).resolve().parent


def test_skill_and_template_are_contributed(example) -> None:
    example.server.add(Reply(text="ok"))
    client = example.rpc("dynamic_resources", "--no-session")
    commands = {c["name"]: c for c in client.get_commands()}
    assert commands["dynamic"]["source"] == "prompt"
    assert commands["dynamic"]["description"] == "Example prompt template loaded from resources_discover"
    assert Path(commands["dynamic"]["sourceInfo"]["path"]) == PACKAGE / "dynamic.md"
    assert commands["skill:dynamic-resources"]["source"] == "skill"
    assert Path(commands["skill:dynamic-resources"]["sourceInfo"]["path"]) == PACKAGE / "SKILL.md"
    client.prompt_and_wait("/dynamic")
    sent = json.dumps(example.server.requests[0].body["messages"][-1])
    assert "Summarize the current repository structure and mention any build or test commands." in sent
    prompt = example.system_prompt(0)
    assert "<name>dynamic-resources</name>" in prompt and str(PACKAGE / "SKILL.md") in prompt


def test_without_the_plugin_there_is_no_dynamic_command(example) -> None:
    client = example.rpc(None, "--no-session")
    names = {c["name"] for c in client.get_commands()}
    assert "dynamic" not in names and "skill:dynamic-resources" not in names


def test_the_theme_file_is_a_valid_pi_theme() -> None:
    theme = load_theme_file(PACKAGE / "dynamic.json")
    assert theme.name == "dynamic-resources" and theme.appearance == "dark"
