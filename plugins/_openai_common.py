"""Shared by the two OpenAI plugins: the request (URL, auth headers), Pi-style error texts, the stream's JSON
events, caching."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pi_core.errors import ProviderError
from pi_core.llm.environ import getenv

if TYPE_CHECKING:
    from pi_core.llm.transport import SSEStream, WireRequest
    from pi_core.providers import StreamOptions
    from pi_core.types import Model

MISSING_KEY_TEXT = ("OpenAI API key is required. Set OPENAI_API_KEY environment variable or pass it as an "
                    "argument.")


def resolve_api_key(model: Model, options: StreamOptions) -> str:
    """The explicit key, else the provider's environment key, else OPENAI_API_KEY; none is an error."""
    from pi_core.models.env_keys import env_api_key

    key = options.api_key or env_api_key(model.provider) or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ValueError(MISSING_KEY_TEXT)
    return key


DEFAULT_BASE_URL = "https://api.openai.com/v1"


def request_for(model: Model, options: StreamOptions, api_key: str, path: str, body: dict[str, Any],
                extra_headers: dict[str, str] | None = None) -> WireRequest:
    """The request the openai SDK would send: ``Authorization: Bearer``, ``OpenAI-Organization`` /
    ``OpenAI-Project`` from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``; then model headers,
    ``extra_headers`` and option headers, each winning over the one before."""
    from pi_core import __version__
    from pi_core.llm.transport import WireRequest

    if model.provider == "azure":
        return _azure_request(model, options, api_key, path, body, extra_headers)
    base = (model.base_url or getenv("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    headers = {"authorization": f"Bearer {api_key}", "user-agent": f"pi/{__version__}"}
    organization, project = getenv("OPENAI_ORG_ID"), getenv("OPENAI_PROJECT_ID")
    if organization:
        headers["openai-organization"] = organization
    if project:
        headers["openai-project"] = project
    headers.update(model.headers or {})
    headers.update(extra_headers or {})
    headers.update(options.headers or {})
    return WireRequest(model.provider, base + path, headers, body)


def _azure_request(model: Model, options: StreamOptions, api_key: str, path: str, body: dict[str, Any],
                   extra_headers: dict[str, str] | None) -> WireRequest:
    """Azure OpenAI (see ``pi_plugins._azure``): its base URL, the deployment as the model, and for the
    Responses API the api-version and an ``api-key`` header (or the request's own Entra ID Bearer token)."""
    from pi_plugins import _azure

    from pi_core import __version__
    from pi_core.llm.transport import WireRequest

    own = {**(model.headers or {}), **(extra_headers or {}), **(options.headers or {})}
    url = _azure.base_url(model, options.env) + path
    headers = {"user-agent": f"pi/{__version__}"}
    if model.api == _azure.RESPONSES_API:
        url += f"?api-version={_azure.api_version(options.env)}"
        if not any(name.lower() == "authorization" for name in own):
            headers["api-key"] = api_key
    else:  # Foundry models on Chat Completions take the key as a Bearer token, as the OpenAI client sends it
        headers["authorization"] = f"Bearer {api_key}"
    headers.update(own)
    return WireRequest(model.provider, url, headers, {**body, "model": _azure.deployment(model, options.env)})


def status_text(status: int, body: str) -> str:
    """An HTTP error as Pi's JS SDK words it: ``{status} {message}`` or ``{status} status code (no body)``,
    plus OpenRouter's ``error.metadata.raw`` on a new line when present."""
    parsed: Any = body
    if body:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body
    data = parsed.get("error", parsed) if isinstance(parsed, dict) else parsed
    message: str | None = None
    if isinstance(data, dict):
        value = data.get("message")
        message = value if isinstance(value, str) else (json.dumps(value) if value else json.dumps(data))
    elif isinstance(data, str) and data:
        message = data
    text = f"{status} {message}" if message else f"{status} status code (no body)"
    raw = (data.get("metadata") or {}).get("raw") if isinstance(data, dict) else None
    return f"{text}\n{raw}" if raw else text


def stream_error_text(data: Any) -> str | None:
    """The openai SDK's rule for an event whose JSON carries ``error``: its message, else a fixed text."""
    if not isinstance(data, dict) or not data.get("error"):
        return None
    error = data["error"]
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else "An error occurred during streaming"


async def json_events(stream: SSEStream, options: StreamOptions) -> AsyncIterator[Any]:
    """The JSON events of a Chat Completions or Responses stream, up to its ``[DONE]``. An event that carries
    ``error`` fails with that text (judged by it, as before: ``retryable=None``); a 200 with no events at all
    is a failed request, not an empty answer ("ended without": retried)."""
    received = False
    async for sse in stream:
        if sse.data.startswith("[DONE]"):
            break
        event = json.loads(sse.data)
        problem = stream_error_text(event)
        if problem is not None:
            raise ProviderError(problem, retryable=None)
        received = True
        yield event
    if not received and not options.signal.aborted:
        raise ProviderError("OpenAI stream ended without any data", retryable=None)


def cache_retention(options: StreamOptions) -> str:
    """``none`` / ``short`` / ``long``; default short, or long when ``PI_CACHE_RETENTION=long``."""
    if options.cache_retention:
        return options.cache_retention
    return "long" if getenv("PI_CACHE_RETENTION") == "long" else "short"


def long_cache_ok(model: Model, options: StreamOptions) -> bool:
    compat = model.compat or {}
    return cache_retention(options) == "long" and compat.get("supportsLongCacheRetention") is not False
