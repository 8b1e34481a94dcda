"""One Codex request: the Responses body Codex expects, its headers, its event and error quirks, over the
WebSocket transport (``websocket``) or SSE.

The ChatGPT subscription endpoint is ``{base}/codex/responses`` (base ``https://chatgpt.com/backend-api``).
It takes the sign-in's access token as ``Authorization: Bearer`` and the ChatGPT account it belongs to as
``chatgpt-account-id``; the stream is the Responses API's, except that it ends with ``response.done`` (or
``response.completed``/``response.incomplete``) and reports failures as ``error`` / ``response.failed`` events.
The ``transport`` setting picks the way there (as Pi): ``sse``; ``websocket`` (a socket kept per session,
the whole body each time); ``websocket-cached`` and ``auto`` (the default: also sends only the new items
with ``previous_response_id``). A socket that fails before the answer starts sends the request over SSE
instead, and that session stays on SSE. Pi compresses SSE bodies with zstd; pi sends them uncompressed,
which the endpoint accepts as well.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from pi_plugins._openai_common import cache_retention
from pi_plugins._streaming import StreamAborted, StreamRun, apply_payload_hook

# isort: split
from pi_plugins._streaming import new_builder, required_key, without_client_retries
from pi_plugins.openai_codex_responses import PROMPT_CACHE_KEY_MAX
from pi_plugins.openai_responses.convert import convert_input
from pi_plugins.openai_responses.streaming import EventReader

from pi_core.errors import ProviderError
from pi_core.llm.stream import UNKNOWN_ERROR_TEXT, MessageBuilder
from pi_core.llm.transport import SSEStream, WireRequest
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions, resolved
from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
ACCOUNT_HEADER = "chatgpt-account-id"
MIN_OUTPUT_TOKENS = 16  # the endpoint refuses less
_FINAL = ("response.done", "response.completed", "response.incomplete")
_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"})
THINKING_LEVEL_KEY = "providerThinkingLevel"  # Pi's field on an answer: the effort it was asked with
_LIMIT_CODES = ("usage_limit_reached", "usage_not_included", "rate_limit_exceeded")


CONNECTION_LIMIT = "websocket_connection_limit_reached"  # the backend's 60 minutes per socket
PREVIOUS_RESPONSE_NOT_FOUND = "previous_response_not_found"  # a continuation the backend forgot


class CodexError(ProviderError):
    """A failure the Codex stream itself reported (judged by its text for retries), with its code."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message, retryable=None)
        self.code = code


def codex_url(base_url: str) -> str:
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    return f"{base}/responses" if base.endswith("/codex") else f"{base}/codex/responses"


def requested_effort(model: Model, options: StreamOptions) -> str | None:
    """The effort word for the thinking level; off on a reasoning model is ``none`` (or the model's own word
    for off, None when the model takes no reasoning field then). None for a model without reasoning."""
    if not model.reasoning:
        return None
    level = clamp_thinking_level(model, options.reasoning or "off")
    level_map = model.thinking_level_map or {}
    if level == "off":
        return level_map.get("off", "none")
    return level_map.get(level) or level


def _configuration_update(effort: str) -> dict[str, Any]:
    return {"type": "configuration_update", "reasoning": {"effort": effort}}


