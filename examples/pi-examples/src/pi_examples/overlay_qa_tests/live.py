"""Overlays that change while open: three stacked at once, a child process streaming long coloured lines,
a ~30 FPS animation, and one that hides itself for a second through its OverlayHandle."""

from __future__ import annotations

import asyncio
import colorsys
import contextlib
import math
import time
from collections.abc import Callable
from typing import Any

from pi_core.extension import CommandContext
from pi_core.tui import matches_key, truncate_to_width, visible_width
from pi_core.ui import OverlayHandle, OverlayOptions
from pi_examples.overlay_qa_tests.frame import Framed, Interval
from pi_examples.overlay_qa_tests.placement import closes

STACK_COLOURS = ["error", "success", "accent"]

# The child of /overlay-overflow: ~30 s of file-listing lines wider than the overlay, wrapped in OSC 8
# hyperlinks, with green/yellow/red status lines (the kind of output that once overflowed overlays).
OVERFLOW_SCRIPT = r"""
echo "Streaming overflow test: 100 long lines over about 30 seconds..."
echo "Long paths, OSC 8 hyperlinks and colours, like a subagent's output"
echo ""
root="/home/dev/projects/pi-mono/packages/coding-agent/src/modes/interactive/components"
for i in $(seq 1 100); do
  file="$root/a-component-with-a-name-long-enough-to-overflow-the-overlay-$i.ts"
  printf '\033]8;;file://%s\a▶ read: %s\033]8;;\a\n' "$file" "$file"
  if [ $((i % 5)) -eq 0 ]; then
    printf '  \033[32m✓ Processed %s files under /home/dev/projects/pi-mono without trouble\033[0m\n' "$i"
  fi
  if [ $((i % 7)) -eq 0 ]; then
    printf '  \033[33m⚠ Warning: something to look at on line %s of a-component-with-a-long-name.ts\033[0m\n' "$i"
  fi
  if [ $((i % 11)) -eq 0 ]; then
    printf '  \033[31m✗ Error: no such file /some/deeply/nested/path/past/the/overlay/edge/file-%s.ts\033[0m\n' "$i"
  fi
  sleep 0.3
done
echo ""
printf '\033[32m✓ Complete: 100 files in about 30 seconds\033[0m\n'
echo "Press Esc to close"
"""


class StackPanel(Framed):
    """Overlay number ``num`` of three; its border colour tells the layers apart. Enter/Escape closes it."""

    def __init__(self, theme: Any, num: int, layer: str, done: Callable[[str], None]) -> None:
        super().__init__(theme)
        self.num, self.layer, self.done = num, layer, done

    def handle_input(self, data: str) -> None:
        if closes(data) or matches_key(data, "enter"):
            self.done(f"Overlay {self.num}")

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        colour = STACK_COLOURS[(self.num - 1) % len(STACK_COLOURS)]
        shade = [f" {'░' * (inner - 2)} "] * 5
        return self.framed([f" Overlay {th.fg('accent', f'#{self.num}')}", f" Layer: {th.fg(colour, self.layer)}", "",
                            *shade, "", th.fg("dim", " Press Enter/Esc to close")], width, colour)


