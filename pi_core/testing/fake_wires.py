"""Render one wire-neutral scripted reply as the SSE frames (or error body) of each vendor API.

Used by ``fake_server``. Every renderer returns a ``Rendering``: the frames in order, plus how many of
them are the terminal frames (stop reason, usage, ``[DONE]``), so faults placed "after the content"
land in the same spot on every wire. Event names and payload shapes follow the vendors' documented
streaming formats closely enough that the official SDKs parse them.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.testing.fake_script import Reply, ToolUse

WIRES = ("anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai")


@dataclass
class Rendering:
    frames: list[bytes]
    tail: int  # number of terminal frames at the end of ``frames``


_SURROGATE = re.compile("[\ud800-\udfff]")


def _j(data: Any) -> str:
    """Compact JSON as the vendors send it: UTF-8, but a lone surrogate (a scripted hostile argument)
    goes out as its ``\\uXXXX`` escape, which is how a real API would encode it."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {_j(data)}\n\n".encode()


def _data(data: Any, sep: str = "\n\n") -> bytes:
    return f"data: {_j(data)}{sep}".encode()


def chunks(value: str | list[str], size: int) -> list[str]:
    """Split a string into ``size``-character deltas; a list is taken as the explicit deltas."""
    if isinstance(value, list):
        return [piece for piece in value if piece]
    size = max(1, size)
    return [value[i:i + size] for i in range(0, len(value), size)]


def _joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


# --- HTTP error bodies ----------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          500: "api_error", 529: "overloaded_error"}
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
DEFAULT_ERROR_MESSAGES = {400: "Bad request", 401: "Invalid API key", 404: "Not found", 413: "Request too large",
                          429: "Rate limit exceeded", 500: "Internal server error", 502: "Bad gateway",
                          503: "Service unavailable", 529: "Overloaded"}


