"""API keys from environment variables, per provider (Pi 1.6.0's providers.md table; docs/models.md#api-keys).

- ``env_var_names(provider)``: the variables checked, in order (for error messages such as
  "set ANTHROPIC_API_KEY"). Empty for unknown/OAuth-only providers.
- ``env_api_key(provider, env)``: the first non-empty one, or the sentinel ``"<authenticated>"`` for
  providers authenticated by ambient credentials (Vertex ADC, AWS), or None. ``env`` (a stored
  credential's ``env`` object) wins over the process environment for that provider.
- ``required_env(provider)``: settings a provider needs besides its key (Cloudflare's account id).
- ``env_bearer_token(provider, env)``: a token the provider takes as ``Authorization: Bearer``
  (``ANTHROPIC_AUTH_TOKEN``), which wins over its environment keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AUTHENTICATED = "<authenticated>"

ENV_VARS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "ant-ling": ("ANT_LING_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "github-copilot": ("COPILOT_GITHUB_TOKEN",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "typesafe": ("TYPESAFE_API_KEY",),
    "radius": ("RADIUS_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "zai-coding-cn": ("ZAI_CODING_CN_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "meta": ("META_API_KEY",),
    # The per-plan variable first, then the regional one both plans used to share.
    "qwen-token-plan": ("QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-cn": ("QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "qwen-token-plan-individual": ("QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-individual-cn": ("QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
}

# A token sent as ``Authorization: Bearer`` instead of the provider's key header (a gateway's or proxy's own
# credential); it comes after a stored key and before the environment's keys (Pi's order).
BEARER_ENV: dict[str, str] = {"anthropic": "ANTHROPIC_AUTH_TOKEN", "azure": "AZURE_OPENAI_AD_TOKEN"}

# Besides the key, these providers need account settings (from the environment or the stored credential's
# ``env``); without them the provider is not configured. The names also fill ``{NAME}`` in base URLs.
REQUIRED_ENV: dict[str, tuple[str, ...]] = {
    "cloudflare-workers-ai": ("CLOUDFLARE_ACCOUNT_ID",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"),
}

_AWS_SINGLE = ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
               "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE")


def env_value(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """``env[name]`` when set and non-empty, else the process environment's value, else None."""
    return (env or {}).get(name) or os.environ.get(name) or None


def env_var_names(provider: str) -> list[str]:
    """The environment variables that can hold ``provider``'s key, highest priority first."""
    return list(ENV_VARS.get(provider, ()))


def required_env(provider: str) -> list[str]:
    return list(REQUIRED_ENV.get(provider, ()))


def has_required_env(provider: str, env: Mapping[str, str] | None = None) -> bool:
    return all(env_value(name, env) for name in REQUIRED_ENV.get(provider, ()))


def env_bearer_token(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The provider's Bearer token from the environment (``ANTHROPIC_AUTH_TOKEN``), or None."""
    name = BEARER_ENV.get(provider)
    return env_value(name, env) if name else None


def env_api_key(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """The provider's key from the environment, ``"<authenticated>"`` for ambient credentials, or None."""
    if not has_required_env(provider, env):
        return None
    for name in ENV_VARS.get(provider, ()):
        value = env_value(name, env)
        if value:
            return value
    if provider in ("google-vertex", "google-vertex-anthropic") and _has_vertex_adc(env):
        return AUTHENTICATED
    if provider == "amazon-bedrock" and _has_aws_credentials(env):
        return AUTHENTICATED
    if provider == "azure" and (env_value("AZURE_OPENAI_ENTRA_ID", env) or "").lower() in ("1", "true", "yes"):
        return AUTHENTICATED  # an Entra ID token from azure-identity's credential chain, fetched per request
    return None


def _has_vertex_adc(env: Mapping[str, str] | None) -> bool:
    explicit = env_value("GOOGLE_APPLICATION_CREDENTIALS", env)
    path = Path(explicit) if explicit else Path.home() / ".config/gcloud/application_default_credentials.json"
    has_project = bool(env_value("GOOGLE_CLOUD_PROJECT", env) or env_value("GCLOUD_PROJECT", env))
    return path.is_file() and has_project and bool(env_value("GOOGLE_CLOUD_LOCATION", env))


def _has_aws_credentials(env: Mapping[str, str] | None) -> bool:
    if any(env_value(name, env) for name in _AWS_SINGLE):
        return True
    return bool(env_value("AWS_ACCESS_KEY_ID", env) and env_value("AWS_SECRET_ACCESS_KEY", env))
