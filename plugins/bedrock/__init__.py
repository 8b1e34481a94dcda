"""bedrock-converse-stream: Amazon Bedrock's ConverseStream API (every Bedrock model family), signed with SigV4
or a Bedrock bearer token; needs the ``bedrock`` extra (botocore)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.types import AssistantMessageEvent, Context, Model


class BedrockConverseStreamProvider:
    api = "bedrock-converse-stream"

    async def stream(self, model: Model, context: Context, options: StreamOptions) -> AsyncIterator[AssistantMessageEvent]:
        from pi_plugins.bedrock.streaming import stream_bedrock

        async for event in stream_bedrock(model, context, options):
            yield event


PROVIDER = BedrockConverseStreamProvider()


@hookimpl
def pi_providers() -> list[BedrockConverseStreamProvider]:
    return [PROVIDER]
