"""tmux: plugin components hosted by the interactive UI (issue 15's UI contract, U7, U11, U12, U14, U16, U17,
U20, R2, R3, R4, R5): an inline ``custom()`` component that takes the keys until ``done``, an overlay, widget /
footer / header factories, a custom editor built on ``CustomEditor``, the working indicator, slash-command
argument completion and a stacked autocomplete provider, plugin shortcuts (and a refused reserved one), custom
message and entry renderers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tmux_kit import pi_rig

from pi_core.testing.fake_server import Reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

PLUGIN = r'''
from pi_core import hookimpl
from pi_core import CompletionItem, Shortcut, SlashCommand
from pi_core.render import EntryRenderer, MessageRenderer
from pi_core.tui import CustomEditor
from pi_core.ui import OverlayOptions, Suggestion, Suggestions, WorkingIndicator


class Lines:
    def __init__(self, draw):
        self.draw = draw

    def render(self, width):
        return self.draw(width)


class Counter:
    def __init__(self, done):
        self.n, self.done = 0, done

    def render(self, width):
        return [f"\x1b[33mcount={self.n}\x1b[0m", "up/down to count, enter to finish"]

    def handle_input(self, data):
        if data == "\x1b[A":
            self.n += 1
        elif data == "\x1b[B":
            self.n -= 1
        elif data == "\r":
            self.done(self.n)
        elif data == "\x1b":
            self.done(None)


class Box:
    def __init__(self, done):
        self.done, self.keys = done, ""

    def render(self, width):
        inner = width - 2
        return ["+" + "-" * inner + "+", "|" + "OVERLAY BOX".center(inner) + "|",
                "|" + ("typed:" + self.keys).ljust(inner)[:inner] + "|", "+" + "-" * inner + "+"]

    def handle_input(self, data):
        if data == "q":
            self.done("closed by q")
        else:
            self.keys += data


class Shouting(CustomEditor):
    def handle_input(self, data):
        command = (self.get_text() + data).startswith("/")
        super().handle_input(data.upper() if len(data) == 1 and data.isalpha() and not command else data)

    def render(self, width):
        lines = super().render(width)
        lines[-1] = "== SHOUTING EDITOR " + "=" * max(0, width - 19)
        return lines


class Issues:
    trigger_characters = ["#"]

    def __init__(self, below):
        self.below = below

    async def get_suggestions(self, lines, line, col, signal=None):
        before = lines[line][:col]
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("#"):
            return Suggestions([Suggestion("#42 ", "#42", "Fix the flaky test")], word)
        return await self.below.get_suggestions(lines, line, col, signal)


async def count(args, ctx):
    value = await ctx.ui.custom(lambda tui, theme, kb, done: Counter(done))
    ctx.ui.notify(f"counted {value}")


async def float_box(args, ctx):
    value = await ctx.ui.custom(lambda tui, theme, kb, done: Box(done), overlay=True,
                                overlay_options=OverlayOptions(anchor="top-right", width=30))
    ctx.ui.notify(f"overlay said {value}")


def chrome(args, ctx):
    ctx.ui.set_widget("w", lambda tui, theme: Lines(lambda width: [f"WIDGET COMPONENT w={width}"]), "belowEditor")
    ctx.ui.set_status("mode", "planning")
    ctx.ui.set_footer(lambda tui, theme, data: Lines(
        lambda width: [f"MY FOOTER branch={data.git_branch()} statuses={sorted(data.extension_statuses())}"]))
    ctx.ui.set_working_indicator(WorkingIndicator(["<o>", "<O>"], 200))


def plain(args, ctx):
    ctx.ui.set_footer(None)
    ctx.ui.set_editor_component(None)
    ctx.ui.notify("plain again")


def say(args, ctx):
    ctx.send_message("status-update", args, details={"level": "warn"})


def card(args, ctx):
    ctx.append_entry("status-card", {"message": args})


def fruit(prefix):
    return [CompletionItem(f, f, "a fruit") for f in ("apple", "avocado", "banana") if f.startswith(prefix)]


def seen(data):
    if data == "\x07":
        seen.ctx.ui.notify("terminal input: ctrl+g")
        return True
    return None


@hookimpl
def pi_session_start(ctx, reason):
    ctx.ui.set_header(lambda tui, theme: Lines(lambda width: ["CUSTOM HEADER LINE", theme.fg("accent", "second")]))
    ctx.ui.set_editor_component(lambda tui, theme, kb: Shouting(tui, theme, kb))
    ctx.ui.add_autocomplete_provider(lambda below: Issues(below))
    seen.ctx = ctx
    ctx.ui.on_terminal_input(seen)


@hookimpl
def pi_commands():
    return [SlashCommand("count", "Count with arrows", count), SlashCommand("box", "An overlay", float_box),
            SlashCommand("chrome", "Widgets, footer, indicator", chrome), SlashCommand("plain", "Undo", plain),
            SlashCommand("say", "A custom message", say), SlashCommand("card", "A custom entry", card),
            SlashCommand("fruit", "Pick a fruit", lambda args, ctx: ctx.ui.notify("fruit: " + args), fruit)]


@hookimpl
def pi_shortcuts():
    return [Shortcut("ctrl+shift+u", "Say hello", lambda ctx: ctx.ui.notify("shortcut fired")),
            Shortcut("ctrl+c", "Not allowed", lambda ctx: None)]


@hookimpl
def pi_message_renderers():
    return [MessageRenderer("status-update", lambda m, opts, theme: f"[{m.details['level'].upper()}] {m.content}")]


@hookimpl
def pi_entry_renderers():
    return [EntryRenderer("status-card", lambda e, opts, theme: "[card] " + e.data["message"])]
'''


def test_components_keys_and_chrome(tmp_path: Path) -> None:
    with pi_rig(tmp_path, "components") as rig:
        tmux = rig.tmux
        plugin = tmp_path / "components.py"
        plugin.write_text(PLUGIN)
        (rig.cwd / ".git").mkdir()
        (rig.cwd / ".git" / "HEAD").write_text("ref: refs/heads/feature-x\n")
        rig.start("-e", str(plugin))
        tmux.wait_for("== SHOUTING EDITOR")
        screen = tmux.wait_for("Extension shortcut 'ctrl+c' from components conflicts with built-in shortcut. "
                               "Skipping.", flat=True)
        assert "CUSTOM HEADER LINE" in screen and "esc interrupt" not in screen  # the plugin's header

        # The custom editor: keys pass through its handle_input (upper-cased) into pi's editor; Enter submits.
        rig.server.add(Reply(text="heard you"))
        rig.command("hello")
        tmux.wait_for("heard you")
        assert "HELLO" in json.dumps(rig.server.requests[-1].body["messages"][-1])

        # Inline custom(): the component replaces the editor and gets every key until done(value).
        rig.command("/count")
        tmux.wait_for("count=0", visible=True)
        assert "SHOUTING EDITOR" not in tmux.visible()
        tmux.keys("Up")
        tmux.keys("Up")
        tmux.keys("Up")
        tmux.keys("Down")
        tmux.wait_for("count=2", visible=True)
        tmux.keys("Enter")
        tmux.wait_for("counted 2")
        tmux.wait_for("== SHOUTING EDITOR", visible=True)

        # An overlay floats at the top right and takes the keys; q closes it with a value.
        rig.command("/box")
        screen = tmux.wait_for("OVERLAY BOX", visible=True)
        row = next(line for line in screen.splitlines() if "OVERLAY BOX" in line)
        assert row.index("|") >= 110 - 30 - 1
        tmux.type("ab")
        tmux.wait_for("typed:ab", visible=True)
        tmux.type("q")
        tmux.wait_for("overlay said closed by q")
        tmux.wait_gone("OVERLAY BOX")

        # Widget and footer factories, FooterData (git branch, statuses), the working indicator's frames.
        rig.command("/chrome")
        screen = tmux.wait_for("MY FOOTER branch=feature-x statuses=['mode']", visible=True)
        assert "WIDGET COMPONENT w=110" in screen and "(fake) fake-model" not in screen
        rig.server.add(Reply(tool_calls=[("bash", {"command": "while [ ! -f go ]; do sleep 0.05; done"})]),
                       Reply(text="indicator done"))
        rig.command("work")
        screen = tmux.wait_for("<O> Working…", visible=True)  # the frames alternate every 200 ms
        assert "⠋" not in screen and "⠙" not in screen
        tmux.wait_for("<o> Working…", visible=True)
        (rig.cwd / "go").write_text("")
        tmux.wait_for("indicator done")

        # Argument completion of a plugin command, and the stacked provider for "#".
        rig.command("/plain")
        tmux.wait_for("plain again")
        tmux.wait_for("(fake) fake-model", visible=True)
        tmux.type("/fruit a")
        screen = tmux.wait_for("avocado", visible=True)
        assert "apple" in screen and "banana" not in screen
        tmux.keys("C-c")
        tmux.type("see #4")
        tmux.wait_for("Fix the flaky test", visible=True)
        tmux.keys("C-c")

        # Shortcuts (ctrl+shift+u as the kitty keyboard protocol sends it) and raw terminal input handlers.
        tmux.raw("\x1b[117;6u")
        tmux.wait_for("shortcut fired")
        tmux.raw("\x07")
        tmux.wait_for("terminal input: ctrl+g")

        # Custom messages and entries drawn by the plugins' renderers.
        rig.command("/say disk almost full")
        tmux.wait_for("[WARN] disk almost full")
        rig.command("/card deployed")
        tmux.wait_for("[card] deployed")
        rig.command("/hotkeys")
        tmux.wait_for("Say hello")
        tmux.keys("C-d")
        tmux.wait_for("EXITED=0")
