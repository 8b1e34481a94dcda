"""Where a turn's CPU goes (issue 19's per-turn rows), in one process: ``python bench/turns.py [--profile]``.

The 20-turn ``read`` loop of ``python -m bench`` (loop-* rows) runs in a session in this process against the
fake model server in a child process (keep-alive, so serving costs this process nothing), once per wire.
Measured as this thread's CPU time, so other work on the machine counts for little: the whole turn, and the
post-reply window, from the reply's last chunk to the next request's last byte written (the part of the
bench's gap that is pi's own work; the gap adds the frames still queued when the server finished, and
waiting for a CPU). ``--profile`` adds a cProfile of that window: the share of its CPU per step (the
profiler itself then inflates the CPU figures).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: bench/turns.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.plugins import build_session
from pi_core.testing.fake_script import write_script
from pi_core.testing.fake_server import Reply

WIRES = {"openai-completions": "/v1", "openai-responses": "/v1", "anthropic-messages": "",
         "google-generative-ai": "/v1beta"}
# (file fragment, function, label): the window's steps whose cumulative CPU is shown with --profile
STEPS = [("httpx2/_client.py", "send", "httpx2 sends the request"),
         ("httpx2/_client.py", "build_request", "httpx2 builds the request"),
         ("pi_core/llm/transport.py", "aclose", "closing the finished reply"),
         ("pi_core/loop.py", "execute_tool_calls", "the tool call (checks, read, hooks, events)"),
         ("pi_core/agent.py", "emit", "events to listeners and plugins"),
         ("convert.py", "build_body", "the request body (Completions, Responses, Google)"),
         ("payload.py", "build_params", "the request body (Anthropic)"),
         ("pi_core/session/agent_session.py", "_save", "session entries")]


class Window:
    """Stamps (wall, thread CPU) at every SSE chunk and every request written; optionally profiles the
    window from the end of a reply (its stream closing) to the next request written."""

    def __init__(self, profile: bool) -> None:
        self.chunks: list[tuple[float, float]] = []
        self.sent: list[tuple[float, float]] = []
        self.profiler = cProfile.Profile(time.thread_time) if profile else None
        self.recording = False
        self.on = False

    def install(self) -> None:
        from pi_core.llm import sse, transport

        window = self
        trace = transport._ConnectionTrace.trace
        feed = sse.SSEDecoder.feed
        aclose = transport.SSEStream.aclose

        async def sent(connection: Any, name: str, info: dict[str, Any]) -> None:  # httpcore2's trace events
            await trace(connection, name, info)
            if name.endswith("send_request_body.complete"):
                window.sent.append((time.perf_counter(), time.thread_time()))
                if window.on and window.profiler is not None:
                    window.profiler.disable()
                    window.on = False

        def fed(decoder: Any, chunk: bytes) -> Any:
            window.chunks.append((time.perf_counter(), time.thread_time()))
            return feed(decoder, chunk)

        async def closing(stream: Any) -> None:
            if window.recording and window.profiler is not None and not window.on:
                window.on = True
                window.profiler.enable()
            await aclose(stream)

        transport._ConnectionTrace.trace = sent  # type: ignore[method-assign]
        sse.SSEDecoder.feed = fed  # type: ignore[method-assign]
        transport.SSEStream.aclose = closing  # type: ignore[method-assign]

    def post_reply_cpu(self) -> list[float]:
        out = []
        for previous, current in zip(self.sent, self.sent[1:]):
            last = [c for c in self.chunks if previous[0] < c[0] < current[0]]
            if last:
                out.append(current[1] - last[-1][1])
        return out


def run_wire(api: str, turns: int, rounds: int, window: Window) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="pi-bench-turns-") as tmp:
        root = Path(tmp)
        cwd = root / "cwd"
        cwd.mkdir()
        (cwd / "tiny.txt").write_text("tiny file\n")
        per_run = [Reply(tool_calls=[("read", {"path": "tiny.txt"})]) for _ in range(turns)] + [Reply(text="ok")]
        script = write_script(root / "script.json", per_run * (rounds + 1))
        server = subprocess.Popen([sys.executable, "-m", "pi_core.testing.fake_server", "--script", str(script),
                                   "--keep-alive"], stdout=subprocess.PIPE, text=True)
        try:
            url = (server.stdout.readline() if server.stdout else "").strip() + WIRES[api]
            whole: list[float] = []
            window_cpu: list[float] = []
            for index in range(rounds + 1):  # the first round warms up
                session = build_session(cwd, url, [], api)
                window.chunks.clear()
                window.sent.clear()
                window.recording = index > 0
                started = time.thread_time()
                asyncio.run(session.prompt("go"))  # type: ignore[attr-defined]
                spent = time.thread_time() - started
                if window.on and window.profiler is not None:
                    window.profiler.disable()
                    window.on = False
                if len(session.agent.state.messages) != 2 * turns + 2:  # type: ignore[attr-defined]
                    raise SystemExit(f"bench: the {api} run did not do the scripted work")
                if index:
                    whole.append(spent / turns)
                    window_cpu.extend(window.post_reply_cpu())
        finally:
            server.terminate()
            server.wait(10)
    return statistics.median(whole), statistics.median(window_cpu)


def report_profile(profiler: cProfile.Profile) -> None:
    stats = pstats.Stats(profiler)
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(value[2] for value in entries.values())
    print("the post-reply window's CPU by step (cProfile, every wire together; steps overlap where one calls another):")
    for fragment, function, label in STEPS:
        spent = sum(value[3] for key, value in entries.items() if fragment in key[0] and key[2] == function)
        if spent:
            print(f"  {label:52s} {spent / total * 100:5.1f} %")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/turns.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20, help="tool turns per run (default 20)")
    parser.add_argument("--rounds", type=int, default=5, help="timed runs per wire (default 5)")
    parser.add_argument("--wires", default=",".join(WIRES), help="comma-separated APIs (default: all four)")
    parser.add_argument("--profile", action="store_true", help="cProfile the post-reply window")
    args = parser.parse_args(argv)
    window = Window(args.profile)
    window.install()
    print(f"CPU of this thread, medians of {args.rounds} runs of {args.turns} `read` turns:")
    for api in args.wires.split(","):
        whole, post = run_wire(api, args.turns, args.rounds, window)
        print(f"  {api:22s} whole turn {whole * 1000:6.2f} ms   last chunk -> next request written {post * 1000:6.2f} ms")
    if window.profiler is not None:
        report_profile(window.profiler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
