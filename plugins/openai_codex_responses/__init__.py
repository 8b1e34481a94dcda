"""openai-codex-responses: the ChatGPT Plus/Pro Codex endpoint (``/codex/responses``), over a WebSocket
(``websocket``) or pi's SSE transport, as the ``transport`` setting says."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from pi_core import hookimpl
from pi_core.providers import LazyProvider

if TYPE_CHECKING:
    from pi_core.extension import ExtensionContext

PROMPT_CACHE_KEY_MAX = 64  # the socket cache goes by the session id as the prompt cache key is cut

PROVIDER = LazyProvider("openai-codex-responses", "pi_plugins.openai_codex_responses.streaming:stream_codex",
                        preload=("pi_core.llm.http_client:preload_http",))


@hookimpl
def pi_providers() -> list[LazyProvider]:
    return [PROVIDER]


@hookimpl
async def pi_session_shutdown(ctx: ExtensionContext, reason: str) -> None:
    """The session's cached sockets close with it (an open socket would keep ``pi -p`` waiting)."""
    module = sys.modules.get("pi_plugins.openai_codex_responses.websocket")
    if module is not None:
        await module.POOL.close_session(ctx.session_manager.session_id[:PROMPT_CACHE_KEY_MAX] or None)
