"""google-vertex: Gemini on Google Cloud Vertex AI through the Google wire, and Claude on Vertex
(``google-vertex-anthropic``) through the Anthropic wire; API key or Application Default Credentials."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pi_plugins.google_vertex.hosts import CATALOG_BASE

from pi_core import ProviderPreset, hookimpl

if TYPE_CHECKING:
    from pi_core.models.entries import LazyModels
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model

CLAUDE_PROVIDER = "google-vertex-anthropic"
CLAUDE_API = "google-vertex-anthropic"
# The body's ``anthropic_version`` for Claude on Vertex: what anthropic's own Vertex client (anthropic 2.17)
# sends; tests/providers/test_vertex.py checks it against that client's request.
VERTEX_ANTHROPIC_VERSION = "2026-10-21"


def _failed(model: Model, err: Exception) -> AssistantMessageEvent:
    from pi_core.llm.stream import MessageBuilder

    return MessageBuilder(model).error(err)


class GoogleVertexProvider:
    """Gemini: Vertex serves the Generative Language stream under ``.../publishers/google/models/{id}``."""

    api = "google-vertex"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        import dataclasses

        from pi_plugins._delegate import stream_through
        from pi_plugins.google_generative_ai import PROVIDER as GOOGLE
        from pi_plugins.google_vertex.auth import target

        from pi_core.errors import ProviderError

        try:
            where = await target(model, options.api_key, "google", env=options.env)
        except ProviderError as err:
            yield _failed(model, err)
            return
        wire_model = model.model_copy(update={"api": "google-generative-ai", "base_url": where.base})
        sent = dataclasses.replace(options, api_key=where.api_key or "adc",
                                   headers={**(options.headers or {}), **where.headers})
        async for event in stream_through(GOOGLE, model, wire_model, context, sent):
            yield event


class VertexClaudeProvider:
    """Claude: the Messages body without ``model``, with ``anthropic_version``, POSTed to
    ``.../publishers/anthropic/models/{id}:streamRawPredict`` with a Google Bearer token (anthropic's
    ``AnthropicVertex`` client's request, on pi's own Anthropic wire)."""

    api = CLAUDE_API

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        import dataclasses
        from urllib.parse import quote

        from pi_plugins._delegate import stream_through
        from pi_plugins.anthropic_messages.provider import AnthropicMessagesProvider
        from pi_plugins.google_vertex.auth import target

        from pi_core.errors import ProviderError

        try:
            where = await target(model, None, "anthropic", keys=False, env=options.env)
        except ProviderError as err:
            yield _failed(model, err)
            return
        url = f"{where.base}/models/{quote(model.id, safe='@')}:streamRawPredict"

        def prepare(params: dict[str, Any], headers: dict[str, str]) -> None:
            params.pop("model", None)
            params["anthropic_version"] = VERTEX_ANTHROPIC_VERSION
            for name in ("x-api-key", "anthropic-version", "anthropic-dangerous-direct-browser-access"):
                headers.pop(name, None)
            headers.update(where.headers)

        wire = AnthropicMessagesProvider()
        wire_model = model.model_copy(update={"api": "anthropic-messages"})
        sent = dataclasses.replace(options, api_key="adc")
        inner = _Bound(wire, url, prepare)
        async for event in stream_through(inner, model, wire_model, context, sent):
            yield event


class _Bound:
    def __init__(self, wire: Any, url: str, prepare: Any) -> None:
        self.wire, self.url, self.prepare = wire, url, prepare

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        return self.wire.stream_request(model, context, options, url=self.url, prepare=self.prepare)  # type: ignore[no-any-return]


def claude_models() -> LazyModels:
    """Anthropic's catalog models, served by Vertex AI (an addition to Pi's catalog, which has none); made
    when a lookup reaches this provider, each becoming a ``Model`` when a run reads it."""
    from pi_plugins.catalog import loaded_catalog

    from pi_core.models.entries import LazyModels, ModelEntry, ProviderGroup

    catalog = loaded_catalog()
    if "anthropic" not in catalog.providers:
        return LazyModels([])

    def entries() -> list[ModelEntry]:
        return [ModelEntry.of_fields({**raw, "name": raw.get("name") or raw["id"], "provider": CLAUDE_PROVIDER,
                                      "api": CLAUDE_API, "baseUrl": CATALOG_BASE})
                for raw in catalog.models("anthropic")]

    return LazyModels(groups=[ProviderGroup(CLAUDE_PROVIDER, catalog.model_count("anthropic"), entries)])


GEMINI = GoogleVertexProvider()
CLAUDE = VertexClaudeProvider()


@hookimpl
def pi_providers() -> list[Any]:
    return [GEMINI, CLAUDE]


@hookimpl
def pi_models() -> LazyModels:
    return claude_models()


@hookimpl
def pi_provider_presets() -> dict[str, ProviderPreset]:
    return {CLAUDE_PROVIDER: ProviderPreset(name="Claude on Vertex AI", api=CLAUDE_API, base_url=CATALOG_BASE)}
