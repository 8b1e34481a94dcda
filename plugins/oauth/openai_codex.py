"""OpenAI Codex sign-in for ChatGPT Plus/Pro: PKCE in the browser, or a device code for headless machines."""

from __future__ import annotations

from typing import Any

from pi_plugins.oauth._common import browser_round_trip, jwt_claims, start_callback, token_fields

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthError, OAuthFlow, RequestAuth
from pi_core.models.oauth.device import Poll, poll_device_flow
from pi_core.models.oauth.http import endpoint, request, with_query
from pi_core.models.oauth.pkce import generate_pkce, random_state
from pi_core.models.oauth.tokens import now_ms

CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
AUTH_BASE = "https://auth.openai.com"
AUTHORIZE_URL = f"{AUTH_BASE}/oauth/authorize"
TOKEN_URL = f"{AUTH_BASE}/oauth/token"
REDIRECT_URI = "http://localhost:1455/auth/callback"
CALLBACK_PORT = 1455  # registered with OpenAI (shared with the Codex CLI): no other port works
DEVICE_CODE_URL = f"{AUTH_BASE}/api/accounts/deviceauth/usercode"
DEVICE_TOKEN_URL = f"{AUTH_BASE}/api/accounts/deviceauth/token"
DEVICE_PAGE = f"{AUTH_BASE}/codex/device"
DEVICE_REDIRECT_URI = f"{AUTH_BASE}/deviceauth/callback"
DEVICE_TIMEOUT_S = 15 * 60
SCOPE = "openid profile email offline_access"
ACCOUNT_CLAIM = "https://api.openai.com/auth"
BROWSER = LoginMethod("browser", "Browser login (default)")
DEVICE = LoginMethod("device_code", "Device code login (headless)", browser=False)


def account_id(access_token: str) -> str | None:
    """The ChatGPT account the token belongs to (a claim of the access token), sent as ``chatgpt-account-id``."""
    claim = jwt_claims(access_token).get(ACCOUNT_CLAIM)
    value = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return value if isinstance(value, str) and value else None


class OpenAICodexOAuth(OAuthFlow):
    provider = "openai-codex"
    name = "OpenAI (ChatGPT Plus/Pro)"
    methods = (BROWSER, DEVICE)

    async def login(self, ui: LoginUI) -> Credential:
        method = await ui.choose("Select OpenAI Codex login method:", list(self.methods))
        if method.id == DEVICE.id:
            return await self._device_login(ui)
        verifier, challenge = generate_pkce()
        state = random_state()
        url = with_query(endpoint(AUTHORIZE_URL), {
            "response_type": "code", "client_id": CLIENT_ID, "redirect_uri": REDIRECT_URI, "scope": SCOPE,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": state,
            "id_token_add_organizations": "true", "codex_cli_simplified_flow": "true", "originator": "pi"})
        callback = await start_callback("OpenAI", "/auth/callback", state, (CALLBACK_PORT,), "localhost")
        code = await browser_round_trip(ui, callback, url, "A browser window should open. Complete login to finish.",
                                        state, REDIRECT_URI)
        ui.progress("Exchanging authorization code for tokens...")
        return await self._exchange(code, verifier, REDIRECT_URI)

    async def _exchange(self, code: str, verifier: str, redirect_uri: str) -> Credential:
        reply = await request("POST", endpoint(TOKEN_URL), what="OpenAI Codex token exchange", form={
            "grant_type": "authorization_code", "client_id": CLIENT_ID, "code": code, "code_verifier": verifier,
            "redirect_uri": redirect_uri})
        return self._credential(token_fields(reply, "OpenAI Codex token exchange"), "OpenAI Codex token exchange")

    def _credential(self, body: dict[str, Any], what: str) -> Credential:
        access, refresh, lifetime = body.get("access_token"), body.get("refresh_token"), body.get("expires_in")
        if not isinstance(access, str) or not isinstance(refresh, str) or not isinstance(lifetime, (int, float)):
            raise OAuthError(f"{what} answered without access_token, refresh_token and expires_in")
        account = account_id(access)
        if not account:
            raise OAuthError(f"{what}: the access token names no ChatGPT account")
        return {"type": "oauth", "access": access, "refresh": refresh, "expires": now_ms() + int(lifetime * 1000),
                "accountId": account}

    async def _device_login(self, ui: LoginUI) -> Credential:
        reply = await request("POST", endpoint(DEVICE_CODE_URL), what="OpenAI Codex device code request",
                              json_body={"client_id": CLIENT_ID})
        if reply.status == 404:
            raise OAuthError("OpenAI Codex device code login is not enabled for this server. Use browser login "
                             "or verify the server URL.")
        body = token_fields(reply, "OpenAI Codex device code request")
        interval = body.get("interval")
        interval = float(interval) if isinstance(interval, (int, float, str)) and str(interval).strip() else None
        if not body.get("device_auth_id") or not body.get("user_code") or interval is None or interval < 0:
            raise OAuthError(f"Invalid OpenAI Codex device code response: {reply.text[:300]}")
        ui.show_device_code(endpoint(DEVICE_PAGE), str(body["user_code"]))

        async def poll() -> Poll:
            answer = await request("POST", endpoint(DEVICE_TOKEN_URL), what="OpenAI Codex device authorization",
                                   json_body={"device_auth_id": body["device_auth_id"], "user_code": body["user_code"]})
            if answer.ok:
                got = answer.json()
                if got.get("authorization_code") and got.get("code_verifier"):
                    return Poll("complete", (got["authorization_code"], got["code_verifier"]))
                return Poll("failed", message=f"Invalid OpenAI Codex device auth token response: {answer.text[:300]}")
            if answer.status in (403, 404):
                return Poll("pending")
            error = answer.json().get("error")
            code = error.get("code") if isinstance(error, dict) else error
            if code == "deviceauth_authorization_pending":
                return Poll("pending")
            if code == "slow_down":
                return Poll("slow_down")
            return Poll("failed", message=f"OpenAI Codex device auth failed with status {answer.status}: "
                                          f"{answer.detail()}")

        auth_code, verifier = await poll_device_flow(poll, interval_s=interval, expires_in_s=DEVICE_TIMEOUT_S,
                                                     wait_first=False)
        return await self._exchange(auth_code, verifier, DEVICE_REDIRECT_URI)

    async def refresh(self, credential: Credential) -> Credential:
        reply = await request("POST", endpoint(TOKEN_URL), what="OpenAI Codex token refresh", form={
            "grant_type": "refresh_token", "refresh_token": credential["refresh"], "client_id": CLIENT_ID})
        return self._credential(token_fields(reply, "OpenAI Codex token refresh", refresh=True),
                                "OpenAI Codex token refresh")

    def to_auth(self, credential: Credential) -> RequestAuth:
        access = str(credential.get("access") or "")
        account = credential.get("accountId") or account_id(access)
        return RequestAuth(api_key=access, headers={"chatgpt-account-id": account} if account else {})


FLOW = OpenAICodexOAuth()
