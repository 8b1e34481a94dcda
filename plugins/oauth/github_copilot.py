"""GitHub Copilot sign-in: GitHub's device flow, then a short-lived Copilot token minted from the GitHub token.

The GitHub token is stored as ``refresh`` and the Copilot token as ``access``; "refreshing" mints a new
Copilot token. The Copilot token names the account's API host (``proxy-ep=proxy.<host>``), which
becomes the requests' base URL unless ``models.json`` routes the provider elsewhere.
"""

from __future__ import annotations

import re
import time
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from pi_plugins.oauth._common import token_fields

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthError, OAuthFlow, RefreshRejected, RequestAuth
from pi_core.models.oauth.device import Poll, poll_device_flow, still_waiting
from pi_core.models.oauth.http import Reply, endpoint, request, trusted_url
from pi_core.models.oauth.tokens import now_ms

CLIENT_ID = "Iv1.b507a08c87ecfe98"
USER_AGENT = "GitHubCopilotChat/0.35.0"
COPILOT_HEADERS = {"User-Agent": USER_AGENT, "Editor-Version": "vscode/1.107.0",
                   "Editor-Plugin-Version": "copilot-chat/0.35.0", "Copilot-Integration-Id": "vscode-chat"}
API_VERSION = "2026-06-01"
DEFAULT_BASE_URL = "https://api.individual.githubcopilot.com"
DEVICE = LoginMethod("device_code", "Device code login", browser=False)
_MARGIN_MS = 5 * 60_000


def normalize_domain(text: str) -> str | None:
    value = text.strip()
    if not value:
        return None
    host = urlsplit(value if "://" in value else f"https://{value}").hostname
    return host or None


def base_url_from_token(token: str, enterprise: str | None = None) -> str:
    """``https://api.<host>`` from the token's ``proxy-ep=proxy.<host>``, else the enterprise or individual host."""
    found = re.search(r"proxy-ep=([^;]+)", token)
    if found:
        return "https://" + re.sub(r"^proxy\.", "api.", found.group(1))
    return f"https://copilot-api.{enterprise}" if enterprise else DEFAULT_BASE_URL


def _expiry(body: dict[str, Any], reply_date: str | None) -> int:
    """When the Copilot token should count as expired, on *our* clock.

    ``expires_at`` is the server's epoch: measured against the server's own ``Date`` (or the relative
    ``refresh_in``), a client clock that is off by hours still gets the token's real lifetime.
    """
    refresh_in = body.get("refresh_in")
    if isinstance(refresh_in, (int, float)) and refresh_in > 0:
        return now_ms() + int(refresh_in * 1000)
    expires_at = body.get("expires_at")
    if not isinstance(expires_at, (int, float)):
        raise OAuthError("Invalid Copilot token response fields")
    server_now = time.time()
    if reply_date:
        try:
            server_now = parsedate_to_datetime(reply_date).timestamp()
        except (TypeError, ValueError):
            pass
    return now_ms() + int((expires_at - server_now) * 1000) - _MARGIN_MS


