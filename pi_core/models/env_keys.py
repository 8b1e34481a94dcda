"""API keys from environment variables, per provider (docs/models.md#api-keys).

- ``env_var_names(provider)``: the variables checked, in order (for error messages such as
  "set ANTHROPIC_API_KEY"). Empty for unknown/OAuth-only providers.
- ``env_api_key(provider)``: the first non-empty one, or the sentinel ``"<authenticated>"`` for
  providers authenticated by ambient credentials (Vertex ADC, AWS), or None.
"""

from __future__ import annotations

import os
from pathlib import Path

AUTHENTICATED = "<authenticated>"

ENV_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
}

_AWS_SINGLE = ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
               "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE")


def env_var_names(provider: str) -> list[str]:
    """The environment variables that can hold ``provider``'s key, highest priority first."""
    return list(ENV_VARS.get(provider, ()))


def env_api_key(provider: str) -> str | None:
    """The provider's key from the environment, ``"<authenticated>"`` for ambient credentials, or None."""
    for name in ENV_VARS.get(provider, ()):
        value = os.environ.get(name)
        if value:
            return value
    if provider == "google-vertex" and _has_vertex_adc():
        return AUTHENTICATED
    if provider == "amazon-bedrock" and _has_aws_credentials():
        return AUTHENTICATED
    return None


def _has_vertex_adc() -> bool:
    explicit = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    path = Path(explicit) if explicit else Path.home() / ".config/gcloud/application_default_credentials.json"
    has_project = bool(os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("GCLOUD_PROJECT"))
    return path.is_file() and has_project and bool(os.environ.get("GOOGLE_CLOUD_LOCATION"))


def _has_aws_credentials() -> bool:
    env = os.environ
    if any(env.get(name) for name in _AWS_SINGLE):
        return True
    return bool(env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"))
