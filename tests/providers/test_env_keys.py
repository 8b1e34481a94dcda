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


def test_empty_values_are_skipped_and_copilot_reads_only_its_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pi 1.6.0 no longer takes GH_TOKEN/GITHUB_TOKEN (CI sets those for other purposes).
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "")
    monkeypatch.setenv("GITHUB_TOKEN", "gh")
    assert env_api_key("github-copilot") is None
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "cp")
    assert env_api_key("github-copilot") == "cp"


def test_qwen_plans_fall_back_to_the_shared_regional_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QWEN_TOKEN_PLAN_API_KEY", "shared")
    assert env_api_key("qwen-token-plan") == env_api_key("qwen-token-plan-individual") == "shared"
    monkeypatch.setenv("QWEN_TOKEN_PLAN_TEAM_API_KEY", "team")
    assert env_api_key("qwen-token-plan") == "team"


def test_cloudflare_needs_its_account_and_gateway_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDFLARE_API_KEY", "cf")
    assert env_api_key("cloudflare-workers-ai") is None
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    assert env_api_key("cloudflare-workers-ai") == "cf"
    assert env_api_key("cloudflare-ai-gateway") is None
    assert env_api_key("cloudflare-ai-gateway", {"CLOUDFLARE_GATEWAY_ID": "gw"}) == "cf"  # a credential's env


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