class OverflowPanel(Framed):
    """Streams a bash child's output, 15 lines at a time, following the end; Up/Down scroll, Escape kills it."""

    visible_lines = 15

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None], script: str = OVERFLOW_SCRIPT) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.lines: list[str] = []
        self.offset = 0
        self.finished = False
        self.proc: asyncio.subprocess.Process | None = None
        self.task = asyncio.get_running_loop().create_task(self._stream(script))

    async def _stream(self, script: str) -> None:
        self.proc = await asyncio.create_subprocess_exec("bash", "-c", script, stdout=asyncio.subprocess.PIPE,
                                                         stderr=asyncio.subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        errors = asyncio.ensure_future(self._errors(self.proc.stderr))
        async for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line:
                self.lines.append(line)
                self.offset = max(0, len(self.lines) - self.visible_lines)  # follow the end
                self.tui.request_render()
        await errors
        await self.proc.wait()
        self.finished = True
        self.tui.request_render()

    async def _errors(self, stream: asyncio.StreamReader) -> None:
        async for raw in stream:
            self.lines.append(self.theme.fg("error", raw.decode(errors="replace").strip()))
            self.tui.request_render()

    def handle_input(self, data: str) -> None:
        bottom = max(0, len(self.lines) - self.visible_lines)
        if closes(data):
            self.dispose()
            self.done(None)
        elif matches_key(data, "up"):
            self.offset = max(0, self.offset - 1)
        elif matches_key(data, "down"):
            self.offset = min(bottom, self.offset + 1)
        self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        side = th.fg("border", "│")

        def row(text: str) -> str:
            return side + truncate_to_width(text, inner, "...", pad=True) + side

        title = truncate_to_width(f" Streaming Output ({len(self.lines)} lines) ", inner)
        rest = "─" * max(0, inner - visible_width(title))
        top = th.fg("border", "╭") + th.fg("accent", title) + th.fg("border", rest + "╮")
        below = max(0, len(self.lines) - self.visible_lines - self.offset)
        scrolls = self.offset > 0 or below > 0
        shown = self.lines[self.offset:self.offset + self.visible_lines]
        rows = [row(th.fg("dim", f" ↑{self.offset} | ↓{below}") if scrolls else "")]
        rows += [row(f" {line}") for line in shown] + [row("")] * (self.visible_lines - len(shown))
        status = th.fg("success", "✓ Done") if self.finished else th.fg("warning", "● Running")
        rows.append(row(f" {status} {th.fg('dim', '| ↑↓ scroll | Esc close')}"))
        return [top, *rows, th.fg("border", f"╰{'─' * inner}╯")]

    def dispose(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        self.task.cancel()


class AnimationPanel(Framed):
    """Redraws ~30 times a second: frame counter, measured FPS, a bouncing bar, a spinner, a cycling colour."""

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.frame = self.fps = self.frames_this_second = 0
        self.second_started = time.monotonic()
        self.timer: Interval | None = Interval(1 / 30, self._tick)

    def _tick(self) -> None:
        self.frame += 1
        self.frames_this_second += 1
        now = time.monotonic()
        if now - self.second_started >= 1:
            self.fps, self.frames_this_second, self.second_started = self.frames_this_second, 0, now
        self.tui.request_render()

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.dispose()
            self.done(None)

    def render(self, width: int) -> list[str]:
        th, inner = self.theme, max(1, width - 2)
        bar_width = max(12, inner - 4)
        pos = max(0, int((math.sin(self.frame / 10) + 1) * (bar_width - 10) / 2))
        bar = " " * pos + th.fg("accent", "█" * 10) + " " * max(0, bar_width - 10 - pos)
        spinner = "◐◓◑◒"[self.frame % 4]
        hue = (self.frame * 3) % 360 / 360
        red, green, blue = (round(c * 255) for c in colorsys.hls_to_rgb(hue, 0.5, 0.8))
        swatch = f"\x1b[48;2;{red};{green};{blue}m{' ' * 20}\x1b[0m"
        notes = [th.fg("dim", text) for text in (" This proves overlays can handle", " real-time game-like rendering.",
                                                  " (pi-doom uses same approach)", "", " Press Esc to close")]
        return self.framed([th.fg("accent", " Animation Demo (~30 FPS)"), "",
                            f" Frame: {th.fg('accent', str(self.frame))}", f" FPS: {th.fg('success', str(self.fps))}",
                            "", f" {bar}", f" Spinner: {th.fg('warning', spinner)}", f" Color: {swatch}", "", *notes],
                           width)

    def dispose(self) -> None:
        if self.timer is not None:
            self.timer.stop()
            self.timer = None


class TogglePanel(Framed):
    """'t' hides the overlay through its handle for one second, then shows it again; Escape closes it."""

    def __init__(self, tui: Any, theme: Any, done: Callable[[Any], None]) -> None:
        super().__init__(theme)
        self.tui, self.done = tui, done
        self.handle: OverlayHandle | None = None  # given by custom()'s on_handle
        self.toggles = 0
        self.toggling = False

    def handle_input(self, data: str) -> None:
        if closes(data):
            self.done(None)
        elif matches_key(data, "t") and self.handle is not None and not self.toggling:
            self.toggling = True
            self.toggles += 1
            self.handle.set_hidden(True)
            asyncio.get_running_loop().call_later(1, self._show)

    def _show(self) -> None:
        if self.handle is not None:
            self.handle.set_hidden(False)
            self.toggling = False
            self.tui.request_render()

    def render(self, width: int) -> list[str]:
        th = self.theme
        dim = [th.fg("dim", text) for text in (" Press 't' to hide for 1 second", " (demonstrates setHidden API)", "",
                                               " In real usage, a global keybinding",
                                               " would toggle visibility externally.", "", " Press Esc to close")]
        return self.box(["", th.fg("accent", " Toggle Demo"), "", " This overlay demonstrates the",
                         " onHandle callback API.", "", f" Toggle count: {th.fg('accent', str(self.toggles))}", "",
                         *dim, ""], width, "Toggle Demo")


async def overlay_stack(args: str, ctx: CommandContext) -> None:
    layers = [(1, "back (red border)", -8, -4), (2, "middle (green border)", 0, 0), (3, "front (blue border)", 8, 4)]
    pending: list[asyncio.Future[Any]] = []
    for num, layer, dx, dy in layers:
        if pending:
            await asyncio.sleep(0.4)
        ctx.ui.notify(f"Showing overlay {num} ({layer.split()[0]})...", "info")
        pending.append(asyncio.ensure_future(ctx.ui.custom(
            lambda tui, theme, kb, done, num=num, layer=layer: StackPanel(theme, num, layer, done), overlay=True,
            overlay_options=OverlayOptions(anchor="center", width=50, offset_x=dx, offset_y=dy, max_height=15))))
    results = await asyncio.gather(*pending)
    ctx.ui.notify(f"Closed in order: {', '.join(results)}", "info")


async def overlay_overflow(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: OverflowPanel(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="center", width=90, max_height=20))


async def overlay_animation(args: str, ctx: CommandContext) -> None:
    await ctx.ui.custom(lambda tui, theme, kb, done: AnimationPanel(tui, theme, done), overlay=True,
                        overlay_options=OverlayOptions(anchor="center", width=50, max_height=20))


async def overlay_toggle(args: str, ctx: CommandContext) -> None:
    panels: list[TogglePanel] = []

    def make(tui: Any, theme: Any, kb: Any, done: Callable[[Any], None]) -> TogglePanel:
        panels.append(TogglePanel(tui, theme, done))
        return panels[-1]

    def attach(handle: OverlayHandle) -> None:
        panels[-1].handle = handle

    await ctx.ui.custom(make, overlay=True, overlay_options=OverlayOptions(anchor="center", width=50),
                        on_handle=attach)
    for panel in panels:
        panel.handle = None  # a pending one-second restore finds no handle and does nothing
