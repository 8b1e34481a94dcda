"""Sign-in tokens never reach what pi writes or shows: known values and the shapes of provider tokens."""

from __future__ import annotations

import pytest

from pi_core.models.oauth.tokens import remember_secrets
from pi_core.testing.fake_auth import fake_jwt
from pi_core.toolkit.redact import REDACTED, forget_secrets, redact


@pytest.mark.parametrize("token", [
    "sk-ant-oat01-" + "a1" * 20,  # Anthropic subscription access token
    "sk-ant-ort01-" + "b2" * 20,  # ... and its refresh token
    fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct"}, "sub": "user-123"}),  # ChatGPT
    "tid=9f8e7d;exp=1767225600;sku=copilot_for_business;proxy-ep=proxy.individual.githubcopilot.com;8kp=1",
    "gho_" + "c3" * 18,  # the GitHub token behind Copilot
    "ya29.a0AfH6SMC" + "x" * 30,  # a Google access token (Vertex)
    "AKIAIOSFODNN7EXAMPLE",  # an AWS access key id (Bedrock)
])
def test_token_shapes_are_redacted_wherever_they_appear(token: str) -> None:
    text = f'request failed: {{"error": "bad token {token}"}}'
    assert token not in redact(text) and REDACTED in redact(text)


def test_any_bearer_header_value_is_redacted_but_prose_is_not() -> None:
    assert redact("Authorization: Bearer opaque-session-value-0123456789") == f"Authorization: Bearer {REDACTED}"
    assert redact("Bearer tokens expire") == "Bearer tokens expire"


def test_tokens_of_a_stored_sign_in_are_known_secrets_even_without_a_known_shape() -> None:
    forget_secrets()
    credential = {"type": "oauth", "access": "kimi-opaque-access-value-42", "refresh": "kimi-opaque-refresh-43"}
    remember_secrets(credential)
    try:
        shown = redact("kimi-opaque-access-value-42 / kimi-opaque-refresh-43")
        assert shown == f"{REDACTED} / {REDACTED}"
    finally:
        forget_secrets()
