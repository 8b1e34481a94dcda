"""Meta sign-in (Muse subscription): a device code for an identity token, exchanged for a day-long API key.

The identity token cannot be renewed, so it is stored as ``refresh`` and a "refresh" mints a new key
with it; once Meta refuses it, only a new sign-in helps.
"""

from __future__ import annotations

from pi_plugins.oauth._device_grant import DeviceGrant

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthError, OAuthFlow, RefreshRejected
from pi_core.models.oauth.http import endpoint, request, trusted_url
from pi_core.models.oauth.tokens import now_ms

CLIENT_ID = "1031625952748946"
DEVICE_URL = "https://auth.meta.com/oidc/device/authorization/"
TOKEN_URL = "https://auth.meta.com/oidc/device/token/"
MINT_URL = "https://api.meta.ai/muse-code/key"
KEY_LIFETIME_MS = 24 * 60 * 60 * 1000


class MetaOAuth(OAuthFlow):
    provider = "meta"
    name = "Meta (Muse subscription)"
    methods = (LoginMethod("device_code", "Sign in with Meta", browser=False),)

    async def login(self, ui: LoginUI) -> Credential:
        grant = DeviceGrant("Meta", CLIENT_ID, endpoint(DEVICE_URL), endpoint(TOKEN_URL))
        device = await grant.start()
        ui.show_device_code(device["page"], device["user_code"])
        identity = (await grant.wait(device))["access_token"]
        ui.progress("Enabling Meta Model API access...")
        return await self._mint(identity)

    async def _mint(self, identity: str) -> Credential:
        reply = await request("POST", endpoint(MINT_URL), what="Meta API key mint", json_body={}, headers={
            "Authorization": f"Bearer {identity}", "x-api-version": "1.0.0"})
        if reply.status in (401, 403):
            raise RefreshRejected(f"Meta session expired (status {reply.status}). Run `/login meta` to sign in again.")
        body = reply.json()
        if not reply.ok:
            raise OAuthError(f"Meta API key mint failed with status {reply.status}: {reply.detail()}")
        key = body.get("api_key")
        if not isinstance(key, str) or not key:
            action = trusted_url(body.get("action_url"))
            raise OAuthError(f"Meta did not issue an API key.{f' Complete setup at {action}' if action else ''}")
        return {"type": "oauth", "refresh": identity, "access": key, "expires": now_ms() + KEY_LIFETIME_MS}

    async def refresh(self, credential: Credential) -> Credential:
        return await self._mint(str(credential["refresh"]))


FLOW = MetaOAuth()
