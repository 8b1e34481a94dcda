"""pi leaves at once when the run is done (``os._exit`` after flushing), and nothing written is lost:
the session file is complete, stdout carries the whole answer, atexit handlers still run (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner

EXTENSION = """\
import atexit
from pathlib import Path

atexit.register(lambda: Path({marker!r}).write_text("atexit ran"))
"""


def test_exit_keeps_the_session_file_stdout_and_atexit_handlers(tmp_path: Path) -> None:
    marker = tmp_path / "atexit.txt"
    extension = tmp_path / "ext.py"
    extension.write_text(EXTENSION.format(marker=str(marker)))
    answer = "".join(f"line {i:06d} of the final answer\n" for i in range(20_000))  # ~600 KB through a pipe
    with pi_runner(tmp_path, "openai-completions") as pi:
        # Big deltas: the pipe and the exit are under test here, not SSE parsing.
        pi.server.add(Reply(tool_calls=[("bash", {"command": "echo from-the-tool"})]),
                      Reply(text=answer, chunk_size=16_384))
        done = pi.run("-e", str(extension), "-p", "go")
        assert done.returncode == 0, done.stderr
        assert done.stdout == answer + "\n"
        assert marker.read_text() == "atexit ran"
        [session] = pi.session_files()
        raw = session.read_text()
        assert raw.endswith("\n")
        entries = [json.loads(line) for line in raw.splitlines()]
        messages = [e["message"] for e in entries if e.get("type") == "message"]
        assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
        assert "from-the-tool" in json.dumps(messages[2]["content"])
        assert messages[-1]["content"][-1]["text"] == answer


def test_exit_code_of_a_failed_run_survives(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        pi.server.add(Reply.http_error(400, "nope"))
        done = pi.run("--no-session", "-p", "go")
        assert done.returncode == 1 and "nope" in done.stderr
