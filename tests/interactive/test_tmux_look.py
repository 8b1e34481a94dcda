"""tmux: themes (custom file, /theme, live reload, --theme/--use-theme/--no-themes), /settings written back,
keybindings.json and /hotkeys, and the display settings (padding, completion rows, code indent, cursor)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.resources.themes import REQUIRED_COLORS
from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
SCREENS = Path(__file__).parent / "screens"  # captured screens land here when PI_TEST_SCREENS=1


def theme_file(path: Path, name: str, accent: str, user_bg: str) -> Path:
    colors = {role: "#aaaaaa" for role in REQUIRED_COLORS}
    colors.update(accent=accent, userMessageBg=user_bg, userMessageText="#ffffff", text="#dddddd")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"name": name, "appearance": "dark", "colors": colors}))
    return path


def rgb(hex_colour: str, background: bool = False) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"{48 if background else 38};2;{r};{g};{b}"


def keep(name: str, text: str) -> None:
    import os

    if os.environ.get("PI_TEST_SCREENS") == "1":
        SCREENS.mkdir(exist_ok=True)
        (SCREENS / f"{name}.txt").write_text(text)


def test_themes_settings_and_keys(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "look") as rig:
        tmux = rig.tmux
        ocean = theme_file(rig.home / "themes" / "ocean.json", "ocean", "#ff00aa", "#003355")
        (rig.home / "settings.json").write_text(json.dumps({
            "theme": "ocean", "editorPaddingX": 2, "autocompleteMaxVisible": 3,
            "markdown": {"codeBlockIndent": "    "}, "showHardwareCursor": True}))
        (rig.home / "keybindings.json").write_text(json.dumps({"app.thinking.toggle": "ctrl+y",
                                                               "app.session.new": ["ctrl+shift+n"]}))
        rig.start()
        tmux.wait_for("(fake) fake-model")
        assert tmux.cursor_visible()  # showHardwareCursor: the terminal's own cursor

        # A themed transcript: the custom theme's user background and accent, code indented by 4.
        rig.server.add(Reply(text="## Result\n\nDone:\n\n```python\nx = 1\n```"))
        rig.command("hello there")
        tmux.wait_for("Result")
        coloured = tmux.screen(colours=True)
        keep("themed-transcript", tmux.screen())
        assert rgb("#003355", background=True) in coloured and rgb("#ff00aa") in coloured
        assert "\n     x = 1" in tmux.screen()  # outputPad's cell, then the indent of 4

        # Editor padding 2 and three completion rows at most.
        tmux.type("abc")
        tmux.wait_for("\n  abc", visible=True)
        tmux.keys("C-c")
        tmux.type("/")
        screen = tmux.wait_for("/settings", visible=True)
        assert sum(1 for line in screen.splitlines() if re.match(r"^ /[a-z]", line)) == 3
        tmux.keys("Escape")
        tmux.keys("C-c")

        # keybindings.json is in force and /hotkeys lists it.
        rig.command("/hotkeys")
        screen = tmux.wait_for("app.thinking.toggle")
        line = next(line for line in screen.splitlines() if "app.thinking.toggle" in line)
        assert "Ctrl+Y" in line and "Ctrl+T" not in line
        assert "Ctrl+Shift+N" in next(line for line in screen.splitlines() if "app.session.new" in line)
        tmux.keys("C-y")
        tmux.wait_for("Thinking hidden")
        tmux.raw("\x1b[110;6u")  # Ctrl+Shift+N as kitty-protocol terminals send it
        tmux.wait_for("New session started")

        # /settings: change the double-escape action; pi's file holds only that, Pi's keeps the theme.
        rig.command("/settings")
        screen = tmux.wait_for("Double-escape action", visible=True)
        keep("settings", tmux.visible())
        assert "ocean" in screen
        for _ in range(5):
            tmux.keys("Down")
        tmux.keys("Enter")
        tmux.wait_for("Saved doubleEscapeAction = fork")
        tmux.keys("Escape")
        tmux.wait_gone("Double-escape action")
        saved = (rig.home / "settings.toml").read_text()
        assert 'doubleEscapeAction = "fork"' in saved and "theme" not in saved
        assert json.loads((rig.home / "settings.json").read_text())["theme"] == "ocean"
        tmux.keys("Escape")
        tmux.keys("Escape")
        tmux.wait_for("No user message to fork from")  # double Escape now forks instead of opening /tree

        # /theme light recolours what comes next; then back to ocean, whose file we edit while pi runs.
        rig.command("/theme light")
        tmux.wait_for("Theme: light")
        rig.server.add(Reply(text="light reply"), Reply(text="reloaded reply"))
        rig.command("in light")
        tmux.wait_for("light reply")
        from pi_core.resources.themes import builtin_themes

        assert rgb(builtin_themes()["light"].color("userMessageBg"), background=True) in tmux.screen(colours=True)
        rig.command("/theme ocean")
        tmux.wait_for("Theme: ocean")
        theme_file(ocean, "ocean", "#ff00aa", "#550000")
        tmux.wait_for("Theme reloaded: ocean")
        rig.command("after reload")
        tmux.wait_for("reloaded reply")
        assert rgb("#550000", background=True) in tmux.screen(colours=True)
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")

        # --no-themes drops <agentDir>/themes; an explicit --theme file still loads and --use-theme picks it.
        forest = theme_file(tmp_path / "elsewhere" / "forest.json", "forest", "#00ff44", "#002200")
        rig.start("--no-themes", "--theme", str(forest), "--use-theme", "forest")
        tmux.wait_for("(fake) fake-model")
        assert rgb("#00ff44") in tmux.screen(colours=True)
        rig.command("/theme")
        screen = tmux.wait_for("forest", visible=True)
        assert "ocean" not in screen and "→ forest" in screen  # the picker opens at the theme in force
        tmux.keys("Escape")
        tmux.wait_gone("type to filter")
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
