"""commands: ``/commands`` lists plugin commands, prompt templates and skills by origin; picking one and
confirming shows its source path; a filter keeps one origin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pi_examples.commands as commands_module
import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi


def resources(home: Path) -> None:
    (home / "prompts").mkdir(parents=True)
    (home / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview it.\n")
    skill = home / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the code\n---\nTidy.\n")


def answering(client: Any, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        if event.get("type") == "extension_ui_request" and event["method"] in ("select", "confirm"):
            seen.append(event)
            client.respond_ui(event["id"], **answers.pop(0))

    client.on_event(on_event)
    return seen


OTHER = """
from pi_core import hookimpl
from pi_core import SlashCommand


@hookimpl
def pi_commands():
    return [SlashCommand("deploy", "Ship it", lambda args, ctx: None)]
"""


def test_lists_by_origin_and_shows_the_source_path(example, tmp_path: Path) -> None:
    resources(example.home)
    other = tmp_path / "deploy_plugin.py"
    other.write_text(OTHER)
    client = example.rpc("commands", "--no-session", "-e", str(other))
    seen = answering(client, [{"value": "/deploy - Ship it"}, {"confirmed": True}])
    client.prompt("/commands")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    select, confirm = seen
    assert select["title"] == "Available Commands"
    options = select["options"]
    assert options[0] == "--- Extensions ---"
    assert options.index("/commands - List available slash commands") < options.index("--- Prompts ---")
    assert options.index("--- Prompts ---") < options.index("/review - Review the diff")
    assert options.index("--- Skills ---") > options.index("--- Prompts ---")
    assert any(o.startswith("/skill:tidy") for o in options)
    assert options.index("/deploy - Ship it") < options.index("--- Prompts ---")
    assert confirm["title"] == "deploy"
    assert confirm["message"] == f"View source path?\n{other}"
    assert notice["message"] == str(other)


def test_filter_keeps_one_origin(example) -> None:
    skill = example.home / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the code\n---\nTidy.\n")
    client = example.rpc("commands", "--no-session")
    seen = answering(client, [{"cancelled": True}])
    client.prompt("/commands skill")
    client.wait_for_event(lambda e: e.get("method") == "select")
    assert [o.split(" - ")[0] for o in seen[0]["options"]] == ["--- Skills ---", "/skill:tidy"]
    client.prompt("/commands prompt")
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "No prompt commands found" and len(seen) == 1


def test_completions_offer_the_origins() -> None:
    assert [c.value for c in commands_module.complete("")] == ["extension", "prompt", "skill"]
    assert [c.value for c in commands_module.complete("p")] == ["prompt"]
    assert commands_module.complete("x") is None


def test_an_entry_point_plugins_commands_name_its_module_file(example) -> None:
    client = example.rpc("commands", "--no-session")
    info = next(c for c in client.get_commands() if c["name"] == "commands")
    assert info["sourceInfo"]["path"] == commands_module.__file__
    assert (info["source"], info["sourceInfo"]["scope"]) == ("extension", "user")


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_tui_picker_lists_and_the_confirm_shows_the_path(example) -> None:
    with tmux_pi(example, "commands") as tui:
        tui.start("commands", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/commands extension")
        screen = tui.tmux.wait_for("Available Commands")
        assert "--- Extensions ---" in screen and "/commands - List available slash commands" in screen
        lines = screen.splitlines()
        heading = next(i for i, line in enumerate(lines) if "--- Extensions ---" in line)
        target = next(i for i, line in enumerate(lines) if "/commands - List available slash commands" in line)
        for _ in range(target - heading):  # from the heading down to /commands itself
            tui.tmux.keys("Down")
        tui.tmux.keys("Enter")
        tui.tmux.wait_for("View source path?")
        tui.tmux.keys("Enter")  # Yes
        tui.tmux.wait_for(commands_module.__file__, flat=True)
        assert example.server.requests == []