class GitHubCopilotOAuth(OAuthFlow):
    provider = "github-copilot"
    name = "GitHub Copilot"
    methods = (DEVICE,)

    def _urls(self, domain: str) -> tuple[str, str, str]:
        return (endpoint(f"https://{domain}/login/device/code"),
                endpoint(f"https://{domain}/login/oauth/access_token"),
                endpoint(f"https://api.{domain}/copilot_internal/v2/token"))

    async def login(self, ui: LoginUI) -> Credential:
        answer = await ui.ask("GitHub Enterprise URL/domain (blank for github.com)", "company.ghe.com")
        enterprise = normalize_domain(answer)
        if answer.strip() and not enterprise:
            raise OAuthError("Invalid GitHub Enterprise URL/domain")
        domain = enterprise or "github.com"
        device_url, token_url, _ = self._urls(domain)
        reply = await request("POST", device_url, what="GitHub device code request", headers={"User-Agent": USER_AGENT},
                              form={"client_id": CLIENT_ID, "scope": "read:user"})
        device = token_fields(reply, "GitHub device code request")
        uri = trusted_url(device.get("verification_uri"))
        if not isinstance(device.get("device_code"), str) or not isinstance(device.get("user_code"), str):
            raise OAuthError("Invalid device code response fields")
        if uri is None:
            raise OAuthError("Untrusted verification_uri in device code response")
        ui.show_device_code(uri, device["user_code"])

        async def poll() -> Poll:
            got = await request("POST", token_url, what="GitHub device authorization", headers={"User-Agent": USER_AGENT},
                                form={"client_id": CLIENT_ID, "device_code": device["device_code"],
                                      "grant_type": "urn:ietf:params:oauth:grant-type:device_code"})
            body = got.json()
            if isinstance(body.get("access_token"), str):
                return Poll("complete", body["access_token"])
            waiting = still_waiting(body)
            if waiting is not None:
                return waiting
            error = body.get("error")
            if isinstance(error, str):
                description = body.get("error_description")
                return Poll("failed", message=f"Device flow failed: {error}{f': {description}' if description else ''}")
            return Poll("failed", message=f"Invalid device token response (HTTP {got.status} from {got.url})")

        interval, expires = device.get("interval"), device.get("expires_in")
        github_token = await poll_device_flow(poll, interval_s=float(interval) if isinstance(interval, (int, float))
                                              else None, expires_in_s=float(expires) if isinstance(expires, (int, float))
                                              else None)
        credential = await self._mint(github_token, enterprise)
        ui.progress("Fetching the models this Copilot account may use...")
        credential["availableModelIds"] = await self._available_models(credential, enterprise)
        return credential

    async def _mint(self, github_token: str, enterprise: str | None) -> Credential:
        _, _, copilot_url = self._urls(enterprise or "github.com")
        reply = await request("GET", copilot_url, what="Copilot token request",
                              headers={"Authorization": f"Bearer {github_token}", **COPILOT_HEADERS})
        body = _copilot_token(reply)
        credential: Credential = {"type": "oauth", "refresh": github_token, "access": body["token"],
                                  "expires": _expiry(body, reply.date)}
        if enterprise:
            credential["enterpriseUrl"] = enterprise
        return credential

    async def _available_models(self, credential: Credential, enterprise: str | None) -> list[str] | None:
        base = base_url_from_token(credential["access"], enterprise)
        reply = await request("GET", endpoint(f"{base}/models"), what="Copilot model list", headers={
            "Authorization": f"Bearer {credential['access']}", "X-GitHub-Api-Version": API_VERSION, **COPILOT_HEADERS})
        rows = reply.json().get("data") if reply.ok else None
        if not isinstance(rows, list):
            return None  # unknown: every catalog model stays visible
        return [row["id"] for row in rows if isinstance(row, dict) and isinstance(row.get("id"), str)
                and row.get("model_picker_enabled") is not False
                and (row.get("policy") or {}).get("state") != "disabled"
                and ((row.get("capabilities") or {}).get("supports") or {}).get("tool_calls") is not False]

    async def refresh(self, credential: Credential) -> Credential:
        enterprise = normalize_domain(str(credential.get("enterpriseUrl") or ""))
        fresh = await self._mint(str(credential["refresh"]), enterprise)
        return {**credential, **fresh}

    def to_auth(self, credential: Credential) -> RequestAuth:
        access = str(credential.get("access") or "")
        enterprise = normalize_domain(str(credential.get("enterpriseUrl") or ""))
        return RequestAuth(api_key=access, base_url=base_url_from_token(access, enterprise))


def _copilot_token(reply: Reply) -> dict[str, Any]:
    if reply.status in (401, 403):
        raise RefreshRejected(f"GitHub refused the Copilot token request (HTTP {reply.status}: {reply.detail()})")
    body = token_fields(reply, "Copilot token request")
    if not isinstance(body.get("token"), str):
        raise OAuthError("Invalid Copilot token response fields")
    return body


FLOW = GitHubCopilotOAuth()
