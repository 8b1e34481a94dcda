from __future__ import annotations

import pytest

from pi_core.models.env_keys import AUTHENTICATED, env_api_key, env_var_names


def test_anthropic_oauth_token_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "key")
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    assert env_api_key("anthropic") == "key"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth")
    assert env_api_key("anthropic") == "oauth"
    assert env_var_names("anthropic") == ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]


def test_empty_values_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "")
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "gh")
    assert env_api_key("github-copilot") == "gh"


def test_unknown_and_oauth_only_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_api_key("openai-codex") is None
    assert env_var_names("nope") == []


def test_bedrock_ambient_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert env_api_key("amazon-bedrock") is None
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a")
    assert env_api_key("amazon-bedrock") is None
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "b")
    assert env_api_key("amazon-bedrock") == AUTHENTICATED
