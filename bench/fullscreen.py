"""Fullscreen mode's redraw per keystroke with a long transcript: ``python bench/fullscreen.py [--lines 10000]``.

The real app (``--tui-mode fullscreen``) runs on a pipe input and a VT100 output of a fixed size; the transcript
holds replies rendered as Markdown until it is ``--lines`` rows long. Each step sends one key through the
input and times the frame prompt_toolkit draws for it (``Renderer.render``, as this thread's CPU time: on a shared
machine the wall clock mostly counts waiting for a core). Steps: typing at the
end (following), typing while scrolled to the middle, PageUp, and the first frame after a resize to 60 columns
and back. The same steps with a 100-line transcript show what the length adds. Goal: at most 16 ms a frame.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: bench/fullscreen.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.plugins import build_session

REPLY = ("Here is what I found in `module.py`, with **two** changes that matter:\n\n"
         + "\n".join(f"- step {{n}}.{i}: a line of prose that explains a change in some detail" for i in range(16))
         + "\n\n```python\ndef answer():\n    return 42\n```")


class Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


async def measure(lines: int, keys: int) -> dict[str, list[float]]:
    from pi_plugins.interactive.app import InteractiveApp
    from pi_plugins.interactive.header import StartupInfo
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output
    from rich.console import Console
    from rich.markdown import Markdown

    size = [Size(rows=40, columns=120)]
    with tempfile.TemporaryDirectory(prefix="pi-bench-fullscreen-") as folder, create_pipe_input() as pipe:
        session: Any = build_session(Path(folder), "http://127.0.0.1:9", [])
        output = Vt100_Output(Terminal(), lambda: size[0], term="xterm-256color")
        app = InteractiveApp(session, header=StartupInfo(version="bench"), console=Console(file=io.StringIO()),
                             input=pipe, output=output, tui_mode="fullscreen")
        pane: Any = app.scrollback
        pane.width, rows, n = 119, 0, 0  # the pane's width in a 120-column terminal (one column of scrollbar)
        while rows < lines:
            app.show(Markdown(REPLY.replace("{n}", str(n))))
            rows += len(pane.block(len(pane.blocks) - 1).lines)
            n += 1
        frames: list[float] = []
        renderer = app.app.renderer
        original = renderer.render

        def timed(*args: Any, **kwargs: Any) -> None:
            started = time.thread_time()
            original(*args, **kwargs)
            frames.append((time.thread_time() - started) * 1000)

        renderer.render = timed  # type: ignore[method-assign]
        task = asyncio.create_task(app.run())
        while not app.app.is_running:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)
        results: dict[str, list[float]] = {}

        async def step(name: str, data: str, count: int, between: Any = None) -> None:
            taken: list[float] = []
            for _ in range(count):
                if between is not None:
                    between()
                frames.clear()
                pipe.send_text(data)
                deadline = time.monotonic() + 2
                while not frames and time.monotonic() < deadline:
                    await asyncio.sleep(0.001)
                await asyncio.sleep(0.04)  # min_redraw_interval: one frame per key
                taken += frames[:1]
            results[name] = taken

        await step("type at the end", "x", keys)
        pane.to(pane.back(pane.end(), sum(len(b.lines) for b in pane.blocks) // 2))
        await asyncio.sleep(0.1)
        await step("type scrolled to the middle", "y", keys)
        await step("PageUp", "\x1b[5~", keys)

        def resize() -> None:
            size[0] = Size(rows=40, columns=60 if size[0].columns == 120 else 120)
            app.app._on_resize()

        await step("first frame after a resize (60 <-> 120 columns)", "", keys, between=resize)
        results["transcript rows"] = [float(rows)]
        app.exit(0)
        await task
        return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--keys", type=int, default=40)
    args = parser.parse_args()
    for lines in (100, args.lines):
        results = asyncio.run(measure(lines, args.keys))
        rows = results.pop("transcript rows")[0]
        print(f"transcript of {int(rows):,} rows (120x40 terminal):")
        for name, taken in results.items():
            if taken:
                ordered = sorted(taken)
                p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
                print(f"  {name:<50} median {statistics.median(taken):6.2f} ms   p95 {p95:6.2f} ms   n={len(taken)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
