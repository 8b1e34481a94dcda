"""The Codex WebSocket transport (settings ``transport``, ``websocketConnectTimeoutMs``), end to end: ``pi``
with a stored Codex sign-in against the fake model server's WebSocket endpoint on ``/codex/responses``."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_auth import ACCOUNT_ID
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.runner import CLI
from tests.providers.pi16 import require_pi16, run_pi
from tests.providers.test_codex import signed_in

MODEL = ["--model", "openai-codex/gpt-5.6-sol"]


def settings(tmp_path: Path, **values: Any) -> None:
    path = tmp_path / "agent" / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}))


def kinds(body: dict[str, Any]) -> list[str]:
    return [item.get("type") or item.get("role") for item in body["input"]]



def recorded_closes(server: FakeModelServer, count: int) -> list[int | None]:
    """The server's close records once ``count`` are in: its socket thread notes a close after pi may have exited."""
    deadline = time.monotonic() + 10
    while len(server.websocket_closes) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.websocket_closes

def test_a_tool_run_goes_over_one_socket_and_continues_with_only_the_new_items(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, token = signed_in(tmp_path, pi_fake_server, None)
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="the file says alpha"))
    done = run_pi(["-p", *MODEL, "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the file says alpha" in done.stdout
    first, second = pi_fake_server.requests
    assert (first.method, first.socket, second.method, second.socket) == ("WS", 1, "WS", 1)
    assert pi_fake_server.websockets == pi_fake_server.websocket_upgrades == 1
    assert first.body["type"] == "response.create" and "previous_response_id" not in first.body
    assert kinds(first.body) == ["developer", "user"]
    assert second.body["previous_response_id"] == "resp_fake_1"
    assert kinds(second.body) == ["function_call_output"]  # the call itself the backend already has
    assert second.body["input"][0]["output"] == "alpha\n"
    headers = first.headers
    assert headers["openai-beta"] == "responses_websockets=2026-02-06" and headers["originator"] == "pi"
    assert headers["authorization"] == f"Bearer {token}" and headers["chatgpt-account-id"] == ACCOUNT_ID
    assert headers["session-id"] == headers["x-client-request-id"] == first.body["prompt_cache_key"]
    assert "accept" not in headers and "content-type" not in headers
    # -p closed its socket at the session's end (a close frame, not a dropped connection)
    assert recorded_closes(pi_fake_server, 1) == [1000]


def test_websocket_sends_the_whole_context_each_time_on_the_same_socket(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    settings(tmp_path, transport="websocket")
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="done"))
    done = run_pi(["-p", *MODEL, "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = pi_fake_server.requests
    assert (first.socket, second.socket) == (1, 1)
    assert "previous_response_id" not in second.body
    assert kinds(second.body) == ["developer", "user", "function_call", "function_call_output"]


def test_sse_never_opens_a_socket(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    settings(tmp_path, transport="sse")
    pi_fake_server.add(Reply(text="over sse"))
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "over sse" in done.stdout
    assert [r.method for r in pi_fake_server.requests] == ["POST"] and pi_fake_server.websocket_upgrades == 0
    assert pi_fake_server.requests[0].headers["openai-beta"] == "responses=experimental"


def test_a_refused_upgrade_falls_back_to_sse_for_the_rest_of_the_session(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    pi_fake_server.websocket_mode = "refuse"
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="answered over sse"))
    done = run_pi(["-p", *MODEL, "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "answered over sse" in done.stdout
    assert [r.method for r in pi_fake_server.requests] == ["POST", "POST"]
    assert pi_fake_server.websocket_upgrades == 1  # the second request did not try the socket again
    assert "Traceback" not in done.stderr


def test_the_connect_timeout_is_honoured(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    """An upgrade the server never answers: after ``websocketConnectTimeoutMs`` the request goes over SSE."""
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    settings(tmp_path, websocketConnectTimeoutMs=300)
    pi_fake_server.websocket_mode = "hang"
    pi_fake_server.add(Reply(text="after the timeout"))
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "after the timeout" in done.stdout
    [waited] = pi_fake_server.websocket_abandoned  # the client hung up on the upgrade itself
    assert 0.2 < waited < 10  # its 300 ms, not the default 15 s
    assert pi_fake_server.websocket_upgrades == 1 and [r.method for r in pi_fake_server.requests] == ["POST"]


def test_a_forgotten_continuation_goes_again_whole(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.forget_responses = 1
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="done"))
    done = run_pi(["-p", *MODEL, "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    first, refused, again = pi_fake_server.requests
    assert refused.body["previous_response_id"] == "resp_fake_1"
    assert "previous_response_id" not in again.body
    assert kinds(again.body) == ["developer", "user", "function_call", "function_call_output"]
    assert (first.socket, refused.socket, again.socket) == (1, 1, 2)  # the failed socket was closed


def test_the_connection_limit_before_the_answer_goes_again_on_a_fresh_socket(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    pi_fake_server.add(Reply(stream_error="websocket_connection_limit_reached", stream_error_after=0,
                             error_message="Responses websocket connection limit reached (60 minutes)"),
                       Reply(text="fresh socket"))
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "fresh socket" in done.stdout
    assert [(r.method, r.socket) for r in pi_fake_server.requests] == [("WS", 1), ("WS", 2)]


def test_an_old_socket_is_rotated_before_the_next_request(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    """The backend ends a socket at 60 minutes: one past ``max_age_s`` (45 minutes; shrunk here by a plugin
    file) is replaced, and the new socket gets the whole context."""
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    shrink = tmp_path / "shrink_age.py"
    shrink.write_text("from pi_plugins.openai_codex_responses.websocket import POOL\nPOOL.max_age_s = 0.0\n")
    (tmp_path / "a.txt").write_text("alpha\n")
    pi_fake_server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="done"))
    done = run_pi(["-p", "-e", str(shrink), *MODEL, "read a.txt"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    first, second = pi_fake_server.requests
    assert (first.socket, second.socket) == (1, 2)
    assert "previous_response_id" not in second.body
    assert kinds(second.body) == ["developer", "user", "function_call", "function_call_output"]


def test_a_socket_lost_mid_answer_is_an_error_not_a_silent_resend(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    pi_fake_server.add(Reply(text="partial answer that never ends", disconnect_after="content"))
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "WebSocket closed 1006" in done.stdout + done.stderr
    assert [r.method for r in pi_fake_server.requests] == ["WS"]
    assert "Traceback" not in done.stderr


def test_json_mode_runs_two_prompts_over_one_socket(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    pi_fake_server.add(Reply(text="one"), Reply(text="two"))
    done = run_pi(["--mode", "json", *MODEL, "first", "second"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    ends = [json.loads(line) for line in done.stdout.splitlines() if '"agent_end"' in line]
    assert len(ends) == 2
    first, second = pi_fake_server.requests
    assert (first.socket, second.socket) == (1, 1)
    assert second.body["previous_response_id"] == "resp_fake_1"
    assert kinds(second.body) == ["user"]
    assert recorded_closes(pi_fake_server, 1) == [1000]


def test_an_error_event_with_a_status_reads_as_over_sse(tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    resets = int(time.time()) + 30 * 60
    pi_fake_server.add(Reply.http_error(429, body={"error": {"type": "usage_limit_reached", "message": "limit",
                                                             "plan_type": "PRO", "resets_at": resets}}))
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "You have hit your ChatGPT usage limit (pro plan). Try again in ~" in done.stdout + done.stderr
    assert [r.method for r in pi_fake_server.requests] == ["WS"]  # the backend's answer: no SSE fallback


def test_pi_16_speaks_the_same_socket_protocol(tmp_path: Path) -> None:
    """Side by side: Pi 1.6.0 and pi run the same tool turn against the fake WebSocket endpoint; both open
    one socket with the same Codex headers and continue with only the tool's output."""
    pi16 = require_pi16()
    seen: dict[str, list[Any]] = {}
    for name in ("pi", "pi16"):
        with FakeModelServer() as server:
            env, _ = signed_in(tmp_path / name, server, None)
            work = tmp_path / name
            (work / "a.txt").write_text("alpha\n")
            server.add(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="the file says alpha"))
            command = [*CLI, "-p", *MODEL, "read a.txt"] if name == "pi" else \
                [str(pi16.node), str(pi16.cli), "-p", *MODEL, "read a.txt"]
            out = work / "stdout.txt"
            with out.open("w") as sink:
                process = subprocess.Popen(command, env=env, cwd=work, stdin=subprocess.DEVNULL, stdout=sink,
                                           stderr=subprocess.DEVNULL, text=True)
                try:
                    deadline = time.monotonic() + 60
                    while "the file says alpha" not in out.read_text():
                        assert time.monotonic() < deadline and process.poll() in (None, 0), out.read_text()
                        time.sleep(0.05)
                finally:
                    if name == "pi16":  # Pi 1.6.0 keeps -p running while its cached socket is open
                        process.kill()
                    process.wait(60)
            seen[name] = [server.websockets, *server.requests]
    for (ours_sockets, *ours), (theirs_sockets, *theirs) in [(seen["pi"], seen["pi16"])]:
        assert ours_sockets == theirs_sockets == 1
        for mine, pis in zip(ours, theirs, strict=True):
            assert (mine.method, mine.socket) == (pis.method, pis.socket) == ("WS", 1)
            for header in ("openai-beta", "originator", "chatgpt-account-id", "authorization"):
                assert mine.headers[header] == pis.headers[header], header
            assert mine.headers["session-id"] == mine.headers["x-client-request-id"]
            assert pis.headers["session-id"] == pis.headers["x-client-request-id"]
            assert mine.body["type"] == pis.body["type"] == "response.create"
        assert ours[1].body["previous_response_id"] == theirs[1].body["previous_response_id"] == "resp_fake_1"
        assert kinds(ours[1].body) == kinds(theirs[1].body) == ["function_call_output"]


def test_rpc_an_idle_socket_closes_and_the_next_prompt_opens_a_fresh_one(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    """A cached socket idle for ``idle_s`` (5 minutes; shrunk here by a plugin file) is closed; the next
    prompt of the RPC session opens another and sends the whole context on it."""
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    shrink = tmp_path / "shrink_idle.py"
    shrink.write_text("from pi_plugins.openai_codex_responses.websocket import POOL\nPOOL.idle_s = 0.3\n")
    pi_fake_server.add(Reply(text="one"), Reply(text="two"))
    with RpcClient(["-e", str(shrink), *MODEL], command=CLI, cwd=tmp_path, env=env) as client:
        client.prompt_and_wait("first", timeout=60)
        deadline = time.monotonic() + 30
        while not pi_fake_server.websocket_closes:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert pi_fake_server.websocket_closes == [1000]  # closed by pi, politely
        client.prompt_and_wait("second", timeout=60)
        client.close_stdin()
        assert client.wait(30) == 0
    first, second = pi_fake_server.requests
    assert (first.socket, second.socket) == (1, 2)
    assert "previous_response_id" not in second.body
    assert kinds(second.body) == ["developer", "user", "message", "user"]  # the first answer is an output message
    assert recorded_closes(pi_fake_server, 2) == [1000, 1000]


def test_a_message_that_is_not_json_is_the_backends_fault_not_a_reason_for_sse(
        tmp_path: Path, pi_fake_server: FakeModelServer) -> None:
    env, _ = signed_in(tmp_path, pi_fake_server, None)
    pi_fake_server.responder = Reply(text="never read", malformed_sse_after=0)  # every attempt (it is retried)
    done = run_pi(["-p", *MODEL, "hi"], env, tmp_path)
    assert done.returncode == 1
    assert "Invalid Codex WebSocket JSON" in done.stdout + done.stderr
    assert {r.method for r in pi_fake_server.requests} == {"WS"} and "Traceback" not in done.stderr
