"""Shared by the two OpenAI plugins: the SDK client, Pi-style error texts, tool-call id rules, caching."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

    import openai

    from pi_core.llm.stream import FailureInfo
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


# httpx2 connection pools belong to the event loop that created them: one set of clients per loop.
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], openai.AsyncOpenAI]] = (
    weakref.WeakKeyDictionary())


def make_client(model: Model, options: StreamOptions, api_key: str,
                extra_headers: dict[str, str] | None = None) -> openai.AsyncOpenAI:
    """An AsyncOpenAI client: model headers, then ``extra_headers``, then option headers.

    Without an injected ``options.http_client`` the client is shared by every request of the running
    event loop with the same settings (building one costs ~0.4 ms per agent turn); callers must not
    close it. An injected http client is never cached: the caller owns it.
    """
    import openai

    headers = {**(model.headers or {}), **(extra_headers or {}), **(options.headers or {})}
    if options.http_client is not None:
        return _new_client(openai, model, options, api_key, headers)
    clients = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    key = (model.base_url, api_key, tuple(sorted(headers.items())), options.max_retries, options.timeout_s)
    client = clients.get(key)
    if client is None:
        client = clients[key] = _new_client(openai, model, options, api_key, headers)
    return client


def _new_client(openai: Any, model: Model, options: StreamOptions, api_key: str,
                headers: dict[str, str]) -> openai.AsyncOpenAI:
    kwargs: dict[str, Any] = {
        "api_key": api_key,
        "base_url": model.base_url or None,
        "default_headers": headers,
        # Pi lets the SDK retry 408/409/429/5xx twice (honouring retry-after) before its own agent retry.
        "max_retries": options.max_retries if options.max_retries is not None else 2,
        "timeout": options.timeout_s if options.timeout_s is not None else 600.0,
    }
    if options.http_client is not None:
        kwargs["http_client"] = options.http_client
    else:
        kwargs["http_client"] = openai.DefaultAsyncHttpxClient(verify=_ssl_context())
    return openai.AsyncOpenAI(**kwargs)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """httpx2's default verifying context, one per process, loading its CA bundle (~47 ms) only when the
    first TLS connection is made (never for a plain-http local server)."""
    from pi_core.llm.tls import httpx_default_context

    return httpx_default_context()


def error_text(err: BaseException) -> str:
    """An SDK exception as Pi's JS SDK words it: ``{status} {message}`` or ``{status} status code (no body)``,
    plus OpenRouter's ``error.metadata.raw`` on a new line when present."""
    import openai

    if isinstance(err, openai.APIStatusError):
        body = err.body
        message: str | None = None
        if isinstance(body, dict):
            value = body.get("message")
            message = value if isinstance(value, str) else (json.dumps(value) if value else json.dumps(body))
        elif isinstance(body, str) and body:
            message = body
        text = f"{err.status_code} {message}" if message else f"{err.status_code} status code (no body)"
        raw = (body.get("metadata") or {}).get("raw") if isinstance(body, dict) else None
        return f"{text}\n{raw}" if raw else text
    if isinstance(err, openai.APIError):
        return err.message
    if _is_transport_error(err):
        # Wording the retry layer recognises (Pi's runtime reports these as "terminated"/"fetch failed").
        return f"Network error: {str(err) or type(err).__name__}"
    return str(err) or type(err).__name__


def cache_retention(options: StreamOptions) -> str:
    """``none`` / ``short`` / ``long``; default short, or long when ``PI_CACHE_RETENTION=long``."""
    if options.cache_retention:
        return options.cache_retention
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def long_cache_ok(model: Model, options: StreamOptions) -> bool:
    compat = model.compat or {}
    return cache_retention(options) == "long" and compat.get("supportsLongCacheRetention") is not False


def response_info(response: Any) -> dict[str, Any]:
    return {"status": response.status_code, "headers": dict(response.headers)}




def failure_info(err: BaseException) -> FailureInfo | None:
    """Status and retry-after of an SDK error, for the shared retry layer."""
    import openai

    from pi_core.llm.retry import retry_after_from_headers
    from pi_core.llm.stream import FailureInfo

    if isinstance(err, openai.APIStatusError):
        return FailureInfo(status=err.status_code, retry_after=retry_after_from_headers(err.response.headers))
    if isinstance(err, openai.APIConnectionError) or _is_transport_error(err):
        return FailureInfo(retryable=True)
    return None


def _is_transport_error(err: BaseException) -> bool:
    import httpx2

    return isinstance(err, httpx2.TransportError)
