"""PKCE (RFC 7636): a random verifier and its S256 challenge, plus random ``state`` values."""

from __future__ import annotations

import base64
import hashlib
import secrets


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def generate_pkce() -> tuple[str, str]:
    """``(verifier, challenge)``: 32 random bytes base64url-encoded, and the SHA-256 of that, encoded."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, challenge_for(verifier)


def challenge_for(verifier: str) -> str:
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def random_state() -> str:
    return secrets.token_hex(16)
