"""Session flags through the real ``pi`` command (docs/cli.md#session-flags)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner


def session_files(pi: PiRunner) -> list[Path]:
    return sorted((pi.home / "sessions").rglob("*.jsonl"))


def test_no_session_writes_nothing(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="ok"))
    assert pi_anthropic.run("--no-session", "-p", "hi").returncode == 0
    assert session_files(pi_anthropic) == []


def test_session_by_id_prefix_fork_and_export(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    pi.server.add(Reply(text="first"), Reply(text="second"), Reply(text="forked"))
    assert pi.run("-p", "one").returncode == 0
    [original] = session_files(pi)
    header = json.loads(original.read_text().splitlines()[0])
    assert header["type"] == "session" and header["version"] == 3
    result = pi.run("--session", header["id"][:8], "-p", "two")
    assert result.returncode == 0, result.stderr
    assert [m["role"] for m in pi.server.requests[1].body["messages"]] == ["user", "assistant", "user"]

    result = pi.run("--fork", header["id"][:8], "-p", "three")
    assert result.returncode == 0, result.stderr
    files = session_files(pi)
    assert len(files) == 2
    assert len(pi.server.requests[2].body["messages"]) == 5  # the whole history came along
    assert original.read_text().count("\n") < max(f.read_text().count("\n") for f in files)

    out = pi.cwd / "page.html"
    result = pi.run("--export", str(original), str(out))
    assert result.returncode == 0, result.stderr
    assert f"Exported to: {out}" in result.stdout
    assert "second" in out.read_text()


def test_unknown_session_and_conflicting_fork(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("--session", "deadbeef", "-p", "x")
    assert result.returncode == 1 and "No session found matching 'deadbeef'" in result.stderr
    result = pi_anthropic.run("--fork", "abc", "--no-session", "-p", "x")
    assert result.returncode == 1 and "--fork cannot be combined with --no-session" in result.stderr


def test_resume_without_terminal_is_a_clear_error(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("-r", "-p", "x")
    assert result.returncode == 1
    assert "terminal" in result.stderr and "Traceback" not in result.stderr
