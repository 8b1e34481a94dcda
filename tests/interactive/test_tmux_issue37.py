"""tmux, side by side with Pi 1.6.0's behaviour (issue 37, points 9-16): the resume hint on quitting, the current
session in /resume, /login's ranking, Esc then `/`, tool timings and whole-session tokens, pasted images in the
transcript, Markdown headings and code fences, and a start-up screen without the built-in plugins."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def session_id(path: Path) -> str:
    return str(json.loads(path.read_text().splitlines()[0])["id"])


def test_ctrl_c_twice_prints_the_resume_hint(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "resume-hint") as rig:
        tmux = rig.tmux
        rig.server.add(Reply(text="first answer"))
        rig.start()
        tmux.wait_for("(fake) fake-model")
        rig.command("hello")
        tmux.wait_for("first answer")
        tmux.keys("C-c")
        tmux.wait_for("Press Ctrl+C again to exit")
        tmux.keys("C-c")
        screen = tmux.wait_for("EXITED=0")
        [session] = (rig.home / "sessions").glob("*/*.jsonl")
        lines = screen.splitlines()
        hint = lines.index("To resume this session:")
        assert lines[hint + 1] == f"pi --session {session_id(session)}"  # a line of its own, to triple-click

        # A session dir of its own goes into the command; a session with nothing saved yet has no hint.
        elsewhere = tmp_path / "my sessions"
        rig.server.add(Reply(text="second answer"))
        rig.start("--session-dir", str(elsewhere))
        tmux.wait_for("(fake) fake-model")
        rig.command("again")
        tmux.wait_for("second answer")
        rig.command("/quit")
        screen = tmux.wait_for("EXITED=0")
        [session] = elsewhere.glob("*.jsonl")
        assert f"pi --session-dir '{elsewhere}' --session {session_id(session)}" in screen.splitlines()
        rig.start()
        tmux.wait_for("(fake) fake-model")
        tmux.keys("C-d")
        screen = tmux.wait_for("EXITED=0")
        assert "To resume this session" not in screen


def test_resume_lists_the_current_session_and_will_not_delete_it(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "resume-current") as rig:
        tmux = rig.tmux
        rig.server.add(Reply(text="the only answer"))
        rig.start()
        tmux.wait_for("(fake) fake-model")
        rig.command("the only question")
        tmux.wait_for("the only answer")
        rig.command("/resume")
        tmux.wait_for("Resume Session (Current Folder)", visible=True)
        screen = tmux.wait_for("› the only question", visible=True)  # Pi lists it (in the accent colour)
        assert "No sessions" not in screen
        [session] = (rig.home / "sessions").glob("*/*.jsonl")
        tmux.keys("C-d")
        tmux.wait_for("Cannot delete the currently active session", visible=True)
        assert session.exists()
        tmux.keys("Escape")
        tmux.wait_gone("Resume Session")


def test_login_filter_ranks_the_exact_provider_first(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "login-rank") as rig:
        tmux = rig.tmux
        rig.start()
        tmux.wait_for("(fake) fake-model")
        rig.command("/login")
        tmux.wait_for("Select provider to login:", visible=True)
        tmux.type("anthropic")
        screen = tmux.wait_for("> anthropic", visible=True)
        rows = [line.strip() for line in screen.splitlines() if "anthropic)" in line]
        assert rows[0].startswith("→ Anthropic"), rows  # the provider id itself, above "Claude on Vertex AI"
        assert any("Vertex" in row for row in rows[1:]), rows
        tmux.keys("Enter")
        tmux.wait_for("Log in to Anthropic", visible=True)
        tmux.keys("Escape")
        tmux.wait_gone("Log in to Anthropic")


def test_escape_then_slash_keeps_the_slash(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "esc-slash") as rig:
        tmux = rig.tmux
        (rig.cwd / "notes.txt").write_text("x\n")  # what Meta-/ (complete) would have put in the editor
        rig.start()
        tmux.wait_for("(fake) fake-model")
        tmux.keys("Escape")
        time.sleep(0.15)  # a person's Esc, then "/" well inside prompt_toolkit's 0.3 s Meta-key wait
        tmux.type("/")
        screen = tmux.wait_for("Open settings", visible=True)  # the command menu, as Pi opens it
        assert "notes.txt" not in screen
        tmux.type("mod")
        tmux.wait_for("/mod", visible=True)


def footer_tokens(screen: str) -> str:
    line = next(line for line in screen.splitlines() if "(fake) fake-model" in line)
    found = re.search(r"↑\S+ ↓\S+", line)
    return found.group(0) if found else ""


def test_a_command_shows_how_long_it_took_and_the_footer_counts_every_branch(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "took") as rig:
        tmux = rig.tmux
        rig.server.add(Reply(tool_calls=[("bash", {"command": "sleep 0.3; echo slept"})]), Reply(text="first done"),
                       Reply(text="second done"))
        rig.start()
        tmux.wait_for("(fake) fake-model")
        rig.command("first question")
        screen = tmux.wait_for("first done")
        took = re.search(r"Took (\d+\.\d)s", screen)  # Pi's timing line under a finished command
        assert took is not None and 0.3 <= float(took.group(1)) < 30, screen
        assert screen.index("slept") < took.start()
        rig.command("second question")
        screen = tmux.wait_for("second done")
        spent = footer_tokens(tmux.wait_for("↑30"))  # three replies of ↑10 ↓5 from the fake server

        # /tree back to before the first question: the branch has no reply now, the session still has three.
        rig.command("/tree")
        tmux.wait_for("Session tree", visible=True)
        tmux.type("first question")
        tmux.wait_for("[search: first question]", visible=True)
        tmux.keys("Enter")
        tmux.wait_for("Summarize branch?", visible=True)
        tmux.keys("Enter")  # No summary
        tmux.wait_gone("Summarize branch?")
        tmux.wait_for("Navigated to selected point")
        assert footer_tokens(tmux.visible()) == spent == "↑30 ↓15"


def test_a_pasted_image_is_named_in_the_transcript(tmp_path: Path) -> None:
    from test_tmux_editor import images_sent, png

    with pi_rig(tmp_path, "image-line") as rig:
        tmux = rig.tmux
        red = png(rig.cwd / "red.png", "red")
        rig.server.add(Reply(text="A red square."))
        rig.start()
        tmux.wait_for("(fake) fake-model")
        tmux.paste(str(red))  # as a terminal pastes a dropped file
        tmux.wait_for("[red.png]", visible=True)
        rig.command("what colour is it")
        screen = tmux.wait_for("A red square.")
        assert images_sent(rig.server.requests[-1].body) == 1
        lines = [line.strip() for line in screen.splitlines()]
        asked = lines.index("what colour is it")
        assert lines[asked + 1] == "[image: red.png]"  # in the user message, under its text


def test_markdown_headings_left_and_code_fences_shown_in_the_theme_colours(tmp_path: Path) -> None:
    from test_tmux_look import rgb, theme_file

    with pi_rig(tmp_path, "markdown") as rig:
        tmux = rig.tmux
        theme = theme_file(tmp_path / "fence.json", "fence", "#00aaff", "#202020")
        colours = json.loads(theme.read_text())
        colours["colors"].update(mdHeading="#ffaa11", mdCodeBlockBorder="#11ee77")
        theme.write_text(json.dumps(colours))
        rig.server.add(Reply(text="# Big title\n\nBody text.\n\n### Third level\n\n```python\nprint('x')\n```\n"))
        rig.start("--theme", str(theme), "--use-theme", "fence")
        tmux.wait_for("(fake) fake-model")
        rig.command("show markdown")
        screen = tmux.wait_for("Third level")
        lines = screen.splitlines()
        # left-aligned after outputPad's one cell, as Pi (rich centres it)
        assert " Big title" in [line.rstrip() for line in lines]
        assert " ### Third level" in [line.rstrip() for line in lines]
        fence = [line.rstrip() for line in lines].index(" ```python")  # the fence with its language
        assert lines[fence + 1].rstrip() == "   print('x')" and lines[fence + 2].rstrip() == " ```"
        coloured = tmux.screen(colours=True).splitlines()
        assert rgb("#11ee77") in next(line for line in coloured if "```python" in line)
        assert rgb("#ffaa11") in next(line for line in coloured if "Big title" in line)


def test_start_up_lists_what_is_not_built_in_and_the_rest_behind_ctrl_o(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "startup-list") as rig:
        tmux = rig.tmux
        (rig.cwd / "AGENTS.md").write_text("Be brief.\n")
        rig.start()
        screen = tmux.wait_for("(fake) fake-model")
        assert "Context:" in screen and "AGENTS.md" in screen  # loaded from the project: shown
        assert "Press ctrl+o to show all loaded resources" in screen
        assert "anthropic-messages" not in screen and "Plugins:" not in screen  # the built-ins wait behind ctrl+o
        tmux.keys("C-o")
        screen = tmux.wait_for("Built-in plugins:", flat=True, visible=True)  # the header drawn again, expanded
        assert "anthropic-messages" in "".join(screen.split()) and "Press ctrl+o to show" not in screen
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")

        # --verbose shows it all at once; quietStartup: true shows no header, after a Ctrl+O redraw either.
        rig.start("--verbose")
        tmux.wait_for("Built-in plugins:", flat=True)
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
        toml = rig.home / "settings.toml"  # pi wrote it already (settings.toml wins over settings.json)
        toml.write_text(toml.read_text() + "quietStartup = true\n")
        rig.start()
        screen = tmux.wait_for("(fake) fake-model")
        assert "pi v" not in screen and "Context:" not in screen
        tmux.keys("C-o")
        tmux.wait_for("Tool output expanded")
        assert "pi v" not in tmux.visible() and "Built-in plugins" not in tmux.visible()
