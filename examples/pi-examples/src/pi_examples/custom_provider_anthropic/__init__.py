"""custom_provider_anthropic: a provider with its own API id (``custom-anthropic-api``) and its own streaming
code, serving two Claude models as ``custom-anthropic/...`` with the key from ``CUSTOM_ANTHROPIC_API_KEY``.

The base URL is ``https://api.anthropic.com``, or ``CUSTOM_ANTHROPIC_BASE_URL`` when set (tests point it at
a local fake). Pi's example also offers a Claude Pro/Max sign-in for ``/login``; that part is not ported.
"""

from __future__ import annotations

import os

from pi_core import ProviderPreset, hookimpl
from pi_core.providers import ApiProvider
from pi_core.types import Model, ModelCost
from pi_examples.custom_provider_anthropic.stream import API, CustomAnthropicProvider

PROVIDER = "custom-anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
MODELS = [("claude-opus-4-5", "Claude Opus 4.5 (Custom)", ModelCost(input=5, output=25, cache_read=0.5, cache_write=6.25)),
          ("claude-sonnet-4-5", "Claude Sonnet 4.5 (Custom)",
           ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))]


def base_url() -> str:
    return os.environ.get("CUSTOM_ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL


@hookimpl
def pi_providers() -> list[ApiProvider]:
    return [CustomAnthropicProvider()]


@hookimpl
def pi_models() -> list[Model]:
    return [Model(id=model_id, name=name, api=API, provider=PROVIDER, base_url=base_url(), reasoning=True,
                  input=["text", "image"], cost=cost, context_window=200_000, max_tokens=64_000)
            for model_id, name, cost in MODELS]


@hookimpl
def pi_provider_presets() -> dict[str, ProviderPreset]:
    return {PROVIDER: ProviderPreset(api=API, base_url=base_url(), api_key="CUSTOM_ANTHROPIC_API_KEY")}
