"""Bad input on the wire gets a JSON-RPC error and the server goes on serving: a line that is not JSON, JSON
that is not a request, an unknown method, wrong parameters, an unknown session. Nothing but JSON-RPC reaches
stdout, and never a traceback."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from acp import PROTOCOL_VERSION

from pi_core.testing.fake_server import Reply
from tests.acp.harness import PI, AcpEnv

LINES: list[tuple[str, int | None]] = [  # what the client sends, and the error code it gets back (None: a result)
    ("this is not json", -32700),
    ("[1, 2, 3]", -32600),
    ('{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    ('{"jsonrpc": "2.0", "id": 2, "method": "nope/what", "params": {}}', -32601),
    ('{"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": 5}}', -32602),
    ('{"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}',
     -32602),
    ('{"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "gone", "prompt": []}}',
     -32002),
    ('{"jsonrpc": "2.0", "id": 6, "method": "session/set_mode", "params": {"sessionId": "gone", "modeId": "x"}}',
     -32002),
    ('{"jsonrpc": "2.0", "id": 7, "method": "_pi/unknown", "params": {}}', -32601),
    ('{"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "gone"}}', None),  # no answer
    ("\xff\xfe", -32700),
]


def _exchange(acp_env: AcpEnv, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    text = "\n".join(lines) + "\n"
    done = subprocess.run([*PI, "--mode", "acp"], cwd=acp_env.cwd, env=acp_env.env(), input=text.encode(
        "utf-8", "surrogateescape"), capture_output=True, timeout=60, check=False)
    out = done.stdout.decode("utf-8")
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in out.splitlines()], done.stderr.decode()


def test_bad_requests_get_errors_and_the_server_keeps_serving(acp_env: AcpEnv) -> None:
    initialize = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize",
                             "params": {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {}}})
    new = json.dumps({"jsonrpc": "2.0", "id": "new", "method": "session/new",
                      "params": {"cwd": str(acp_env.cwd), "mcpServers": []}})
    answers, stderr = _exchange(acp_env, [initialize, *(line for line, _code in LINES), new])

    assert "Traceback" not in json.dumps(answers)
    by_id = {a.get("id"): a for a in answers if "id" in a and a.get("id") is not None}
    assert by_id["init"]["result"]["protocolVersion"] == PROTOCOL_VERSION
    assert by_id["new"]["result"]["sessionId"]  # after all that, a session still opens
    unnamed = [a["error"]["code"] for a in answers if "error" in a and a.get("id") is None]
    assert unnamed == [-32700, -32600, -32700]
    for request_id, (_line, code) in enumerate(LINES[2:9], start=1):
        error = by_id[request_id]["error"]
        assert error["code"] == code, (request_id, error)
        assert error["message"]
    assert "relative/dir" in json.dumps(by_id[4]["error"])
    assert "Unknown session gone" in by_id[5]["error"]["message"]
    assert "Traceback" not in stderr  # nothing failed inside pi either


def _answer(process: subprocess.Popen[bytes], request: dict[str, Any]) -> dict[str, Any]:
    """Send one request on the raw pipe and read lines until its answer (updates in between are skipped)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(request) + "\n").encode("utf-8", "surrogatepass"))
    process.stdin.flush()
    while line := process.stdout.readline():
        message = json.loads(line)
        assert "Traceback" not in line.decode("utf-8", "replace")
        if message.get("id") == request["id"]:
            return message  # type: ignore[no-any-return]
    raise AssertionError(f"pi closed stdout before answering {request['method']}")


def test_a_lone_surrogate_and_a_huge_prompt_are_handled(acp_env: AcpEnv) -> None:
    acp_env.server.add(Reply(text="first"), Reply(text="second"))
    process = subprocess.Popen([*PI, "--mode", "acp"], cwd=acp_env.cwd, env=acp_env.env(), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _answer(process, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": PROTOCOL_VERSION}})
        new = _answer(process, {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                                "params": {"cwd": str(acp_env.cwd), "mcpServers": []}})
        sid = new["result"]["sessionId"]
        for request_id, text in ((2, "bad \ud800 half"), (3, "x" * 200_000)):
            answer = _answer(process, {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": {
                "sessionId": sid, "prompt": [{"type": "text", "text": text}]}})
            assert answer["result"]["stopReason"] == "end_turn", answer
    finally:
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and "Traceback" not in err.decode()
    users = [e["message"] for e in acp_env.entries() if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(users) == 2 and len(json.dumps(users[1])) > 200_000
