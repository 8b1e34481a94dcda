"""Hooks on the wire: the payload and headers pi sends, the response status, the raw stream events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.hookspecs.markers import spec

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext
    from pi_core.types import Model

__all__ = ["pi_after_provider_response", "pi_before_provider_headers", "pi_before_provider_request",
           "pi_provider_stream_event"]


@spec("chain", chain="payload")
def pi_before_provider_request(ctx: ExtensionContext, payload: dict[str, Any], model: Model) -> dict[str, Any] | None:  # open: the provider's JSON request body
    """See or replace a request body: after the provider built it, right before sending; once per request.

    Return a replacement payload (later implementations and the request get it) or None to keep it. A
    raising implementation is reported and the payload stays as it was.
    """


@spec("notify")
def pi_before_provider_headers(ctx: ExtensionContext, headers: dict[str, str | None], model: Model) -> None:
    """Edit the request headers in place: set a value to add or override one, None to delete it.

    Once per request, after pi assembled the headers; retries reuse them. A raising implementation is
    reported and the headers are sent as they are.
    """


@spec("notify")
def pi_after_provider_response(ctx: ExtensionContext, status: int, headers: dict[str, str], model: Model) -> None:
    """Read a response's status and headers: when they arrive, before the body is read; once per response
    (also error responses). A raising implementation is reported; the response is unaffected.
    """


@spec("notify")
def pi_provider_stream_event(ctx: ExtensionContext, data: Any, model: Model) -> None:  # open: one decoded wire event, the provider's JSON
    """Observe each decoded wire event (the JSON of one stream frame) before pi normalises it.

    Awaited in stream order, so a slow implementation delays the stream; skipped entirely (no cost) when no
    plugin implements it. Treat ``data`` as read-only. A raising implementation is reported; the stream goes on.
    """
