"""dynamic_resources in the interactive UI (tmux): the theme it contributes is listed, applies and survives /reload."""

from __future__ import annotations

import json

import pytest

from pi_core.testing.tmux import tmux_available, tmux_pi

pytestmark = pytest.mark.skipif(not tmux_available(), reason="tmux is not installed")

ACCENT = "38;2;79;209;197"  # the theme's accent, #4fd1c5
THEMES_API = '''
from pi_core import hookimpl
from pi_core import SlashCommand


async def themes(args, ctx):
    names = sorted(t.name for t in ctx.ui.get_all_themes())
    path = next(t.path for t in ctx.ui.get_all_themes() if t.name == "dynamic-resources")
    current = ctx.ui.theme.name
    applied = ctx.ui.set_theme(args.strip())
    ctx.ui.notify(f"current={current} themes={','.join(names)} path={path.rsplit('/', 1)[-1]} "
                  f"set={applied.success} {applied.error or ''}", "info")


@hookimpl
def pi_commands():
    return [SlashCommand(name="themes-api", description="ctx.ui theme calls", handler=themes)]
'''


def test_a_plugin_theme_is_listed_applied_and_rediscovered(example) -> None:
    (example.home / "settings.json").write_text(json.dumps({"theme": "dynamic-resources"}))
    api = example.home / "theme_calls.py"  # outside the project: the editor offers project files
    api.write_text(THEMES_API)
    with tmux_pi(example, "plugin-theme") as tui:
        tui.start("dynamic_resources", "--no-session", "-e", str(api))
        screen = tui.tmux.wait_for("(fake) fake-model")
        assert "not found" not in screen  # the setting names the plugin's theme: no warning, it is applied
        tui.command("/theme")
        screen = tui.tmux.wait_for("→ dynamic-resources  ✓", visible=True)
        screen = tui.tmux.visible(colours=True)
        assert ACCENT in screen  # the picker's cursor row in the theme's accent
        tui.tmux.keys("Escape")
        tui.tmux.wait_gone("type to filter")  # closed: keys typed at once would follow the Escape as Alt+key
        tui.command("/themes-api dark")
        tui.tmux.wait_for("current=dynamic-resources themes=dark,dynamic-resources,light path=dynamic.json set=True")
        tui.command("/reload")
        tui.tmux.wait_for("Reloaded keybindings")
        tui.command("/themes-api dynamic-resources")  # found again after /reload re-discovered the resources
        tui.tmux.wait_for("current=dark themes=dark,dynamic-resources,light path=dynamic.json set=True")
        tui.command("/themes-api nope")
        tui.tmux.wait_for("set=False Theme not found: nope", flat=True)
        settings = json.loads((example.home / "settings.json").read_text())
        assert settings["theme"] == "dynamic-resources"  # set_theme by name is kept, as Pi
