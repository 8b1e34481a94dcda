"""preset: --preset / /preset NAME set the model, tools and instructions; the selector lists the presets."""

from __future__ import annotations

import asyncio
import json

import pytest
from pi_examples import preset as example_preset

from pi_core.testing.fake_script import Reply
from pi_core.testing.tmux import tmux_available, tmux_pi
from pi_core.tui import strip_ansi
from pi_core.ui import PlainTheme

PLAN = {"provider": "fake", "model": "fake-model-2", "thinkingLevel": "low", "tools": ["read", "grep", "nope"],
        "instructions": "PLAN-X"}


def setup(example) -> None:
    path = example.home / "models.json"
    models = json.loads(path.read_text())
    second = dict(models["providers"]["fake"]["models"][0], id="fake-model-2", name="Fake Model 2")
    models["providers"]["fake"]["models"].append(second)
    path.write_text(json.dumps(models))
    (example.home / "presets.json").write_text(json.dumps({"plan": PLAN, "other": {"instructions": "global"}}))
    (example.cwd / ".pi").mkdir()
    (example.cwd / ".pi" / "presets.json").write_text(json.dumps({"other": {"instructions": "PROJECT-WINS"}}))


def test_the_preset_flag_sets_model_tools_and_instructions(example) -> None:
    setup(example)
    example.server.add(Reply(text="planned"))
    done = example.run("preset", "--no-session", "-p", "--preset", "plan", "make a plan")
    assert done.returncode == 0, done.stderr
    body = example.server.requests[0].body
    assert body["model"] == "fake-model-2"
    assert sorted(t["name"] for t in body["tools"]) == ["grep", "read"]
    assert example.system_prompt(0).endswith("\n\nPLAN-X")


def test_preset_command_over_rpc(example) -> None:
    setup(example)
    client = example.rpc("preset", "--no-session")
    client.request("prompt", message="/preset other")
    client.wait_for_event(lambda e: e.get("message") == 'Preset "other" activated')
    client.request("prompt", message="/preset plan")
    client.wait_for_event(lambda e: e.get("message") == 'Preset "plan" activated')
    warnings = [e["message"] for e in example.ui_requests(client, "notify")]
    assert 'Preset "plan": Unknown tools: nope' in warnings
    assert client.get_state()["model"]["id"] == "fake-model-2"
    status = example.ui_requests(client, "setStatus")[-1]
    assert status["statusKey"] == "preset" and "preset:plan" in status["statusText"]
    example.server.add(Reply(text="ok"))
    client.prompt_and_wait("go")
    assert example.system_prompt(0).endswith("PLAN-X")
    client.request("prompt", message="/preset missing")
    notice = client.wait_for_event(lambda e: str(e.get("message", "")).startswith('Unknown preset "missing"'))
    assert notice["message"] == 'Unknown preset "missing". Available: plan, other'


def test_the_project_file_wins_and_an_unknown_flag_warns(example) -> None:
    setup(example)
    example.server.add(Reply(text="ok"))
    client = example.rpc("preset", "--no-session", "--preset", "other")
    client.prompt_and_wait("hi")
    assert example.system_prompt(0).endswith("PROJECT-WINS")
    bad = example.rpc("preset", "--no-session", "--preset", "zzz")
    notice = bad.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == 'Unknown preset "zzz". Available: plan, other' and notice["notifyType"] == "warning"


def test_the_selector_lists_presets_and_none() -> None:
    state = example_preset.PresetState(presets={"plan": PLAN}, active="plan")
    chosen: list[object] = []
    selector = example_preset.PresetSelector(state, PlainTheme(), None, chosen.append)
    lines = [strip_ansi(line).rstrip() for line in selector.render(100)]
    assert lines[0] == "─" * 100 and " Select Preset" in lines
    row = next(line for line in lines if line.startswith("→ plan (active)"))
    assert 'fake/fake-model-2 | thinking:low | tools:read,grep,nope | "PLAN-X"' in row
    assert any(line.startswith("  (none)") and "Clear active preset, restore defaults" in line for line in lines)
    selector.handle_input("\x1b[B")
    selector.handle_input("\r")
    assert chosen == ["(none)"]


@pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")
def test_the_selector_and_the_shortcut_on_screen(example) -> None:
    setup(example)
    example.server.add(Reply(text="ok"))
    with tmux_pi(example, "preset") as tui:
        tui.start("preset", "--no-session")
        tui.tmux.wait_for("(fake) fake-model")
        tui.command("/preset")
        screen = tui.tmux.wait_for("Select Preset", visible=True)
        rows = [" ".join(line.split()) for line in screen.splitlines()]
        assert any(r.startswith("→ plan fake/fake-model-2 | thinking:low") for r in rows)
        assert any(r.startswith("(none) Clear active preset") for r in rows)
        tui.tmux.keys("Enter")
        tui.tmux.wait_for('Preset "plan" activated')
        screen = tui.tmux.wait_for("preset:plan")  # the footer status
        assert "(fake) fake-model-2" in screen
        tui.tmux.raw("\x1b[117;6u")  # Ctrl+Shift+U cycles: after the last one comes (none)
        tui.tmux.wait_for("Preset cleared, defaults restored")
        tui.tmux.raw("\x1b[117;6u")
        tui.tmux.wait_for('Preset "other" activated')
        tui.command("hi")
        tui.tmux.wait_for("ok")
    assert example.system_prompt(0).endswith("PROJECT-WINS")


def test_two_sessions_in_one_process_keep_their_own_preset(example, sdk_sessions) -> None:
    setup(example)
    asyncio.run(_two_sessions(example, sdk_sessions))


async def _two_sessions(example, sdk_sessions) -> None:
    example.server.add(Reply(text="one"), Reply(text="two"))
    async with sdk_sessions("preset") as (first, second):
        assert await first.prompt("/preset other") == "handled"
        await second.prompt("hi")
        await first.prompt("hi")
    assert not example.system_prompt(0).endswith("PROJECT-WINS")  # the second session has no preset active
    assert example.system_prompt(1).endswith("\n\nPROJECT-WINS")
