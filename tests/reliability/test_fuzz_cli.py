"""Hostile tool arguments through the real ``pi`` (issue 17): one process serves hundreds of tool calls.

The fake model answers each request with a batch of tool calls whose arguments are generated from a seed:
wrong types, huge and empty strings, NUL bytes, lone surrogates, ``NaN`` / ``Infinity`` tokens (sent as
raw JSON, as a model would), huge integers, nested junk and unknown keys, mixed with plausible values. The
sandbox holds a text file, invalid UTF-8, a symlink loop, a directory cycle and a FIFO. Checked per call,
from the session file: exactly one result each, and no raw Python exception text (``embedded null byte``,
``cannot convert float NaN to integer``, ``[Errno 2]``...) reaches the model; per process: exit 0, the
final answer printed, no traceback.

Budget (documented in CONTRIBUTING.md): the fast tier runs ``FAST_CASES`` calls per tool in one process
(about 20 s); ``PI_SLOW_TESTS=1`` runs ``SLOW_CASES`` per tool, ``BATCH`` calls per process, within 15
minutes on a 2-core machine.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import Reply, ToolUse
from pi_core.testing.runner import PiRunner, pi_runner

from .conftest import FAST_WIRE

TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"]
FAST_CASES = 24  # per tool, fast tier (seeded: the same cases every run)
SLOW_CASES = 1000  # per tool, PI_SLOW_TESTS=1
BATCH = 250  # tool calls one pi process serves
PER_TURN = 10  # tool calls per model reply

# What an exception's own text looks like when it leaks instead of the tool's clear error.
RAW_EXCEPTION = re.compile(
    r"Traceback \(most recent call last\)|embedded null byte|cannot convert float|codec can't (?:en|de)code"
    r"|surrogates not allowed|object of type '|unsupported operand type|has no attribute '"
    r"|invalid literal for int\(\)|list index out of range|'NoneType' object|expected str, bytes or os\.PathLike"
    r"|\[Errno \d+\]|must be str, not|object is not (?:subscriptable|iterable|callable)|unhashable type"
    r"|maximum recursion depth|int too large|Python int too large|\b(?:Type|Value|Key|Attribute|Index|Overflow"
    r"|Recursion|UnicodeEncode|UnicodeDecode|OS|FileNotFound|IsADirectory|NotADirectory)Error\b")

FIXTURES = ["text.txt", "bad.bin", "loop", "dir", "dir/inner.txt", "cycle", "fifo", "missing.txt", "dir/new.txt",
            "new dir/file.txt", "text.txt/child", "", ".", "@text.txt", "dir/../text.txt"]
SAFE_COMMANDS = ["echo hi", "exit 3", "printf 'a\\0b\\xff'", "seq 1 3000", "ls -R", "echo out; echo err >&2",
                 "printf '\\xed\\xa0\\x80'", "cat fifo < /dev/null & wait", "head -c 70000 /dev/zero | tr '\\0' x"]


class Hostile:
    """Seeded generator of argument values (``random.Random``: the same seed gives the same cases)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def text(self, size: int = 30) -> str:
        alphabet = "abc xyz/.*?[]{}()|\\\"'$`\n\t\x00\x1b é中😀\u2028"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randrange(size + 1)))

    def confined(self) -> str:
        return self.text(20).replace("..", "_").lstrip("/~").replace("\\", "_")

    def value(self, depth: int = 0) -> Any:
        pick = self.rng.randrange(16 if depth < 2 else 12)
        if pick == 0:
            return None
        if pick == 1:
            return self.rng.choice([True, False])
        if pick == 2:
            return self.rng.randrange(-5, 5000)
        if pick == 3:
            return self.rng.choice([2 ** 70, -(2 ** 70), 10 ** 30])
        if pick == 4:
            return self.rng.choice([0.5, -1.5, 1e308, 3.0, 1e-9])
        if pick == 5:
            return self.rng.choice([float("nan"), float("inf"), float("-inf")])
        if pick == 6:
            return self.text()
        if pick == 7:
            return "x" * self.rng.choice([60_000, 120_000]) if self.rng.random() < 0.3 else ""
        if pick == 8:
            return self.text(8) + "\x00" + self.text(8)
        if pick == 9:
            return self.rng.choice(["\ud800", "a\udfffb", "\udc80\udc80"])
        if pick in (10, 11):
            return self.rng.choice(FIXTURES)
        if pick in (12, 13):
            return [self.value(depth + 1) for _ in range(self.rng.randrange(3))]
        return {self.text(6): self.value(depth + 1) for _ in range(self.rng.randrange(3))}

    def path(self) -> Any:
        roll = self.rng.random()
        if roll < 0.55:
            return self.rng.choice(FIXTURES)
        if roll < 0.8:
            return self.confined()
        value = self.value()
        return self.confined() if isinstance(value, str) else value  # strings stay inside the sandbox

    def number(self) -> Any:
        return self.value() if self.rng.random() < 0.5 else self.rng.choice([0, 1, 2, 50, -3, 2.5, 10 ** 12])

    def command(self) -> Any:
        roll = self.rng.random()
        if roll < 0.4:
            return self.rng.choice(SAFE_COMMANDS)
        if roll < 0.8:
            return "printf %s " + shlex.quote(self.text(40))
        value = self.value()
        return "printf %s " + shlex.quote(value) if isinstance(value, str) else value

    def arguments(self, tool: str) -> dict[str, Any]:
        pick: dict[str, Callable[[], Any]] = {
            "read": lambda: {"path": self.path(), "offset": self.number(), "limit": self.number()},
            "bash": lambda: {"command": self.command(), "timeout": self.rng.choice([0.5, 2, None, "x", -1])},
            "edit": lambda: {"path": self.path(), "edits": [
                {"oldText": self.rng.choice(["alpha", "line", "", "\xff", self.text(6)]), "newText": self.value()}
                for _ in range(self.rng.randrange(3))] if self.rng.random() < 0.7 else self.value(),
                "oldText": self.rng.choice(["beta", self.text(4)]), "newText": self.value()},
            "write": lambda: {"path": self.path(), "content": self.value()},
            "grep": lambda: {"pattern": self.rng.choice(["line", "(", "\\", "a|b", "", self.text(8)]),
                             "path": self.path(), "glob": self.rng.choice(["*", "**/*", "[", "{a,b", None]),
                             "ignoreCase": self.value(), "literal": self.value(), "context": self.number(),
                             "limit": self.number()},
            "find": lambda: {"pattern": self.rng.choice(["*", "**/*", "*.txt", "[", self.text(6)]),
                             "path": self.path(), "limit": self.number()},
            "ls": lambda: {"path": self.path(), "limit": self.number()},
        }
        args = {k: v for k, v in pick[tool]().items() if v is not None and self.rng.random() < 0.85}
        if self.rng.random() < 0.1:
            args[self.text(6)] = self.value()  # an unknown parameter
        return args


