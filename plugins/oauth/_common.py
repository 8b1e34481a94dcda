"""Pieces the sign-in flows share: the browser round trip, token answers, JWT claims."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pi_core.models.oauth import Credential, LoginUI, OAuthError, RefreshRejected
from pi_core.models.oauth.callback import CallbackServer, CodeInput, wait_for_code
from pi_core.models.oauth.http import Reply, endpoint, request
from pi_core.models.oauth.tokens import now_ms

PASTE_MESSAGE = "Complete login in your browser, or paste the authorization code / redirect URL here"
# Codes that mean the refresh token itself is dead (revoked, expired, already used): sign in again.
_DEAD_REFRESH = ("invalid_grant", "invalid_token", "unauthorized_client", "access_denied", "expired_token")


def token_fields(reply: Reply, what: str, *, refresh: bool = False) -> dict[str, Any]:
    """The JSON of a successful token answer; a refused refresh raises RefreshRejected, anything else OAuthError."""
    body = reply.json()
    if reply.ok and body:
        return body
    detail = reply.detail() or "no details"
    if refresh and (reply.status in (400, 401, 403) or str(body.get("error")) in _DEAD_REFRESH):
        raise RefreshRejected(f"{what} was refused (HTTP {reply.status}: {detail})")
    raise OAuthError(f"{what} failed (HTTP {reply.status} from {reply.url}): {detail}")


def expiry_ms(body: dict[str, Any], *, margin_ms: int = 5 * 60_000, default_s: float = 3600) -> int:
    """Epoch ms when the token should be treated as expired: ``expires_in`` from now, minus a margin."""
    lifetime = body.get("expires_in")
    seconds = float(lifetime) if isinstance(lifetime, (int, float)) and lifetime > 0 else default_s
    return now_ms() + int(seconds * 1000) - margin_ms


def oauth_credential(body: dict[str, Any], what: str, previous_refresh: str | None = None,
                     margin_ms: int = 5 * 60_000) -> Credential:
    access = body.get("access_token")
    refresh = body.get("refresh_token") or previous_refresh
    if not isinstance(access, str) or not access or not isinstance(refresh, str) or not refresh:
        raise OAuthError(f"{what} answered without an access and a refresh token")
    return {"type": "oauth", "access": access, "refresh": refresh, "expires": expiry_ms(body, margin_ms=margin_ms)}


async def refresh_grant(token_url: str, client_id: str, credential: Credential, what: str, *,
                        as_form: bool) -> Credential:
    """The standard refresh grant (RFC 6749 §6), sent as a form or as JSON; a server that sends no new
    refresh token leaves the old one in place."""
    fields = {"grant_type": "refresh_token", "client_id": client_id, "refresh_token": credential["refresh"]}
    reply = await request("POST", endpoint(token_url), what=what, form=fields if as_form else None,
                          json_body=None if as_form else fields)
    return oauth_credential(token_fields(reply, what, refresh=True), what, previous_refresh=credential["refresh"])


def jwt_claims(token: str) -> dict[str, Any]:
    """The (unverified) payload of a JWT, or ``{}``: only used to read ids the server put there for us."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        padded = parts[1] + "=" * (-len(parts[1]) % 4)
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, UnicodeDecodeError):
        return {}
    return claims if isinstance(claims, dict) else {}


async def start_callback(provider_name: str, path: str, state: str | None, ports: tuple[int, ...],
                         redirect_host: str | None = None) -> CallbackServer | None:
    """A callback server on the first port of ``ports`` that can be bound (0 = any); None: paste only."""
    for port in ports:
        try:
            return await CallbackServer.start(provider_name, path, state, port=port, redirect_host=redirect_host)
        except OSError:
            continue
    return None


async def browser_round_trip(ui: LoginUI, callback: CallbackServer | None, url: str, instructions: str,
                             expected_state: str | None, placeholder: str) -> str:
    """Show ``url``, then the code from the redirect or from what the user pastes (its state checked)."""
    try:
        ui.open_url(url, instructions)
        got: CodeInput = await wait_for_code(ui, callback, PASTE_MESSAGE, placeholder)
    finally:
        if callback is not None:
            callback.close()
    if got.source == "manual" and got.state and expected_state and got.state != expected_state:
        raise OAuthError("OAuth state mismatch: the pasted URL belongs to another sign-in")
    if not got.code:
        raise OAuthError("Missing authorization code")
    return got.code


Exchange = Callable[[str], Awaitable[Credential]]
