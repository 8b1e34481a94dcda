"""bedrock-converse-stream: Amazon Bedrock's ConverseStream API (every Bedrock model family), signed with SigV4
or a Bedrock bearer token; needs the ``bedrock`` extra (botocore)."""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.providers import LazyProvider

PROVIDER = LazyProvider("bedrock-converse-stream", "pi_plugins.bedrock.streaming:stream_bedrock",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]