def raw_json(args: dict[str, Any]) -> str:
    """The arguments as a model would stream them: ``\\ud800`` escapes, bare ``NaN`` / ``Infinity``."""
    return json.dumps(args, ensure_ascii=True, allow_nan=True)


def make_sandbox(root: Path) -> None:
    (root / "text.txt").write_text("alpha line\nbeta line\ngamma ünïcode line\n" * 3)
    (root / "bad.bin").write_bytes(b"ok line\n\xff\xfe\x80 broken \xc3(\nline\n")
    (root / "dir").mkdir()
    (root / "dir" / "inner.txt").write_text("inner line\n")
    (root / "loop").symlink_to("loop")
    (root / "cycle").symlink_to(".")
    os.mkfifo(root / "fifo")


def script(tools: list[str], count: int, seed: int) -> list[ToolUse]:
    hostile = Hostile(seed)
    order = [tool for _ in range(count) for tool in tools]
    return [ToolUse(tool, raw_arguments=raw_json(hostile.arguments(tool)), id=f"call_{seed}_{n}")
            for n, tool in enumerate(order)]


def serve(pi: PiRunner, calls: list[ToolUse]) -> dict[str, str]:
    """Run one ``pi -p`` session over ``calls``; returns call id -> result text, checked for the basics."""
    replies = [Reply(tool_calls=list(calls[i:i + PER_TURN]), chunk_size=1 << 20)
               for i in range(0, len(calls), PER_TURN)]
    pi.server.add(*replies, Reply(text="fuzz done"))
    done = pi.run("-p", "fuzz the tools", timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.endswith("fuzz done\n"), done.stdout[-500:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    results: dict[str, str] = {}
    for path in pi.session_files():
        for line in path.read_text(encoding="utf-8").split("\n"):  # not splitlines(): U+2028 stays in a line
            if not line:
                continue
            entry = json.loads(line)
            message = entry.get("message") or {}
            if message.get("role") == "toolResult":
                assert message["toolCallId"] not in results, f"two results for {message['toolCallId']}"
                results[message["toolCallId"]] = "".join(c.get("text", "") for c in message["content"])
    return results


def check(calls: list[ToolUse], results: dict[str, str]) -> None:
    missing = [c.id for c in calls if c.id not in results]
    assert not missing, f"{len(missing)} calls without a result, e.g. {missing[:3]}"
    leaks = [(c.name, c.raw_arguments, results[c.id][:300]) for c in calls
             if RAW_EXCEPTION.search(results[c.id] or "")]
    assert not leaks, "raw exception texts reached the model:\n" + "\n".join(map(repr, leaks[:10]))


@pytest.fixture
def fuzz_pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, FAST_WIRE) as runner:
        make_sandbox(runner.cwd)
        runner.settings("retry = { enabled = false }\n")
        yield runner


def test_every_tool_is_fuzzed() -> None:
    from .harness import BUILTIN

    assert sorted(TOOLS) == sorted(BUILTIN)


# Cases that leaked a raw exception text once (issue 17 item 11): always in the fast tier.
REGRESSIONS = [
    ("bash", '{"command": "printf %s a\\u0000b"}'),
    ("read", '{"path": "a\\u0000b"}'),
    ("write", '{"path": "x\\u0000", "content": "c"}'),
    ("grep", '{"pattern": "a\\u0000b"}'),
    ("grep", '{"pattern": "a", "glob": "*\\u0000"}'),
    ("ls", '{"path": "\\u0000"}'),
    ("read", '{"path": "text.txt", "offset": NaN, "limit": Infinity}'),
    ("bash", '{"command": "echo hi", "timeout": -Infinity}'),
    ("grep", '{"pattern": "line", "path": "fifo"}'),
]


def test_fuzz_sample_through_the_cli(fuzz_pi: PiRunner) -> None:
    """The fast tier: a deterministic sample of every tool, and the known regressions, in one pi process."""
    calls = script(TOOLS, FAST_CASES, seed=17)
    calls += [ToolUse(name, raw_arguments=raw, id=f"regression_{n}") for n, (name, raw) in enumerate(REGRESSIONS)]
    check(calls, serve(fuzz_pi, calls))


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("tool", TOOLS)
def test_fuzz_a_thousand_cases_per_tool_through_the_cli(tool: str, tmp_path: Path) -> None:
    total = 0
    for batch in range(SLOW_CASES // BATCH):
        with pi_runner(tmp_path / f"batch{batch}", FAST_WIRE) as pi:
            make_sandbox(pi.cwd)
            pi.settings("retry = { enabled = false }\n")
            calls = script([tool], BATCH, seed=1000 + batch)
            check(calls, serve(pi, calls))
            total += len(calls)
    assert total >= SLOW_CASES
