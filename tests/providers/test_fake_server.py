"""The fake model server renders one script on every wire, as the vendors' own SDKs parse it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from pi_core.testing.fake_server import (
    FakeModelServer,
    RedactedThinking,
    Reply,
    Text,
    ToolUse,
    load_script,
    write_script,
)

SCRIPT = Reply(thinking="Plan it.", text="Hello there", tool_calls=[("read", {"path": "src/main.py", "limit": 20})],
               input_tokens=100, output_tokens=20, cache_read_tokens=30)


def run(coro):
    return asyncio.run(coro)


def test_anthropic_wire_through_the_sdk(pi_fake_server: FakeModelServer) -> None:
    import anthropic

    pi_fake_server.add(SCRIPT)

    async def go() -> list:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=pi_fake_server.url, max_retries=0)
        stream = await client.messages.create(model="claude-x", max_tokens=10, stream=True,
                                              messages=[{"role": "user", "content": "hi"}])
        return [event async for event in stream]

    events = run(go())
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    starts = [e.content_block.type for e in events if e.type == "content_block_start"]
    assert starts == ["thinking", "text", "tool_use"]
    json_parts = [e.delta.partial_json for e in events if e.type == "content_block_delta"
                  and e.delta.type == "input_json_delta"]
    assert len(json_parts) > 5
    assert json.loads("".join(json_parts)) == {"path": "src/main.py", "limit": 20}
    assert events[0].message.usage.input_tokens == 100
    assert events[0].message.usage.cache_read_input_tokens == 30
    assert events[-2].delta.stop_reason == "tool_use" and events[-2].usage.output_tokens == 20
    request = pi_fake_server.requests[0]
    assert (request.path, request.wire, request.body["model"]) == ("/v1/messages", "anthropic-messages", "claude-x")
    assert request.headers["content-type"] == "application/json"


def test_openai_chat_wire_through_the_sdk(pi_fake_server: FakeModelServer) -> None:
    import openai

    pi_fake_server.add(SCRIPT)

    async def go() -> list:
        client = openai.AsyncOpenAI(api_key="k", base_url=pi_fake_server.base_url_for("openai-completions"),
                                    max_retries=0)
        stream = await client.chat.completions.create(model="gpt-x", stream=True, stream_options={"include_usage": True},
                                                      messages=[{"role": "user", "content": "hi"}])
        return [chunk async for chunk in stream]

    chunks = run(go())
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Hello there"
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == "Plan it."
    calls = [tc for d in deltas for tc in (d.tool_calls or [])]
    assert calls[0].function.name == "read" and calls[0].id
    assert json.loads("".join(tc.function.arguments or "" for tc in calls)) == {"path": "src/main.py", "limit": 20}
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details.cached_tokens) == (130, 20, 30)


def test_openai_responses_wire_through_the_sdk(pi_fake_server: FakeModelServer) -> None:
    import openai

    pi_fake_server.add(SCRIPT, Reply(text="cut", stop_reason="length"))

    async def go() -> list:
        client = openai.AsyncOpenAI(api_key="k", base_url=pi_fake_server.url + "/v1", max_retries=0)
        first = [e async for e in await client.responses.create(model="gpt-x", input="hi", stream=True)]
        second = [e async for e in await client.responses.create(model="gpt-x", input="hi", stream=True)]
        return [first, second]

    events, cut = run(go())
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.reasoning_summary_text.delta") == "Plan it."
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Hello there"
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert json.loads(args) == {"path": "src/main.py", "limit": 20}
    done = events[-1].response
    assert done.usage.input_tokens == 130 and done.usage.input_tokens_details.cached_tokens == 30
    assert [item.type for item in done.output] == ["reasoning", "message", "function_call"]
    assert cut[-1].type == "response.incomplete"
    assert cut[-1].response.incomplete_details.reason == "max_output_tokens"


def test_google_wire(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(SCRIPT)
    url = pi_fake_server.base_url_for("google-generative-ai") + "/models/gemini-x:streamGenerateContent?alt=sse"
    response = httpx2.post(url, json={"contents": []})
    chunks = [json.loads(line[6:]) for line in response.text.split("\r\n\r\n") if line.startswith("data: ")]
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert "".join(p["text"] for p in parts if p.get("thought")) == "Plan it."
    assert [p["thoughtSignature"] for p in parts if "thoughtSignature" in p] == ["fake-thinking-signature"]
    assert "".join(p["text"] for p in parts if "text" in p and not p.get("thought")) == "Hello there"
    assert [p["functionCall"] for p in parts if "functionCall" in p] == [
        {"name": "read", "args": {"path": "src/main.py", "limit": 20}}]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] == 130
    request = pi_fake_server.requests[0]
    assert request.wire == "google-generative-ai" and request.query == {"alt": "sse"}


@pytest.mark.parametrize("api,needle", [
    ("anthropic-messages", '"type": "rate_limit_error"'),
    ("openai-completions", '"type": "rate_limit_exceeded"'),
    ("google-generative-ai", '"status": "RESOURCE_EXHAUSTED"'),
])
def test_http_errors_have_the_vendor_shape_and_headers(pi_fake_server: FakeModelServer, api: str, needle: str) -> None:
    pi_fake_server.add(Reply.rate_limited(retry_after=3))
    path = {"anthropic-messages": "/v1/messages", "openai-completions": "/v1/chat/completions",
            "google-generative-ai": "/v1beta/models/g:streamGenerateContent"}[api]
    response = httpx2.post(pi_fake_server.url + path, json={})
    assert response.status_code == 429
    assert response.headers["retry-after"] == "3"
    assert needle in response.text


def test_empty_queue_names_the_problem_and_says_not_to_retry(pi_fake_server: FakeModelServer) -> None:
    response = httpx2.post(pi_fake_server.url + "/v1/messages", json={"model": "m"})
    assert response.status_code == 500
    assert "no reply scripted" in response.text and "queue is empty" in response.text
    assert response.headers["x-should-retry"] == "false"


def test_unknown_path_is_404(pi_fake_server: FakeModelServer) -> None:
    response = httpx2.post(pi_fake_server.url + "/v2/elsewhere", json={})
    assert response.status_code == 404 and "unknown API path" in response.text


def test_disconnect_and_malformed_frames(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="abcdefgh", disconnect_after="content"),
                       Reply(text="x", malformed_sse_after=1), Reply(text="x", empty=True))
    url = pi_fake_server.url + "/v1/messages"
    with pytest.raises(httpx2.TransportError), httpx2.stream("POST", url, json={}) as response:
        for _ in response.iter_bytes():
            pass
    body = httpx2.post(url, json={}).text.split("\n\n")
    assert body[1].startswith("event: content_block_delta") and not body[1].rstrip().endswith("}")
    empty = httpx2.post(url, json={})
    assert empty.status_code == 200 and empty.text == ""


def test_in_band_stream_error_replaces_the_tail(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(text="hi", stream_error="overloaded_error", error_message="Overloaded"))
    text = httpx2.post(pi_fake_server.url + "/v1/messages", json={}).text
    assert text.rstrip().endswith('data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    assert "message_stop" not in text


def test_callable_replies_see_the_request(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(lambda request: Reply(text=f"you sent {request.body['model']}", chunk_size=100))
    text = httpx2.post(pi_fake_server.url + "/v1/chat/completions", json={"model": "abc"}).text
    assert "you sent abc" in text and pi_fake_server.pending == 0


def test_explicit_blocks_and_raw_arguments(pi_fake_server: FakeModelServer) -> None:
    pi_fake_server.add(Reply(blocks=[Text("a"), RedactedThinking("blob"), ToolUse("bash", raw_arguments='{"command": "ls')]))
    text = httpx2.post(pi_fake_server.url + "/v1/messages", json={}).text
    assert '"content_block":{"type":"redacted_thinking","data":"blob"}' in text
    assert text.index('"type":"text"') < text.index("redacted_thinking") < text.index('"type":"tool_use"')
    assert '"stop_reason":"tool_use"' in text


def test_script_json_round_trip(tmp_path: Path) -> None:
    replies = [SCRIPT, Reply.overloaded(), Reply(blocks=[Text(["a", "b"]), ToolUse("x", {"k": 1}, id="t1")]),
               Reply(text="s", stall_after=2, stall_s=0.5, chunk_delay=0.01)]
    path = write_script(tmp_path / "script.json", replies)
    loaded = load_script(path)
    assert loaded[0].content_blocks() == SCRIPT.content_blocks()
    assert loaded[1].status == 529 and loaded[1].error_type == "overloaded_error"
    assert loaded[2].blocks == replies[2].blocks
    assert (loaded[3].stall_after, loaded[3].stall_s, loaded[3].chunk_delay) == (2, 0.5, 0.01)
    with pytest.raises(ValueError, match="unknown reply field"):
        Reply.from_json({"txt": "typo"})


def test_standalone_process_serves_a_script_and_takes_more_replies(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", [Reply(text="from file", chunk_size=50)])
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "pi_core.testing.fake_server", "--script", str(script),
                             "--record", str(record)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert "from file" in httpx2.post(url + "/v1/messages", json={"model": "m"}).text
        added = httpx2.post(url + "/_fake/replies", json=[{"text": "added later", "chunk_size": 50}])
        assert added.json() == {"pending": 1}
        assert "added later" in httpx2.post(url + "/v1/chat/completions", json={"model": "m"}).text
        recorded = httpx2.get(url + "/_fake/requests").json()
        assert [r["path"] for r in recorded] == ["/v1/messages", "/v1/chat/completions"]
        assert len(record.read_text().splitlines()) == 2
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_raising_reply_callback_is_reported(pi_fake_server: FakeModelServer) -> None:
    def broken(request: object) -> Reply:
        raise KeyError("model")

    pi_fake_server.add(broken)
    response = httpx2.post(pi_fake_server.url + "/v1/messages", json={})
    assert response.status_code == 500 and "callback raised KeyError" in response.text
