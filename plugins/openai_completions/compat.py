"""Quirks of OpenAI-compatible endpoints (docs/providers.md#openai-compatible-servers): detected from provider and base
URL, then overridden field by field by ``model.compat``."""

from __future__ import annotations

from typing import Any

from pi_core.types import Model

DEFAULT_COMPAT: dict[str, Any] = {
    "supportsStore": True,
    "supportsDeveloperRole": True,
    "supportsReasoningEffort": True,
    "supportsUsageInStreaming": True,
    "maxTokensField": "max_completion_tokens",
    "requiresToolResultName": False,
    "requiresAssistantAfterToolResult": False,
    "requiresThinkingAsText": False,
    "requiresReasoningContentOnAssistantMessages": False,
    "requiresMistralToolIds": False,
    "thinkingFormat": "openai",
    "cacheControlFormat": None,
    "supportsStrictMode": True,
    "supportsLongCacheRetention": True,
    "openRouterRouting": None,
    "vercelGatewayRouting": None,
}


def detect_compat(model: Model) -> dict[str, Any]:
    provider, url = model.provider, model.base_url or ""

    def is_(name: str, *hosts: str) -> bool:
        return provider == name or any(host in url for host in hosts)

    cerebras, xai = is_("cerebras", "cerebras.ai"), is_("xai", "api.x.ai")
    chutes = "chutes.ai" in url
    deepseek = is_("deepseek", "deepseek.com")
    zai = is_("zai", "api.z.ai")
    moonshot = provider.startswith("moonshotai") or "moonshot" in url
    opencode = provider.startswith("opencode") or "opencode.ai" in url
    cloudflare = provider.startswith("cloudflare") or "cloudflare" in url
    cf_gateway = is_("cloudflare-ai-gateway", "gateway.ai.cloudflare.com")
    openrouter = is_("openrouter", "openrouter.ai")
    # Pi 0.73.1 talks to Mistral over its own wire; pi uses Mistral's Chat Completions endpoint instead,
    # which wants 9-character tool ids, tool names on results, no developer role and plain-text thinking.
    mistral = is_("mistral", "api.mistral.ai")

    non_standard = cerebras or xai or chutes or deepseek or zai or moonshot or opencode or cloudflare or mistral
    compat = dict(DEFAULT_COMPAT)
    compat.update(
        supportsStore=not non_standard,
        supportsDeveloperRole=not non_standard,
        supportsReasoningEffort=not (xai or zai or moonshot or cf_gateway),
        maxTokensField="max_tokens" if (chutes or moonshot or cf_gateway or mistral) else "max_completion_tokens",
        requiresToolResultName=mistral,
        requiresThinkingAsText=mistral,
        requiresMistralToolIds=mistral,
        requiresReasoningContentOnAssistantMessages=deepseek,
        thinkingFormat=("deepseek" if deepseek else "zai" if zai else "openrouter" if openrouter
                        else "mistral" if mistral else "openai"),
        cacheControlFormat="anthropic" if provider == "openrouter" and model.id.startswith("anthropic/") else None,
        supportsStrictMode=not (moonshot or cf_gateway),
        supportsLongCacheRetention=not cloudflare,
    )
    return compat


def get_compat(model: Model) -> dict[str, Any]:
    """Detected defaults with every explicitly set ``model.compat`` field on top."""
    compat = detect_compat(model)
    for key, value in (model.compat or {}).items():
        if value is not None:
            compat[key] = value
    return compat
