"""azure-openai-responses: OpenAI models on Azure OpenAI through the Responses wire (Azure's URL, api-version,
deployment names, ``api-key`` or Entra ID); Azure's Chat Completions models use the Chat Completions wire."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl
from pi_core.models.env_keys import AUTHENTICATED

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class AzureOpenAIResponsesProvider:
    api = "azure-openai-responses"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins._azure import entra_token
        from pi_plugins.openai_responses.streaming import stream_responses

        from pi_core.errors import ProviderError
        from pi_core.llm.stream import MessageBuilder

        if options.api_key == AUTHENTICATED:  # AZURE_OPENAI_ENTRA_ID=1: azure-identity's credential chain
            try:
                token = await asyncio.to_thread(entra_token)
            except ProviderError as err:
                yield MessageBuilder(model).error(err)
                return
            options = dataclasses.replace(options, headers={**(options.headers or {}), "Authorization": f"Bearer {token}"})
        async for event in stream_responses(model, context, options):
            yield event


PROVIDER = AzureOpenAIResponsesProvider()


@hookimpl
def pi_providers() -> list[AzureOpenAIResponsesProvider]:
    return [PROVIDER]
