"""xAI sign-in for SuperGrok / X Premium: a device code, then refreshable tokens."""

from __future__ import annotations

from pi_plugins.oauth._common import oauth_credential, refresh_grant
from pi_plugins.oauth._device_grant import DeviceGrant

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthFlow
from pi_core.models.oauth.http import endpoint

CLIENT_ID = "b1a00492-073a-47ea-816f-4c329264a828"
SCOPE = "openid profile email offline_access grok-cli:access api:access"
DEVICE_URL = "https://auth.x.ai/oauth2/device/code"
TOKEN_URL = "https://auth.x.ai/oauth2/token"


class XaiOAuth(OAuthFlow):
    provider = "xai"
    name = "xAI (Grok/X subscription)"
    methods = (LoginMethod("device_code", "Sign in with SuperGrok or X Premium", browser=False),)

    def _grant(self) -> DeviceGrant:
        return DeviceGrant("xAI", CLIENT_ID, endpoint(DEVICE_URL), endpoint(TOKEN_URL),
                           (("scope", SCOPE), ("referrer", "pi")))

    async def login(self, ui: LoginUI) -> Credential:
        grant = self._grant()
        device = await grant.start()
        ui.show_device_code(device["page"], device["user_code"])
        return oauth_credential(await grant.wait(device), "xAI device sign-in")

    async def refresh(self, credential: Credential) -> Credential:
        return await refresh_grant(TOKEN_URL, CLIENT_ID, credential, "xAI token refresh", as_form=True)


FLOW = XaiOAuth()
