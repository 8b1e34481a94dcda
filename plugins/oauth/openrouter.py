"""OpenRouter sign-in: PKCE in the browser, exchanged for a permanent API key the user controls on OpenRouter."""

from __future__ import annotations

import secrets
import sys

from pi_plugins.oauth._common import browser_round_trip, start_callback, token_fields

from pi_core.models.oauth import (
    Credential,
    LoginMethod,
    LoginUI,
    OAuthError,
    OAuthFlow,
)
from pi_core.models.oauth.http import endpoint, request, with_query
from pi_core.models.oauth.pkce import generate_pkce

AUTHORIZE_URL = "https://openrouter.ai/auth"
TOKEN_URL = "https://openrouter.ai/api/v1/auth/keys"
BROWSER = LoginMethod("browser", "Sign in with OpenRouter")


class OpenRouterOAuth(OAuthFlow):
    provider = "openrouter"
    name = "OpenRouter OAuth"
    methods = (BROWSER,)

    async def login(self, ui: LoginUI) -> Credential:
        verifier, challenge = generate_pkce()
        # OpenRouter sends no state back: a random callback path keeps stray requests from completing it.
        callback = await start_callback("OpenRouter", f"/oauth/callback/{secrets.token_hex(16)}", None, (0,))
        if callback is None:
            raise OAuthError("could not listen on a local port for the OpenRouter redirect")
        url = with_query(endpoint(AUTHORIZE_URL), {"callback_url": callback.redirect_uri, "code_challenge": challenge,
                                                   "code_challenge_method": "S256"})
        code = await browser_round_trip(ui, callback, url, "Complete sign-in in your browser. If the browser is on "
                                        "another machine, paste the final redirect URL here.", None,
                                        callback.redirect_uri)
        ui.progress("Exchanging authorization code for an API key...")
        reply = await request("POST", endpoint(TOKEN_URL), what="OpenRouter key exchange",
                              json_body={"code": code, "code_verifier": verifier, "code_challenge_method": "S256"})
        key = token_fields(reply, "OpenRouter key exchange").get("key")
        if not isinstance(key, str) or not key:
            raise OAuthError('OpenRouter OAuth response carries no "key"')
        return {"type": "oauth", "access": key, "refresh": "", "expires": sys.maxsize}

    async def refresh(self, credential: Credential) -> Credential:
        return credential  # the key does not expire


FLOW = OpenRouterOAuth()
