"""Bench: load a 10,000-entry session file and build its context (target: under 200 ms).

Run: python bench/sessions.py [entries]. Prints the median of several runs for each step, for a
realistic session (compacted every ~400 entries, as a long session is) and for the worst case (no
compaction, so every message is in the context), plus a 1M-iteration Python loop as a yardstick for
how fast the machine is at the moment.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def make_session(path: Path, count: int, compact_every: int | None) -> None:
    """A realistic mix: user prompts, assistant replies with tool calls, tool results, compactions."""
    from pi_core.sessions import SessionManager

    sm = SessionManager.create("/bench/project", path.parent)
    sm.append_model_change("anthropic", "claude-sonnet-4-5")
    sm.append_thinking_level_change("medium")
    usage = {"input": 1200, "output": 300, "cacheRead": 5000, "cacheWrite": 0, "totalTokens": 6500,
             "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0.0015, "cacheWrite": 0, "total": 0.0096}}
    i = 0
    while 2 + 4 * i + (i // (compact_every // 4) if compact_every else 0) < count:
        sm.append_message({"role": "user", "content": [{"type": "text", "text": f"Please look at module {i} " * 8}],
                           "timestamp": 1_765_000_000_000 + i})
        sm.append_message({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should read the file first. " * 5, "thinkingSignature": "sig" * 20},
            {"type": "text", "text": "Reading it now."},
            {"type": "toolCall", "id": f"toolu_{i}", "name": "read", "arguments": {"path": f"src/mod_{i}.py"}}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
            "stopReason": "toolUse", "timestamp": 1_765_000_000_100 + i})
        sm.append_message({"role": "toolResult", "toolCallId": f"toolu_{i}", "toolName": "read",
                           "content": [{"type": "text", "text": "def f():\n    return 42\n" * 40}],
                           "isError": False, "timestamp": 1_765_000_000_200 + i})
        sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "Done: it returns 42. " * 10}],
                           "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                           "usage": usage, "stopReason": "stop", "timestamp": 1_765_000_000_300 + i})
        if compact_every and i % (compact_every // 4) == 0 and i:
            first_kept = sm.get_branch()[-100]["id"]
            sm.append_compaction("## Goal\nBench summary " * 20, first_kept, 150_000,
                                 {"readFiles": [], "modifiedFiles": []}, False)
        i += 1
    generated = sm.session_file
    assert generated is not None
    os.replace(generated, path)


def timed(fn, runs: int = 7) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), result


def yardstick_ms() -> float:
    start = time.perf_counter()
    for _ in range(1_000_000):
        pass
    return (time.perf_counter() - start) * 1000


def bench(label: str, count: int, compact_every: int | None) -> None:
    from pi_core.sessions import SessionManager

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        start = time.perf_counter()
        make_session(path, count, compact_every)
        write_ms = (time.perf_counter() - start) * 1000
        size_mb = path.stat().st_size / 1e6
        load_ms, sm = timed(lambda: SessionManager.open(path))
        both_ms, ctx = timed(lambda: SessionManager.open(path).build_session_context())
        entries = len(sm.get_entries())
        typed_ms = branch = None
        try:
            from pi_core.hookspecs.entries import SessionEntries
        except ImportError:  # a pi before typed entries: nothing to compare
            pass
        else:
            typed_ms, branch = timed(lambda: SessionEntries(sm).get_branch(), runs=3)
        print(f"{label}: {entries} entries, {size_mb:.1f} MB, {len(ctx.messages)} messages in context")
        print(f"  append (each line written and flushed): {write_ms / entries:7.2f} ms per entry")
        print(f"  open (parse + index):                   {load_ms:7.1f} ms")
        print(f"  open + build_session_context:           {both_ms:7.1f} ms  (target < 200 ms)")
        if typed_ms is not None:  # what a plugin pays the first time it reads the branch (cached after)
            print(f"  typed branch (ctx.session_manager):      {typed_ms:7.1f} ms  ({len(branch)} entries, first read)")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    print(f"yardstick: empty 1M-iteration loop takes {yardstick_ms():.0f} ms (~20 ms on an idle modern machine)")
    bench("realistic (compacted every ~400 entries)", count, 400)
    bench("worst case (never compacted)", count, None)


if __name__ == "__main__":
    main()
