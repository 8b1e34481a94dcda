"""Keep a stored OAuth credential usable: refresh it shortly before it expires, or when a request got 401.

A refresh happens under the ``auth.json`` lock and re-reads the file first: when another pi process
refreshed meanwhile, its token is used instead of spending the refresh token twice (some servers rotate
refresh tokens and revoke the old one). A credential that looks expired right after a refresh (the
server's lifetime is shorter than the safety margin, or the clocks disagree) is used as it is rather than
refreshed again on every request: a real expiry shows up as a 401 and gets its one refresh then.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, TypeVar

from pi_core.models.oauth import Credential, OAuthError, OAuthFlow, RefreshRejected
from pi_core.toolkit.redact import register_secret

if TYPE_CHECKING:
    from pi_core.models.auth import AuthStorage

REFRESH_MARGIN_MS = 60_000  # refresh when less than a minute is left
_T = TypeVar("_T")
_just_refreshed: dict[tuple[str, str], float] = {}  # (auth.json, provider) -> monotonic time
_RECENT_S = 30.0


def now_ms() -> int:
    return int(time.time() * 1000)


def remember_secrets(credential: Credential | None) -> None:
    """Tokens join the redaction list the moment pi holds them."""
    for field in ("access", "refresh"):
        value = (credential or {}).get(field)
        if isinstance(value, str):
            register_secret(value)


def expires_in_ms(credential: Credential) -> float:
    expires = credential.get("expires")
    if not isinstance(expires, (int, float)):
        return 0.0
    return float(expires) - now_ms()


def needs_refresh(credential: Credential, min_validity_ms: float = REFRESH_MARGIN_MS) -> bool:
    return not credential.get("access") or expires_in_ms(credential) < min_validity_ms


def run_sync(coro: Coroutine[object, object, _T]) -> _T:
    """Run ``coro`` to completion from synchronous code, also when an event loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def fresh_credential(storage: AuthStorage, flow: OAuthFlow, *, force: bool = False,
                           min_validity_ms: float = REFRESH_MARGIN_MS) -> Credential:
    """The stored credential of ``flow.provider``, refreshed (and saved) when it is about to expire or ``force``.

    Raises OAuthError when nothing is stored or the refresh fails; RefreshRejected when only a new sign-in helps.
    """
    provider = flow.provider
    seen = storage.credential(provider)
    if seen is None or seen.get("type") != "oauth":
        raise OAuthError(f"Not signed in to {flow.name}. Run `pi auth login {provider}` or /login.")
    remember_secrets(seen)
    key = (str(storage.path), provider)
    recent = time.monotonic() - _just_refreshed.get(key, -_RECENT_S) < _RECENT_S
    if not force and (not needs_refresh(seen, min_validity_ms) or (recent and seen.get("access"))):
        return seen
    with storage.locked() as data:
        current = data.get(provider)
        if not isinstance(current, dict) or current.get("type") != "oauth":
            raise OAuthError(f"Not signed in to {flow.name}. Run `pi auth login {provider}` or /login.")
        another_process_refreshed = current.get("access") != seen.get("access")
        if another_process_refreshed and not needs_refresh(current, min_validity_ms):
            storage.data = data
            remember_secrets(current)
            return current
        if not current.get("refresh"):
            raise RefreshRejected(f"{flow.name} sign-in has expired. Run `pi auth login {provider}` to sign in again.")
        try:
            fresh = await flow.refresh(current)
        except RefreshRejected as err:
            raise RefreshRejected(f"{flow.name} sign-in is no longer valid ({err}). "
                                  f"Run `pi auth login {provider}` to sign in again.") from err
        except OAuthError as err:
            raise OAuthError(f"Could not refresh the {flow.name} token: {err}") from err
        fresh = {**current, **fresh, "type": "oauth"}
        remember_secrets(fresh)
        storage.save({**data, provider: fresh})
    _just_refreshed[key] = time.monotonic()
    return fresh