def build_body(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The Codex CLI's request: stateless (``store: false``), encrypted reasoning carried in the history,
    low verbosity, every tool allowed in parallel; the session id as the prompt cache key.

    Models that change effort mid-conversation (``compat.supportsMidConvoEffort``) get a fixed
    ``reasoning.effort`` of ``medium`` and the real level as ``configuration_update`` items: one before each
    earlier answer of the same model (the level it was given) and one at the end, so switching the level
    does not invalidate the prompt cache."""
    effort = requested_effort(model, options)
    mid_convo = effort is not None and bool((model.compat or {}).get("supportsMidConvoEffort"))

    def before(message: AssistantMessage) -> list[dict[str, Any]]:
        level = (message.model_extra or {}).get(THINKING_LEVEL_KEY)
        same = (message.provider, message.api, message.model) == (model.provider, model.api, model.id)
        return [_configuration_update(level)] if same and isinstance(level, str) else []

    items = convert_input(model, context, before if mid_convo else None)
    if mid_convo and effort is not None:
        items.append(_configuration_update(effort))
    body: dict[str, Any] = {"model": model.id, "store": False, "stream": True, "input": items,
                            "text": {"verbosity": "low"}, "include": ["reasoning.encrypted_content"]}
    session = _cache_session(options)
    if session:
        body["prompt_cache_key"] = session
    body["tool_choice"] = options.tool_choice if options.tool_choice is not None else "auto"
    body["parallel_tool_calls"] = True
    max_tokens = base_max_tokens(model, options.max_tokens)
    if max_tokens and (model.compat or {}).get("supportsMaxOutputTokens") is not False:
        body["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [{"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
                          "strict": None} for t in context.tools]
    if model.reasoning and (effort is not None or mid_convo):
        body["reasoning"] = {"effort": "medium" if mid_convo else effort, "summary": "auto"}
    return body


def account_id(model: Model, api_key: str) -> str:
    """The sign-in's account (``to_auth`` puts it in the headers), else the access token's own claim."""
    from pi_plugins.oauth.openai_codex import account_id as from_token

    for name, value in (model.headers or {}).items():
        if name.lower() == ACCOUNT_HEADER and value:
            return value
    found = from_token(api_key)
    if not found:
        raise ProviderError("Failed to extract accountId from token", retryable=False)
    return found


def _cache_session(options: StreamOptions) -> str | None:
    """The session id the prompt cache, the headers and the socket cache go by (none when caching is off)."""
    session = options.session_id if cache_retention(options) != "none" else None
    return session[:PROMPT_CACHE_KEY_MAX] if session else None


def _base_headers(model: Model, options: StreamOptions, api_key: str, account: str) -> dict[str, str]:
    from pi_core import __version__

    headers: dict[str, str] = {"originator": "pi", "user-agent": f"pi/{__version__}"}
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    headers.update({"authorization": f"Bearer {api_key}", ACCOUNT_HEADER: account})
    return headers


def build_headers(model: Model, options: StreamOptions, api_key: str, account: str) -> dict[str, str]:
    headers = _base_headers(model, options, api_key, account)
    headers.update({"OpenAI-Beta": "responses=experimental", "accept": "text/event-stream",
                    "content-type": "application/json"})
    session = _cache_session(options)
    if session:
        headers["session-id"] = headers["x-client-request-id"] = session
    return headers


def websocket_headers(model: Model, options: StreamOptions, api_key: str, account: str) -> dict[str, str]:
    """The socket's upgrade request: the Codex headers, the WebSocket beta, and a request id (the session,
    else a fresh UUIDv7) as ``session-id``/``x-client-request-id``."""
    from pi_plugins.openai_codex_responses.websocket import OPENAI_BETA

    from pi_core.sessions.format import uuid7

    headers = {name: value for name, value in _base_headers(model, options, api_key, account).items()
               if name.lower() not in ("openai-beta", "accept", "content-type")}
    headers["OpenAI-Beta"] = OPENAI_BETA
    headers["session-id"] = headers["x-client-request-id"] = _cache_session(options) or uuid7()
    return headers


def status_text(status: int, body: str) -> str:
    """The endpoint's message; a usage limit as "You have hit your ChatGPT usage limit (plus plan). Try
    again in ~N min." (the plan and the reset time come from the error body)."""
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if not isinstance(error, dict):
        return body or f"{status} status code (no body)"
    code = str(error.get("code") or error.get("type") or "")
    friendly = None
    if status == 429 or any(limit in code.lower() for limit in _LIMIT_CODES):
        plan = f" ({str(error['plan_type']).lower()} plan)" if error.get("plan_type") else ""
        resets = error.get("resets_at")
        when = (f" Try again in ~{max(0, round((float(resets) * 1000 - time.time() * 1000) / 60000))} min."
                if isinstance(resets, (int, float)) else "")
        friendly = f"You have hit your ChatGPT usage limit{plan}.{when}"
    message = error.get("message")
    return friendly or (message if isinstance(message, str) and message else body)


def _event_error(event: dict[str, Any]) -> CodexError:
    error = event.get("error")
    nested: dict[str, Any] = error if isinstance(error, dict) else {}
    message = event.get("message") if isinstance(event.get("message"), str) else nested.get("message")
    code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
    status = event.get("status")
    if isinstance(status, int) and nested:  # the WebSocket's form of an HTTP error: worded as over SSE
        text = status_text(status, json.dumps({"error": nested}))
        return CodexError(text if text.startswith("You have hit") else f"Codex error: {text}",
                          code if isinstance(code, str) else None)
    return CodexError(f"Codex error: {message or code or json.dumps(event, separators=(',', ':'))}",
                      code if isinstance(code, str) else None)


def normalize(event: dict[str, Any]) -> dict[str, Any] | None:
    """Codex's events as the Responses reader knows them; raises on a reported failure."""
    kind = event.get("type")
    if kind == "error":
        raise _event_error(event)
    if kind == "response.failed":
        error = (event.get("response") or {}).get("error") or {}
        code = error.get("code")
        raise CodexError(error.get("message") or "Codex response failed", code if isinstance(code, str) else None)
    if kind in _FINAL:
        response = dict(event.get("response") or {})
        status = response.get("status")
        response["status"] = status if status in _STATUSES else None
        return {**event, "type": "response.completed", "response": response}
    return event if isinstance(kind, str) else None


def response_items(model: Model, message: AssistantMessage) -> list[dict[str, Any]]:
    """An answer as the input items the next request carries for it (what the backend already knows); not
    the placeholder output the converter gives a call that has no result yet."""
    return [item for item in convert_input(model, Context(messages=[message]))
            if item.get("type") != "function_call_output"]


