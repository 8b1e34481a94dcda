"""The standard device authorization grant (RFC 8628) that xAI, Kimi Code and Meta use, with their own URLs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pi_core.models.oauth import OAuthError
from pi_core.models.oauth.device import Poll, poll_device_flow, still_waiting
from pi_core.models.oauth.http import Reply, request, trusted_url

GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@dataclass(frozen=True)
class DeviceGrant:
    """Where one provider's device grant lives and what it calls itself in messages."""

    label: str  # "xAI", "Kimi Code"
    client_id: str
    device_url: str
    token_url: str
    extra: tuple[tuple[str, str], ...] = ()  # additional form fields of the device code request

    async def start(self) -> dict[str, Any]:
        reply = await request("POST", self.device_url, what=f"{self.label} device authorization",
                              form={"client_id": self.client_id, **dict(self.extra)})
        body = reply.json()
        if not reply.ok:
            raise OAuthError(f"{self.label} device authorization failed (HTTP {reply.status}): {reply.detail()}")
        uri = trusted_url(body.get("verification_uri_complete")) or trusted_url(body.get("verification_uri"))
        if not isinstance(body.get("device_code"), str) or not isinstance(body.get("user_code"), str) or not uri:
            raise OAuthError(f"Invalid {self.label} device authorization response: {reply.text[:300]}")
        return {**body, "page": uri}

    async def wait(self, device: dict[str, Any]) -> dict[str, Any]:
        """The token answer once the user approved; OAuthError when denied or expired."""

        async def poll() -> Poll:
            reply = await request("POST", self.token_url, what=f"{self.label} device token request",
                                  form={"grant_type": GRANT, "client_id": self.client_id,
                                        "device_code": device["device_code"]})
            return self._judge(reply)

        interval, expires = device.get("interval"), device.get("expires_in")
        return await poll_device_flow(
            poll, interval_s=float(interval) if isinstance(interval, (int, float)) and interval > 0 else None,
            expires_in_s=float(expires) if isinstance(expires, (int, float)) and expires > 0 else 15 * 60)

    def _judge(self, reply: Reply) -> Poll:
        body = reply.json()
        if reply.ok and isinstance(body.get("access_token"), str) and body["access_token"]:
            return Poll("complete", body)
        waiting = still_waiting(body)
        if waiting is not None:
            return waiting
        error = body.get("error")
        if error in ("access_denied", "authorization_denied"):
            return Poll("failed", message=f"{self.label} login was denied.")
        if error == "expired_token":
            return Poll("failed", message=f"{self.label} device code expired. Please restart login.")
        return Poll("failed", message=f"{self.label} device token request failed (HTTP {reply.status}): "
                                      f"{reply.detail()}")
