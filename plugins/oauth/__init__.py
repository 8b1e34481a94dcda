"""oauth: subscription sign-in flows (Anthropic, OpenAI Codex, GitHub Copilot, OpenRouter, xAI, Kimi, Meta)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.models.oauth import OAuthFlow


@hookimpl
def pi_oauth_providers() -> list[OAuthFlow]:
    from pi_plugins.oauth import (
        anthropic,
        github_copilot,
        kimi,
        meta,
        openai_codex,
        openrouter,
        xai,
    )

    return [module.FLOW for module in (anthropic, openai_codex, github_copilot, openrouter, xai, kimi, meta)]
