"""Anthropic sign-in for Claude Pro/Max: authorization code with PKCE, in the browser or by copying a code."""

from __future__ import annotations

from pi_plugins.oauth._common import browser_round_trip, oauth_credential, refresh_grant, start_callback, token_fields

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthError, OAuthFlow
from pi_core.models.oauth.callback import parse_pasted
from pi_core.models.oauth.http import endpoint, request, with_query
from pi_core.models.oauth.pkce import generate_pkce, random_state

CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
AUTHORIZE_URL = "https://claude.ai/oauth/authorize"
TOKEN_URL = "https://platform.claude.com/v1/oauth/token"
CALLBACK_PORT = 53692  # preferred, so it can be forwarded into a container; any loopback port is accepted
CALLBACK_PATH = "/callback"
COPY_CODE_REDIRECT = "https://platform.claude.com/oauth/code/callback"
SCOPES = ("org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers "
          "user:file_upload")
BROWSER = LoginMethod("browser", "Browser login (default)")
COPY_CODE = LoginMethod("copy_code", "Copy code login (headless)", browser=False)


class AnthropicOAuth(OAuthFlow):
    provider = "anthropic"
    name = "Anthropic (Claude Pro/Max)"
    methods = (BROWSER, COPY_CODE)

    async def login(self, ui: LoginUI) -> Credential:
        method = await ui.choose("Select Anthropic login method:", list(self.methods))
        verifier, challenge = generate_pkce()
        state = random_state()
        if method.id == COPY_CODE.id:
            url = self._authorize_url(COPY_CODE_REDIRECT, challenge, state)
            ui.open_url(url, "Complete login in your browser, then copy the code Anthropic shows and paste it here.")
            code, pasted_state = parse_pasted(await ui.paste("Paste the code Anthropic shows after you sign in",
                                                             "code#state"))
            if pasted_state and pasted_state != state:
                raise OAuthError("OAuth state mismatch: the pasted code belongs to another sign-in")
            if not code:
                raise OAuthError("Missing authorization code")
            ui.progress("Exchanging authorization code for tokens...")
            return await self._exchange(code, state, verifier, COPY_CODE_REDIRECT)
        callback = await start_callback("Anthropic", CALLBACK_PATH, state, (CALLBACK_PORT, 0), "localhost")
        redirect = callback.redirect_uri if callback else f"http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"
        code = await browser_round_trip(
            ui, callback, self._authorize_url(redirect, challenge, state),
            "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.",
            state, redirect)
        ui.progress("Exchanging authorization code for tokens...")
        return await self._exchange(code, state, verifier, redirect)

    def _authorize_url(self, redirect_uri: str, challenge: str, state: str) -> str:
        return with_query(endpoint(AUTHORIZE_URL), {
            "code": "true", "client_id": CLIENT_ID, "response_type": "code", "redirect_uri": redirect_uri,
            "scope": SCOPES, "code_challenge": challenge, "code_challenge_method": "S256", "state": state})

    async def _exchange(self, code: str, state: str, verifier: str, redirect_uri: str) -> Credential:
        reply = await request("POST", endpoint(TOKEN_URL), what="Anthropic token exchange", json_body={
            "grant_type": "authorization_code", "client_id": CLIENT_ID, "code": code, "state": state,
            "redirect_uri": redirect_uri, "code_verifier": verifier})
        return oauth_credential(token_fields(reply, "Anthropic token exchange"), "Anthropic token exchange")

    async def refresh(self, credential: Credential) -> Credential:
        return await refresh_grant(TOKEN_URL, CLIENT_ID, credential, "Anthropic token refresh", as_form=False)


FLOW = AnthropicOAuth()