async def _read(events: AsyncIterator[dict[str, Any]], builder: MessageBuilder, model: Model,
                options: StreamOptions, started: list[bool], *,
                observe: bool = False) -> AsyncIterator[AssistantMessageEvent]:
    """One answer's wire events into pi events; ``start`` before the first content (``started[0]`` set),
    ``done`` at the end. Raises on a failure the stream reported or an answer that never finished.
    ``observe``: hand each event to ``on_stream_event`` (the SSE transport does that itself)."""
    reader = EventReader(builder, model)
    finished = False
    async for raw in events:
        if observe and options.on_stream_event is not None:
            await resolved(options.on_stream_event(raw, model))
        event = normalize(raw)
        if event is None:
            continue
        if not started[0]:
            started[0] = True
            yield builder.start()
        for out in reader.feed(event):
            yield out
        if event["type"] == "response.completed":
            finished = True
            break
    if options.signal.aborted:
        raise StreamAborted()
    if not finished:
        raise CodexError("Codex stream ended without a stop reason")
    if reader.stop in ("error", "aborted"):
        raise CodexError(UNKNOWN_ERROR_TEXT)
    yield builder.done(reader.stop)


async def _sse_events(stream: SSEStream) -> AsyncIterator[dict[str, Any]]:
    async for sse in stream:
        data = sse.data.strip()
        if not data or data == "[DONE]":
            continue
        try:
            raw = json.loads(data)
        except ValueError as err:
            raise CodexError(f"Invalid Codex SSE JSON: {err}") from None
        if isinstance(raw, dict):
            if raw.get("type") in _FINAL:
                stream.release()  # the answer is whole: the connection may serve the next request
            yield raw


async def _over_websocket(model: Model, options: StreamOptions, url: str, headers: dict[str, str],
                          body: dict[str, Any], account: str, builder: MessageBuilder,
                          started: list[bool]) -> AsyncIterator[AssistantMessageEvent]:
    """The request over a (cached) socket. Returns without an event when the socket failed before the
    answer started (the caller goes on over SSE); raises when it failed after."""
    from pi_plugins.openai_codex_responses import websocket as ws

    from pi_core.llm.transport import IdleTimeout, RequestGuard

    session = _cache_session(options)
    cached_context = options.transport in (None, "auto", "websocket-cached")
    if options.on_headers is not None:
        editable: dict[str, str | None] = dict(headers)
        await resolved(options.on_headers(editable, model))
        headers = {name: value for name, value in editable.items() if value is not None}
    retried: set[str] = set()
    while True:
        guard = RequestGuard(options)
        lease: ws.Lease | None = None
        try:
            lease = held = await guard.wait(ws.POOL.lease(ws.websocket_url(url), headers, session, account,
                                                          options.websocket_connect_timeout_s))
            sent = ws.continued_body(held.entry, body) if cached_context else body
            await ws.send(held.connection, guard, {"type": "response.create", **sent})
            async for event in _read(ws.events(held.connection, guard), builder, model, options, started,
                                     observe=True):
                if event.type == "done":  # the socket is free for the next request before it is asked
                    if cached_context and held.entry is not None and builder.message.response_id:
                        held.entry.continuation = ws.Continuation(body, builder.message.response_id,
                                                                  response_items(model, builder.message))
                    held.keep = True
                    await held.release()
                yield event
            return
        except CodexError as err:
            # Before the answer starts, once each: a continuation the backend lost goes again whole; the
            # socket's 60-minute limit goes again on a fresh socket (the lease closed the failed one).
            retry = err.code in (PREVIOUS_RESPONSE_NOT_FOUND, CONNECTION_LIMIT) and not started[0]
            if retry and err.code not in retried and not options.signal.aborted:
                retried.add(err.code or "")
                continue
            if err.code != CONNECTION_LIMIT or started[0]:
                raise
            ws.POOL.record_failure(session)  # the limit again: as a failed socket
            return
        except (ws.WebSocketFailure, IdleTimeout) as err:
            if options.signal.aborted or started[0]:
                raise ws.as_failure(err, guard) from None
            ws.POOL.record_failure(session)
            return
        finally:
            guard.close()
            if lease is not None:
                await lease.release()


async def stream_codex(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    options = without_client_retries(options)  # Codex's client never retries itself
    run = StreamRun(builder, options)
    async with run:
        api_key = required_key(model, options, from_env=False)
        account = account_id(model, api_key)
        body = await apply_payload_hook(build_body(model, context, options), model, options)
        effort = requested_effort(model, options)
        if effort is not None and (model.compat or {}).get("supportsMidConvoEffort"):
            setattr(builder.message, THINKING_LEVEL_KEY, effort)
        url = codex_url(model.base_url)
        started = [False]
        if options.transport != "sse" and not _socket_failed(options):
            async for event in _over_websocket(model, options, url, websocket_headers(model, options, api_key, account),
                                               body, account, builder, started):
                yield event
            if started[0]:
                return
        request = WireRequest(model.provider, url, build_headers(model, options, api_key, account), body)
        stream = await run.open(request, status_text, model)
        async for event in _read(_sse_events(stream), builder, model, options, started):
            yield event
    if run.failure is not None:
        yield run.failure


def _socket_failed(options: StreamOptions) -> bool:
    """This session's socket failed before: it stays on SSE (the WebSocket module is loaded by then)."""
    import sys

    module = sys.modules.get("pi_plugins.openai_codex_responses.websocket")
    return module is not None and module.POOL.fallback_active(_cache_session(options))
