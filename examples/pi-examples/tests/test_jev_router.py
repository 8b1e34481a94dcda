"""jev_router: the virtual model ``jev/auto`` through the real pi, routed to OpenAI Codex models on the fake
server's ``openai-codex-responses`` wire (a faked Codex sign-in)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_core.testing.fake_auth import ACCOUNT_ID, fake_jwt
from pi_core.testing.fake_server import FakeModelServer, Reply

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]


@pytest.fixture
def codex(tmp_path: Path) -> tuple[FakeModelServer, Path]:
    with FakeModelServer() as server:
        agent = tmp_path / "agent"
        agent.mkdir()
        token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}, "n": "1"})
        auth = agent / "auth.json"
        auth.write_text(json.dumps({"openai-codex": {"type": "oauth", "access": token, "refresh": "rt-unused",
                                                     "expires": int(time.time() * 1000) + 3_600_000,
                                                     "accountId": ACCOUNT_ID}}))
        auth.chmod(0o600)
        (agent / "models.json").write_text(json.dumps({"providers": {"openai-codex": {"baseUrl": server.url}}}))
        (agent / "settings.json").write_text(json.dumps({"localServers": False, "retry": {"enabled": False}}))
        (tmp_path / "project").mkdir()
        yield server, tmp_path


def pi(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN")) and k != "TMUX"}
    env.update(HOME=str(tmp_path), PI_CODING_AGENT_DIR=str(tmp_path / "agent"), PI_OFFLINE="1",
               PI_SKIP_VERSION_CHECK="1")
    return subprocess.run([*PI, "-e", "plugin:jev_router", *args], capture_output=True, text=True, check=False,
                          cwd=tmp_path / "project", env=env, stdin=subprocess.DEVNULL, timeout=60)


def test_the_virtual_model_is_listed(codex: tuple[FakeModelServer, Path]) -> None:
    _server, tmp_path = codex
    done = pi(tmp_path, "--list-models", "auto")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert any(row[:2] == ["jev", "auto"] for row in rows), done.stdout


def test_plans_then_implements_and_a_resumed_session_stays_in_implementation(
        codex: tuple[FakeModelServer, Path]) -> None:
    server, tmp_path = codex
    (tmp_path / "project" / "a.txt").write_text("alpha\n")
    server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]),
               Reply(tool_calls=[("edit", {"path": "a.txt", "edits": [{"oldText": "nope", "newText": "x"}]})]),
               Reply(tool_calls=[("write", {"path": "b.txt", "content": "beta\n"})]),
               Reply(text="done"))
    done = pi(tmp_path, "-p", "--model", "jev/auto", "--thinking", "high", "copy a.txt to b.txt")
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout
    assert (tmp_path / "project" / "b.txt").read_text() == "beta\n"
    sent = [r.body for r in server.requests]
    assert all(r.wire == "openai-codex-responses" for r in server.requests)
    # read and a failed edit keep planning on Terra; the request after the successful write goes to Luna
    assert [b["model"] for b in sent] == ["gpt-5.6-terra"] * 3 + ["gpt-5.6-luna"]
    assert all(b["reasoning"]["effort"] == "high" for b in sent)  # the thinking level passes through
    session = next((tmp_path / "agent" / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    states = [e["data"] for e in entries if e.get("customType") == "pi.virtual-model-state"]
    assert states == [{"provider": "jev", "modelId": "auto", "state": {"phase": "planning", "model": "gpt-5.6-terra"}},
                      {"provider": "jev", "modelId": "auto",
                       "state": {"phase": "implementation", "model": "gpt-5.6-luna"}}]
    answered = [e["message"]["model"] for e in entries if e.get("type") == "message"
                and e["message"]["role"] == "assistant"]
    assert answered == ["gpt-5.6-terra"] * 3 + ["gpt-5.6-luna"]  # assistant messages name the physical model

    server.add(Reply(text="still luna"))
    resumed = pi(tmp_path, "-c", "-p", "--model", "jev/auto", "one more thing")
    assert resumed.returncode == 0, resumed.stderr
    assert "still luna" in resumed.stdout
    assert server.requests[-1].body["model"] == "gpt-5.6-luna"


def test_a_new_session_starts_in_planning(codex: tuple[FakeModelServer, Path]) -> None:
    server, tmp_path = codex
    server.add(Reply(text="planned"), Reply(text="planned again"))
    assert pi(tmp_path, "-p", "--model", "jev/auto", "first").returncode == 0
    assert pi(tmp_path, "-p", "--model", "jev/auto", "second").returncode == 0
    assert [r.body["model"] for r in server.requests] == ["gpt-5.6-terra", "gpt-5.6-terra"]
