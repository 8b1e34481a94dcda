"""Kimi Code sign-in (subscription): a device code against auth.kimi.com, then refreshable tokens."""

from __future__ import annotations

import os

from pi_plugins.oauth._common import oauth_credential, token_fields
from pi_plugins.oauth._device_grant import DeviceGrant

from pi_core.models.oauth import Credential, LoginMethod, LoginUI, OAuthFlow
from pi_core.models.oauth.http import endpoint, request

CLIENT_ID = "17e5f671-d194-4dfb-9706-5516cb48c098"
DEFAULT_HOST = "https://auth.kimi.com"


def _host() -> str:
    return (os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST") or DEFAULT_HOST).rstrip("/")


class KimiCodingOAuth(OAuthFlow):
    provider = "kimi-coding"
    name = "Kimi Code (subscription)"
    methods = (LoginMethod("device_code", "Sign in with Kimi Code", browser=False),)

    async def login(self, ui: LoginUI) -> Credential:
        host = _host()
        grant = DeviceGrant("Kimi Code", CLIENT_ID, endpoint(f"{host}/api/oauth/device_authorization"),
                            endpoint(f"{host}/api/oauth/token"))
        device = await grant.start()
        ui.show_device_code(device["page"], device["user_code"])
        return oauth_credential(await grant.wait(device), "Kimi Code device sign-in", margin_ms=0)

    async def refresh(self, credential: Credential) -> Credential:
        reply = await request("POST", endpoint(f"{_host()}/api/oauth/token"), what="Kimi Code token refresh", form={
            "client_id": CLIENT_ID, "grant_type": "refresh_token", "refresh_token": credential["refresh"]})
        body = token_fields(reply, "Kimi Code token refresh", refresh=True)
        return oauth_credential(body, "Kimi Code token refresh", margin_ms=0)


FLOW = KimiCodingOAuth()
