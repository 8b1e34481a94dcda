"""GitHub Copilot's per-request headers, sent by every wire that serves a ``github-copilot`` model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.types import ImageContent, ToolResultMessage, UserMessage

if TYPE_CHECKING:
    from pi_core.types import Context, Model

COPILOT = "github-copilot"


def copilot_headers(model: Model, context: Context) -> dict[str, str]:
    """``X-Initiator`` (``user`` when the last message is the user's, else ``agent``: Copilot bills the two
    differently), ``Openai-Intent``, and ``Copilot-Vision-Request`` when any user message or tool result
    carries an image. Empty for every other provider."""
    if model.provider != COPILOT:
        return {}
    last = context.messages[-1] if context.messages else None
    headers = {"X-Initiator": "user" if last is None or isinstance(last, UserMessage) else "agent",
               "Openai-Intent": "conversation-edits"}
    if any(_has_image(message) for message in context.messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def _has_image(message: object) -> bool:
    if isinstance(message, (UserMessage, ToolResultMessage)) and not isinstance(message.content, str):
        return any(isinstance(block, ImageContent) for block in message.content)
    return False
