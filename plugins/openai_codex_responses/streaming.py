"""One Codex request: the Responses body Codex expects, its headers, its event and error quirks, over SSE.

The ChatGPT subscription endpoint is ``{base}/codex/responses`` (base ``https://chatgpt.com/backend-api``).
It takes the sign-in's access token as ``Authorization: Bearer`` and the ChatGPT account it belongs to as
``chatgpt-account-id``; the stream is the Responses API's, except that it ends with ``response.done`` (or
``response.completed``/``response.incomplete``) and reports failures as ``error`` / ``response.failed`` events.
Pi also speaks a WebSocket transport to the same backend and compresses request bodies with zstd; pi sends
the same body uncompressed over SSE, which the endpoint accepts as well.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from pi_plugins._openai_common import cache_retention
from pi_plugins._streaming import (
    StreamAborted,
    apply_payload_hook,
    failure_event,
    new_builder,
)
from pi_plugins.openai_responses.convert import convert_input
from pi_plugins.openai_responses.streaming import EventReader

from pi_core.errors import ProviderError
from pi_core.llm.stream import UNKNOWN_ERROR_TEXT
from pi_core.llm.transport import WireRequest, open_sse
from pi_core.models.thinking import base_max_tokens, clamp_thinking_level
from pi_core.providers import StreamOptions
from pi_core.types import AssistantMessage, AssistantMessageEvent, Context, Model

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
ACCOUNT_HEADER = "chatgpt-account-id"
MIN_OUTPUT_TOKENS = 16  # the endpoint refuses less
PROMPT_CACHE_KEY_MAX = 64
_FINAL = ("response.done", "response.completed", "response.incomplete")
_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled", "queued", "in_progress"})
THINKING_LEVEL_KEY = "providerThinkingLevel"  # Pi's field on an answer: the effort it was asked with
_LIMIT_CODES = ("usage_limit_reached", "usage_not_included", "rate_limit_exceeded")


class CodexError(ProviderError):
    """A failure the Codex stream itself reported (judged by its text for retries)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=None)


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
    session = options.session_id if cache_retention(options) != "none" else None
    if session:
        body["prompt_cache_key"] = session[:PROMPT_CACHE_KEY_MAX]
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


def build_headers(model: Model, options: StreamOptions, api_key: str, account: str) -> dict[str, str]:
    from pi_core import __version__

    headers: dict[str, str] = {"originator": "pi", "user-agent": f"pi/{__version__}"}
    headers.update(model.headers or {})
    headers.update(options.headers or {})
    headers.update({"authorization": f"Bearer {api_key}", ACCOUNT_HEADER: account,
                    "OpenAI-Beta": "responses=experimental", "accept": "text/event-stream",
                    "content-type": "application/json"})
    session = options.session_id if cache_retention(options) != "none" else None
    if session:
        headers["session-id"] = headers["x-client-request-id"] = session[:PROMPT_CACHE_KEY_MAX]
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


def _event_error(event: dict[str, Any]) -> str:
    error = event.get("error")
    nested: dict[str, Any] = error if isinstance(error, dict) else {}
    message = event.get("message") if isinstance(event.get("message"), str) else nested.get("message")
    code = event.get("code") if isinstance(event.get("code"), str) else nested.get("code")
    return f"Codex error: {message or code or json.dumps(event, separators=(',', ':'))}"


def normalize(event: dict[str, Any]) -> dict[str, Any] | None:
    """Codex's events as the Responses reader knows them; raises on a reported failure."""
    kind = event.get("type")
    if kind == "error":
        raise CodexError(_event_error(event))
    if kind == "response.failed":
        error = (event.get("response") or {}).get("error") or {}
        raise CodexError(error.get("message") or "Codex response failed")
    if kind in _FINAL:
        response = dict(event.get("response") or {})
        status = response.get("status")
        response["status"] = status if status in _STATUSES else None
        return {**event, "type": "response.completed", "response": response}
    return event if isinstance(kind, str) else None


async def stream_codex(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
    builder = new_builder(model)
    if options.max_retries is None:  # Codex's client never retries itself: pi's retry layer does
        options = dataclasses.replace(options, max_retries=0)
    stream = None
    try:
        api_key = options.api_key
        if not api_key:
            raise ProviderError(f"No API key for provider: {model.provider}", retryable=False)
        account = account_id(model, api_key)
        body = await apply_payload_hook(build_body(model, context, options), model, options)
        request = WireRequest(model.provider, codex_url(model.base_url), build_headers(model, options, api_key, account),
                              body)
        stream = await open_sse(request, options, status_text, model)
        effort = requested_effort(model, options)
        if effort is not None and (model.compat or {}).get("supportsMidConvoEffort"):
            setattr(builder.message, THINKING_LEVEL_KEY, effort)
        yield builder.start()
        reader = EventReader(builder, model)
        finished = False
        async for sse in stream:
            data = sse.data.strip()
            if not data or data == "[DONE]":
                continue
            try:
                raw = json.loads(data)
            except ValueError as err:
                raise CodexError(f"Invalid Codex SSE JSON: {err}") from None
            event = normalize(raw) if isinstance(raw, dict) else None
            if event is None:
                continue
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
        stream.release()
        yield builder.done(reader.stop)
    except Exception as err:  # noqa: BLE001 - the provider contract: every failure becomes one error event
        yield failure_event(builder, err, options)
    finally:
        if stream is not None:
            await stream.aclose()