def error_body(wire: str, status: int, message: str, error_type: str | None) -> dict[str, Any]:  # open: a provider's JSON request or response body
    """The JSON body a vendor sends with an HTTP error status."""
    if wire == "anthropic-messages":
        kind = error_type or _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if wire == "bedrock-converse-stream":
        return {"message": message}
    if wire == "google-generative-ai":
        return {"error": {"code": status, "message": message, "status": error_type or _GOOGLE_STATUS.get(status, "UNKNOWN")}}
    kind = error_type or ("rate_limit_exceeded" if status == 429 else "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def stream_error_frame(wire: str, message: str, error_type: str, seq: int) -> bytes:
    """An in-band error event sent on an already-open stream (HTTP status stays 200)."""
    if wire == "anthropic-messages":
        return _event("error", {"type": "error", "error": {"type": error_type, "message": message}})
    if wire == "bedrock-converse-stream":
        return bedrock_exception(error_type, message)
    if wire == "pi-messages":
        return _data({"type": "error", "reason": "error", "errorMessage": message, "usage": {}})
    if wire in ("openai-completions", "mistral-conversations"):
        return _data({"error": {"message": message, "type": error_type, "param": None, "code": error_type}})
    if wire in ("openai-responses", "openai-codex-responses"):
        return _event("error", {"type": "error", "code": error_type, "message": message, "param": None,
                                "sequence_number": seq})
    return _data({"error": {"code": 500, "message": message, "status": error_type}}, "\r\n\r\n")


def malformed_frame(wire: str) -> bytes:
    """An SSE frame whose data is cut-off JSON."""
    if wire in ("anthropic-messages", "openai-responses", "openai-codex-responses"):
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"ty\n\n'
    return b'data: {"id": "broken", "choices": [{"delta": {"content": "x\n\n'


# --- stop reasons ---------------------------------------------------------------------------------

_STOP = {
    "anthropic-messages": {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"},
    "openai-completions": {"stop": "stop", "length": "length", "toolUse": "tool_calls"},
    "google-generative-ai": {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP"},
}


def wire_stop_reason(wire: str, reply: Reply) -> str:
    reason = reply.effective_stop_reason()
    return _STOP.get(wire, {}).get(reason, reason)


# --- Anthropic Messages ---------------------------------------------------------------------------


def render_anthropic(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    from pi_core.testing.fake_script import RedactedThinking, Text, Thinking, ToolUse

    frames = [_event("message_start", {"type": "message_start", "message": {
        "id": reply.response_id or f"msg_fake_{n}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "cache_creation_input_tokens": reply.cache_write_tokens,
                  "cache_read_input_tokens": reply.cache_read_tokens, "output_tokens": 1}}})]
    frames.append(_event("ping", {"type": "ping"}))
    for index, block in enumerate(reply.content_blocks()):
        def delta(payload: dict[str, Any], i: int = index) -> bytes:
            return _event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": payload})

        if isinstance(block, Text):
            start: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [delta({"type": "text_delta", "text": p}) for p in chunks(block.text, reply.chunk_size)]
        elif isinstance(block, Thinking):
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [delta({"type": "thinking_delta", "thinking": p}) for p in chunks(block.thinking, reply.chunk_size)]
            if block.signature:
                deltas.append(delta({"type": "signature_delta", "signature": block.signature}))
        elif isinstance(block, RedactedThinking):
            start, deltas = {"type": "redacted_thinking", "data": block.data}, []
        else:
            assert isinstance(block, ToolUse)
            start = {"type": "tool_use", "id": block.id or f"toolu_fake_{n}_{index}", "name": block.name, "input": {}}
            deltas = [delta({"type": "input_json_delta", "partial_json": p})
                      for p in chunks(block.arguments_json(), reply.chunk_size)]
        frames.append(_event("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        frames.extend(deltas)
        frames.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    frames.append(_event("message_delta", {"type": "message_delta",
                                           "delta": {"stop_reason": wire_stop_reason("anthropic-messages", reply),
                                                     "stop_sequence": None},
                                           "usage": {"output_tokens": reply.output_tokens}}))
    frames.append(_event("message_stop", {"type": "message_stop"}))
    return Rendering(frames, 2)


# --- OpenAI Chat Completions ----------------------------------------------------------------------


def _chat_deltas(reply: Reply, chunk: Callable[[dict[str, Any]], bytes], thinking: Callable[[str], dict[str, Any]],
                 tool_deltas: Callable[[int, int, ToolUse], list[dict[str, Any]]]) -> list[bytes]:
    """A Chat Completions stream's delta chunks (OpenAI's and Mistral's): the assistant role, then each block's
    pieces; ``thinking`` and ``tool_deltas`` (tool index, block index, call) write what the two wires write
    differently. Redacted thinking has no form on either wire."""
    from pi_core.testing.fake_script import Text, Thinking, ToolUse

    frames = [chunk({"role": "assistant", "content": ""})]
    tool_index = 0
    for index, block in enumerate(reply.content_blocks()):
        if isinstance(block, Text):
            frames.extend(chunk({"content": p}) for p in chunks(block.text, reply.chunk_size))
        elif isinstance(block, Thinking):
            frames.extend(chunk(thinking(p)) for p in chunks(block.thinking, reply.chunk_size))
        elif isinstance(block, ToolUse):
            frames.extend(chunk({"tool_calls": [delta]}) for delta in tool_deltas(tool_index, index, block))
            tool_index += 1
    return frames


def render_openai_completions(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    base = {"id": reply.response_id or f"chatcmpl-fake-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model, "system_fingerprint": None}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _data({**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    def tool_deltas(tool_index: int, index: int, block: ToolUse) -> list[dict[str, Any]]:
        opening = {"index": tool_index, "id": block.id or f"call_fake_{n}_{index}", "type": "function",
                   "function": {"name": block.name, "arguments": ""}}
        return [opening, *({"index": tool_index, "function": {"arguments": p}}
                           for p in chunks(block.arguments_json(), reply.chunk_size))]

    frames = _chat_deltas(reply, chunk, lambda p: {"reasoning_content": p}, tool_deltas)
    tail = [chunk({}, wire_stop_reason("openai-completions", reply))]
    if (body.get("stream_options") or {}).get("include_usage"):
        read, write = reply.cache_read_tokens, reply.cache_write_tokens
        prompt = reply.input_tokens + read + write
        details: dict[str, Any] = {"cached_tokens": read + write if write else read}
        if write:
            details["cache_write_tokens"] = write
        tail.append(_data({**base, "choices": [], "usage": {
            "prompt_tokens": prompt, "completion_tokens": reply.output_tokens,
            "total_tokens": prompt + reply.output_tokens, "prompt_tokens_details": details}}))
    tail.append(b"data: [DONE]\n\n")
    return Rendering(frames + tail, len(tail))


# --- OpenAI Responses -----------------------------------------------------------------------------


def render_openai_responses(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    from pi_core.testing.fake_script import RedactedThinking, Text, Thinking, ToolUse

    seq = 0
    frames: list[bytes] = []

    def emit(name: str, payload: dict[str, Any]) -> None:
        nonlocal seq
        frames.append(_event(name, {"type": name, "sequence_number": seq, **payload}))
        seq += 1

    response: dict[str, Any] = {"id": reply.response_id or f"resp_fake_{n}", "object": "response",
                                "created_at": int(time.time()), "status": "in_progress", "model": model,
                                "output": [], "usage": None, "error": None, "incomplete_details": None}
    emit("response.created", {"response": dict(response)})
    emit("response.in_progress", {"response": dict(response)})
    output: list[dict[str, Any]] = []
    for index, block in enumerate(reply.content_blocks()):
        if isinstance(block, RedactedThinking):
            continue
        oi = len(output)
        if isinstance(block, Thinking):
            item_id, text = f"rs_fake_{n}_{index}", _joined(block.thinking)
            emit("response.output_item.added", {"output_index": oi, "item": {"type": "reasoning", "id": item_id, "summary": []}})
            emit("response.reasoning_summary_part.added", {"item_id": item_id, "output_index": oi, "summary_index": 0,
                                                            "part": {"type": "summary_text", "text": ""}})
            for p in chunks(block.thinking, reply.chunk_size):
                emit("response.reasoning_summary_text.delta", {"item_id": item_id, "output_index": oi,
                                                                "summary_index": 0, "delta": p})
            emit("response.reasoning_summary_text.done", {"item_id": item_id, "output_index": oi, "summary_index": 0, "text": text})
            emit("response.reasoning_summary_part.done", {"item_id": item_id, "output_index": oi, "summary_index": 0,
                                                           "part": {"type": "summary_text", "text": text}})
            item = {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": text}],
                    "encrypted_content": block.signature}
        elif isinstance(block, Text):
            item_id, text = f"msg_fake_{n}_{index}", _joined(block.text)
            emit("response.output_item.added", {"output_index": oi, "item": {
                "type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}})
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", {"item_id": item_id, "output_index": oi, "content_index": 0, "part": part})
            for p in chunks(block.text, reply.chunk_size):
                emit("response.output_text.delta", {"item_id": item_id, "output_index": oi, "content_index": 0,
                                                     "delta": p, "logprobs": []})
            emit("response.output_text.done", {"item_id": item_id, "output_index": oi, "content_index": 0,
                                                "text": text, "logprobs": []})
            done_part: dict[str, Any] = {"type": "output_text", "text": text, "annotations": []}
            emit("response.content_part.done", {"item_id": item_id, "output_index": oi, "content_index": 0, "part": done_part})
            item = {"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [done_part]}
        else:
            assert isinstance(block, ToolUse)
            item_id, args = f"fc_fake_{n}_{index}", block.arguments_json()
            call_id = block.id or f"call_fake_{n}_{index}"
            emit("response.output_item.added", {"output_index": oi, "item": {
                "type": "function_call", "id": item_id, "call_id": call_id, "name": block.name,
                "arguments": "", "status": "in_progress"}})
            for p in chunks(args, reply.chunk_size):
                emit("response.function_call_arguments.delta", {"item_id": item_id, "output_index": oi, "delta": p})
            emit("response.function_call_arguments.done", {"item_id": item_id, "output_index": oi, "arguments": args})
            item = {"type": "function_call", "id": item_id, "call_id": call_id, "name": block.name,
                    "arguments": args, "status": "completed"}
        emit("response.output_item.done", {"output_index": oi, "item": item})
        output.append(item)
    reason = reply.effective_stop_reason()
    read = reply.cache_read_tokens
    usage = {"input_tokens": reply.input_tokens + read, "input_tokens_details": {"cached_tokens": read},
             "output_tokens": reply.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": reply.input_tokens + read + reply.output_tokens}
    final = {**response, "output": output, "usage": usage}
    if reason == "length":
        emit("response.incomplete", {"response": {**final, "status": "incomplete",
                                                  "incomplete_details": {"reason": "max_output_tokens"}}})
    elif reason in ("stop", "toolUse"):
        emit("response.completed", {"response": {**final, "status": "completed"}})
    else:  # a raw status such as "failed" or "cancelled"
        emit(f"response.{reason}", {"response": {**final, "status": reason}})
    return Rendering(frames, 1)


# --- Google Generative AI -------------------------------------------------------------------------


def render_google(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    from pi_core.testing.fake_script import RedactedThinking, Text, Thinking, ToolUse

    def chunk(parts: list[dict[str, Any]], finish: str | None = None, usage: bool = False) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        data: dict[str, Any] = {"candidates": [candidate], "modelVersion": model,
                                "responseId": reply.response_id or f"resp_fake_{n}"}
        if usage:
            read = reply.cache_read_tokens
            data["usageMetadata"] = {"promptTokenCount": reply.input_tokens + read, "cachedContentTokenCount": read,
                                     "candidatesTokenCount": reply.output_tokens,
                                     "totalTokenCount": reply.input_tokens + read + reply.output_tokens}
        return _data(data, "\r\n\r\n")

    frames: list[bytes] = []
    for index, block in enumerate(reply.content_blocks()):
        if isinstance(block, Text):
            frames.extend(chunk([{"text": p}]) for p in chunks(block.text, reply.chunk_size))
        elif isinstance(block, Thinking):
            pieces = chunks(block.thinking, reply.chunk_size)
            for i, p in enumerate(pieces):
                part: dict[str, Any] = {"text": p, "thought": True}
                if block.signature and i == len(pieces) - 1:
                    part["thoughtSignature"] = block.signature
                frames.append(chunk([part]))
        elif isinstance(block, RedactedThinking):
            continue
        else:
            assert isinstance(block, ToolUse)
            call: dict[str, Any] = {"name": block.name, "args": block.arguments_object()}
            if block.id:
                call["id"] = block.id
            frames.append(chunk([{"functionCall": call}]))
    frames.append(chunk([], wire_stop_reason("google-generative-ai", reply), usage=True))
    return Rendering(frames, 1)


def render_mistral(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    """Mistral's chat stream: thinking as ``thinking`` content chunks, 9-character tool call ids, usage on
    the chunk that carries the finish reason."""
    base = {"id": reply.response_id or f"mistral-fake-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
        data: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage is not None:
            data["usage"] = usage
        return _data(data)

    def tool_deltas(tool_index: int, index: int, block: ToolUse) -> list[dict[str, Any]]:
        return [{"index": tool_index, "id": block.id or f"T{n:04d}{index:04d}", "type": "function",
                 "function": {"name": block.name, "arguments": block.arguments_json()}}]

    def thinking(piece: str) -> dict[str, Any]:
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}

    frames = _chat_deltas(reply, chunk, thinking, tool_deltas)
    read = reply.cache_read_tokens
    prompt = reply.input_tokens + read
    usage = {"prompt_tokens": prompt, "completion_tokens": reply.output_tokens,
             "total_tokens": prompt + reply.output_tokens, "prompt_tokens_details": {"cached_tokens": read}}
    tail = [chunk({}, wire_stop_reason("openai-completions", reply), usage), b"data: [DONE]\n\n"]
    return Rendering(frames + tail, len(tail))


def render_pi_messages(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    """Pi's own protocol (Radius): each frame's data is one of Pi's assistant-message events."""
    from pi_core.testing.fake_script import RedactedThinking, Text, Thinking, ToolUse

    frames = [_data({"type": "start"})]
    index = 0
    for block in reply.content_blocks():
        if isinstance(block, RedactedThinking):
            continue
        if isinstance(block, Text):
            frames.append(_data({"type": "text_start", "contentIndex": index}))
            frames.extend(_data({"type": "text_delta", "contentIndex": index, "delta": p})
                          for p in chunks(block.text, reply.chunk_size))
            frames.append(_data({"type": "text_end", "contentIndex": index, "content": _joined(block.text)}))
        elif isinstance(block, Thinking):
            frames.append(_data({"type": "thinking_start", "contentIndex": index}))
            frames.extend(_data({"type": "thinking_delta", "contentIndex": index, "delta": p})
                          for p in chunks(block.thinking, reply.chunk_size))
            frames.append(_data({"type": "thinking_end", "contentIndex": index, "content": _joined(block.thinking),
                                 "contentSignature": block.signature}))
        else:
            assert isinstance(block, ToolUse)
            call_id = block.id or f"call_fake_{n}_{index}"
            frames.append(_data({"type": "toolcall_start", "contentIndex": index, "id": call_id, "toolName": block.name}))
            frames.extend(_data({"type": "toolcall_delta", "contentIndex": index, "delta": p})
                          for p in chunks(block.arguments_json(), reply.chunk_size))
            frames.append(_data({"type": "toolcall_end", "contentIndex": index, "toolCall": {
                "type": "toolCall", "id": call_id, "name": block.name, "arguments": block.arguments_object()}}))
        index += 1
    read = reply.cache_read_tokens
    usage = {"input": reply.input_tokens, "output": reply.output_tokens, "cacheRead": read, "cacheWrite": 0,
             "totalTokens": reply.input_tokens + read + reply.output_tokens,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    frames.append(_data({"type": "done", "reason": reply.effective_stop_reason(), "usage": usage,
                         "responseId": reply.response_id or f"pi_fake_{n}"}))
    return Rendering(frames, 1)


def event_stream_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One AWS event-stream message: prelude (total and header lengths, CRC), string headers, payload, CRC."""
    import struct
    import zlib

    head = b"".join(struct.pack("B", len(k)) + k.encode() + b"\x07" + struct.pack(">H", len(v.encode())) + v.encode()
                    for k, v in headers.items())
    prelude = struct.pack(">II", 16 + len(head) + len(payload), len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_event(name: str, data: dict[str, Any]) -> bytes:  # open: a provider's JSON request or response body
    return event_stream_message({":event-type": name, ":content-type": "application/json", ":message-type": "event"},
                                _j(data).encode())


def bedrock_exception(name: str, message: str) -> bytes:
    return event_stream_message({":exception-type": name, ":content-type": "application/json",
                                 ":message-type": "exception"}, _j({"message": message}).encode())


def render_bedrock(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    """Bedrock's ConverseStream answer: AWS event-stream messages (messageStart, contentBlock*, messageStop,
    metadata), not SSE."""
    from pi_core.testing.fake_script import RedactedThinking, Text, Thinking, ToolUse

    frames = [bedrock_event("messageStart", {"role": "assistant"})]
    for index, block in enumerate(reply.content_blocks()):
        def delta(payload: dict[str, Any], i: int = index) -> bytes:
            return bedrock_event("contentBlockDelta", {"contentBlockIndex": i, "delta": payload})

        if isinstance(block, Text):
            frames.extend(delta({"text": p}) for p in chunks(block.text, reply.chunk_size))
        elif isinstance(block, Thinking):
            frames.extend(delta({"reasoningContent": {"text": p}}) for p in chunks(block.thinking, reply.chunk_size))
            if block.signature:
                frames.append(delta({"reasoningContent": {"signature": block.signature}}))
        elif isinstance(block, RedactedThinking):
            import base64

            frames.append(delta({"reasoningContent": {"redactedContent": base64.b64encode(block.data.encode()).decode()}}))
        else:
            assert isinstance(block, ToolUse)
            frames.append(bedrock_event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": {
                "toolUseId": block.id or f"tooluse_fake_{n}_{index}", "name": block.name}}}))
            frames.extend(delta({"toolUse": {"input": p}}) for p in chunks(block.arguments_json(), reply.chunk_size))
        frames.append(bedrock_event("contentBlockStop", {"contentBlockIndex": index}))
    stop = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}.get(reply.effective_stop_reason(),
                                                                                  reply.effective_stop_reason())
    read, write = reply.cache_read_tokens, reply.cache_write_tokens
    tail = [bedrock_event("messageStop", {"stopReason": stop}),
            bedrock_event("metadata", {"usage": {"inputTokens": reply.input_tokens, "outputTokens": reply.output_tokens,
                                                 "totalTokens": reply.input_tokens + reply.output_tokens + read + write,
                                                 "cacheReadInputTokens": read, "cacheWriteInputTokens": write},
                                       "metrics": {"latencyMs": 1}})]
    return Rendering(frames + tail, len(tail))


def render_openai_codex(reply: Reply, n: int, model: str, body: dict[str, Any]) -> Rendering:  # open: a provider's JSON request or response body
    """The ChatGPT Codex endpoint: the Responses stream, ended by ``response.done`` as that backend does."""
    rendering = render_openai_responses(reply, n, model, body)
    last = rendering.frames[-1]
    if last.startswith(b"event: response.completed\n"):
        rendering.frames[-1] = last.replace(b"response.completed", b"response.done")
    return rendering


RENDERERS: dict[str, Callable[[Reply, int, str, dict[str, Any]], Rendering]] = {  # open: a provider's JSON request or response body
    "anthropic-messages": render_anthropic,
    "openai-completions": render_openai_completions,
    "openai-responses": render_openai_responses,
    "openai-codex-responses": render_openai_codex,
    "mistral-conversations": render_mistral,
    "pi-messages": render_pi_messages,
    "bedrock-converse-stream": render_bedrock,
    "google-generative-ai": render_google,
}
