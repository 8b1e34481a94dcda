"""Subscription sign-in: what an OAuth flow is, how it talks to the user, and how its tokens reach a request.

A flow plugin returns ``OAuthFlow`` objects from the ``pi_oauth_providers`` hook (``pi_plugins.oauth``
ships Anthropic, OpenAI Codex, GitHub Copilot and the others Pi signs in to). A flow is asynchronous and
UI-neutral: it asks and tells through a ``LoginUI`` (the terminal for ``pi auth login``, dialogs for
``/login``), and returns the credential to store in ``auth.json``. The building blocks live next to this
module: ``pkce`` (verifier/challenge), ``callback`` (the loopback redirect server, raced against a pasted
redirect URL), ``device`` (RFC 8628 polling) and ``http`` (token requests). ``tokens`` keeps a stored
credential fresh: refreshed shortly before it expires, and once more when a request is refused with 401.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.loader.plugins import PluginSet

Credential = dict[str, Any]  # open: Pi's auth.json entry, JSON; Pi's auth.json entry: {"type": "oauth", "access", "refresh", "expires", ...}


class OAuthError(PiError):
    """A sign-in or token refresh failed; the message says what and where."""


class LoginCancelled(OAuthError):
    def __init__(self) -> None:
        super().__init__("Login cancelled")


class RefreshRejected(OAuthError):
    """The authorization server refused the refresh token (revoked, expired): only a new sign-in helps."""


@dataclass(frozen=True)
class LoginMethod:
    """One way to sign in, e.g. ``LoginMethod("browser", "Browser login (default)")``.

    ``browser`` methods open a page; the others (a device code, a code to copy) suit a headless machine.
    """

    id: str
    label: str
    browser: bool = True


@dataclass
class RequestAuth:
    """What a stored credential changes on a request: the key to send, and maybe the endpoint and headers."""

    api_key: str
    base_url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


class LoginUI(Protocol):
    """How a flow talks to the user. Every coroutine raises ``LoginCancelled`` when the user gives up."""

    async def choose(self, message: str, methods: list[LoginMethod]) -> LoginMethod:
        """Pick a sign-in method (the caller may decide without asking, e.g. ``--no-browser``)."""

    async def ask(self, message: str, placeholder: str = "", secret: bool = False) -> str:
        """One line of text (a GitHub Enterprise domain, an API key)."""

    async def paste(self, message: str, placeholder: str = "") -> str:
        """The redirect URL or code pasted by a user whose browser cannot reach this machine.

        Cancelled (the task is cancelled) when the browser's redirect arrives first.
        """

    def open_url(self, url: str, instructions: str) -> None:
        """Show the authorization URL (and open a browser when that is wanted)."""

    def show_device_code(self, verification_uri: str, user_code: str) -> None:
        """Show where to enter the device code."""

    def progress(self, message: str) -> None:
        """A status line (``Exchanging authorization code for tokens...``)."""


class OAuthFlow:
    """One provider's sign-in. Subclasses set the class attributes and implement ``login``/``refresh``.

    ``provider`` is the catalog provider id whose requests the credential authorizes, ``name`` the text
    shown in ``/login`` and messages (``Anthropic (Claude Pro/Max)``).
    """

    provider: str = ""
    name: str = ""
    methods: tuple[LoginMethod, ...] = (LoginMethod("browser", "Browser login (default)"),)

    async def login(self, ui: LoginUI) -> Credential:
        raise NotImplementedError

    async def refresh(self, credential: Credential) -> Credential:
        """A fresh credential; raise ``RefreshRejected`` when the server refuses the refresh token."""
        raise NotImplementedError

    def to_auth(self, credential: Credential) -> RequestAuth:
        return RequestAuth(api_key=str(credential.get("access") or ""))

    def visible_models(self, credential: Credential) -> set[str] | None:
        """The model ids this account may use (None: every catalog model of the provider)."""
        ids = credential.get("availableModelIds")
        return set(ids) if isinstance(ids, list) and all(isinstance(i, str) for i in ids) else None


def oauth_providers(plugins: PluginSet) -> dict[str, OAuthFlow]:
    """Every registered flow by provider id (a later plugin layer replaces an earlier one)."""
    found: dict[str, OAuthFlow] = {}
    if not hasattr(plugins.pm.hook, "pi_oauth_providers"):
        return found
    for _plugin, flows in plugins.call_sync("pi_oauth_providers"):
        for flow in flows:
            found[flow.provider] = flow
    return found
