"""custom_provider_gitlab_duo: GitLab Duo's models through GitLab's AI gateway (provider ``gitlab-duo``, API id
``gitlab-duo-api``). Each request trades the GitLab token (``GITLAB_TOKEN``) for a short-lived direct-access
token, then goes out on pi's own Anthropic or OpenAI Responses wire with the gateway's headers.

``GITLAB_URL`` (default https://gitlab.com) and ``GITLAB_AI_GATEWAY_URL`` (default https://cloud.gitlab.com)
point it elsewhere, e.g. at local fakes. Pi's ``/login gitlab-duo`` OAuth flow is not ported.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx2
from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC
from pi_plugins.openai_responses import PROVIDER as RESPONSES

from pi_core import ProviderPreset, hookimpl
from pi_core.llm.stream import MessageBuilder
from pi_core.providers import ApiProvider, StreamOptions
from pi_core.types import AssistantMessageEvent, Context, Model, ModelCost

API, PROVIDER = "gitlab-duo-api", "gitlab-duo"
DIRECT_ACCESS_TTL = 25 * 60.0
XHIGH: dict[str, str | None] = {"xhigh": "max"}


@dataclass(frozen=True)
class DuoModel:
    id: str
    name: str
    backend: str  # "anthropic" or "openai"
    cost: tuple[float, float, float, float]
    context_window: int
    max_tokens: int


MODELS = [
    DuoModel("claude-opus-4-8", "Claude Opus 4.8", "anthropic", (5, 25, 0.5, 6.25), 1_000_000, 128_000),
    DuoModel("claude-sonnet-4-6", "Claude Sonnet 4.6", "anthropic", (3, 15, 0.3, 3.75), 1_000_000, 64_000),
    DuoModel("claude-opus-4-5-20251101", "Claude Opus 4.5", "anthropic", (15, 75, 1.5, 18.75), 200_000, 32_000),
    DuoModel("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "anthropic", (3, 15, 0.3, 3.75), 200_000, 16_384),
    DuoModel("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "anthropic", (1, 5, 0.1, 1.25), 200_000, 8_192),
    DuoModel("gpt-5.5-2026-04-23", "GPT-5.5", "openai", (5, 30, 0.5, 0), 272_000, 128_000),
    DuoModel("gpt-5.1-2025-11-13", "GPT-5.1", "openai", (2.5, 10, 0, 0), 128_000, 16_384),
    DuoModel("gpt-5-mini-2025-08-07", "GPT-5 Mini", "openai", (0.15, 0.6, 0, 0), 128_000, 16_384),
    DuoModel("gpt-5-codex", "GPT-5 Codex", "openai", (2.5, 10, 0, 0), 128_000, 16_384),
]
BY_ID = {model.id: model for model in MODELS}


def gitlab_url() -> str:
    return (os.environ.get("GITLAB_URL") or "https://gitlab.com").rstrip("/")


def gateway_url() -> str:
    return (os.environ.get("GITLAB_AI_GATEWAY_URL") or "https://cloud.gitlab.com").rstrip("/")


def backend_url(backend: str) -> str:
    return f"{gateway_url()}/ai/v1/proxy/anthropic/" if backend == "anthropic" else \
        f"{gateway_url()}/ai/v1/proxy/openai/v1"


@dataclass
class DirectAccess:
    token: str
    headers: dict[str, str]
    expires_at: float


async def fetch_direct_access(gitlab_token: str) -> DirectAccess:
    """A fresh gateway token from GitLab, good for ``DIRECT_ACCESS_TTL`` seconds."""
    async with httpx2.AsyncClient(timeout=30) as client:
        response = await client.post(f"{gitlab_url()}/api/v4/ai/third_party_agents/direct_access",
                                     headers={"Authorization": f"Bearer {gitlab_token}"},
                                     json={"feature_flags": {"DuoAgentPlatformNext": True}})
    if response.status_code == 403:
        raise RuntimeError(f"GitLab Duo access denied. Ensure GitLab Duo is enabled for your account. "
                           f"Error: {response.text}")
    if response.status_code >= 400:
        raise RuntimeError(f"Failed to get direct access token: {response.status_code} {response.text}")
    data = response.json()
    return DirectAccess(str(data["token"]), dict(data.get("headers") or {}), time.monotonic() + DIRECT_ACCESS_TTL)


class GitLabDuoProvider:
    api = API

    def __init__(self) -> None:
        self.anthropic, self.openai = ANTHROPIC, RESPONSES
        self.cached: DirectAccess | None = None

    async def direct_access(self, gitlab_token: str) -> DirectAccess:
        """The gateway token, fetched again once it is 25 minutes old."""
        if self.cached is None or self.cached.expires_at <= time.monotonic():
            self.cached = await fetch_direct_access(gitlab_token)
        return self.cached

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        try:
            # The preset names the variable; unset, pi hands over the name itself: that is no token.
            if not options.api_key or options.api_key == "GITLAB_TOKEN":
                raise RuntimeError("No GitLab access token. Run /login gitlab-duo or set GITLAB_TOKEN")
            duo = BY_ID.get(model.id)
            if duo is None:
                raise RuntimeError(f"Unknown model: {model.id}")
            access = await self.direct_access(options.api_key)
        except Exception as exc:  # noqa: BLE001 - the provider contract: a failure is one error event
            yield MessageBuilder(model).error(exc)
            return
        headers = {**(options.headers or {}), **access.headers, "Authorization": f"Bearer {access.token}"}
        inner_options = dataclasses.replace(options, api_key="gitlab-duo", headers=headers)
        wire: Any = self.anthropic if duo.backend == "anthropic" else self.openai
        api = "anthropic-messages" if duo.backend == "anthropic" else "openai-responses"
        inner = model.model_copy(update={"api": api, "base_url": backend_url(duo.backend)})
        async for event in wire.stream(inner, context, inner_options):
            yield event


class GitLabDuo:
    """A class plugin: the provider, and with it the cached gateway token, are this session's."""

    def __init__(self) -> None:
        self.provider = GitLabDuoProvider()

    @hookimpl
    def pi_providers(self) -> list[ApiProvider]:
        return [self.provider]

    @hookimpl
    def pi_models(self) -> list[Model]:
        return [Model(id=m.id, name=m.name, api=API, provider=PROVIDER, base_url=gateway_url(), reasoning=True,
                      thinking_level_map=XHIGH if m.backend == "anthropic" else None, input=["text", "image"],
                      cost=ModelCost(input=m.cost[0], output=m.cost[1], cache_read=m.cost[2], cache_write=m.cost[3]),
                      context_window=m.context_window, max_tokens=m.max_tokens) for m in MODELS]

    @hookimpl
    def pi_provider_presets(self) -> dict[str, ProviderPreset]:
        return {PROVIDER: ProviderPreset(api=API, base_url=gateway_url(), api_key="GITLAB_TOKEN")}
