"""The session-level message roles (bashExecution, custom, compaction/branch summaries) and their LLM form.

Messages here are plain dicts in Pi's JSON shape. ``convert_to_llm`` turns a transcript into what a
provider may see (docs/sessions.md#what-the-model-sees); ``to_typed`` gives pi_core.types models for the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pi_core.sessions.format import MessageLike, ms_from_iso

if TYPE_CHECKING:
    from pi_core.types import AgentMessage
    from pi_core.types import Message as LlmMessage

Message = dict[str, Any]  # open: a message as Pi's JSON

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"
IMAGES_BLOCKED_TEXT = "Image reading is disabled."

LLM_ROLES = frozenset({"user", "assistant", "toolResult"})


def _ms(timestamp: str) -> int | None:
    return ms_from_iso(timestamp)


def compaction_summary_message(summary: str, tokens_before: int, timestamp: str) -> Message:
    return {"role": "compactionSummary", "summary": summary, "tokensBefore": tokens_before, "timestamp": _ms(timestamp)}


def branch_summary_message(summary: str, from_id: str, timestamp: str) -> Message:
    return {"role": "branchSummary", "summary": summary, "fromId": from_id, "timestamp": _ms(timestamp)}


def custom_message(custom_type: str, content: Any, display: bool, details: Any, timestamp: str) -> Message:  # open: plugin-defined content and details, stored in the session JSON
    message: Message = {"role": "custom", "customType": custom_type, "content": content, "display": display}
    if details is not None:
        message["details"] = details
    message["timestamp"] = _ms(timestamp)
    return message


def bash_execution_to_text(message: Message) -> str:
    """The user-message text the model sees for a ``!command`` the user ran."""
    output = message.get("output") or ""
    text = f"Ran `{message.get('command', '')}`\n"
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _text_user(text: str, timestamp: Any) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def _block_images(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            block = {"type": "text", "text": IMAGES_BLOCKED_TEXT}
            if out and out[-1] == block:
                continue
        out.append(block)
    return out


def convert_to_llm(messages: Sequence[MessageLike], block_images: bool = False) -> list[Message]:
    """Keep user/assistant/toolResult, rewrite the session roles as user text, drop everything else.

    ``messages`` may hold dicts or pi_core.types models. With ``block_images`` (setting
    ``images.blockImages``) every image in user and tool-result content becomes a text notice.
    """
    from pi_core.sessions.format import message_to_dict

    out: list[Message] = []
    for raw in messages:
        message = message_to_dict(raw)
        role = message.get("role")
        timestamp = message.get("timestamp")
        if role in LLM_ROLES:
            converted = message
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                continue
            converted = _text_user(bash_execution_to_text(message), timestamp)
        elif role == "custom":
            content = message.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            converted = {"role": "user", "content": content, "timestamp": timestamp}
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + message.get("summary", "") + BRANCH_SUMMARY_SUFFIX
            converted = _text_user(text, timestamp)
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + message.get("summary", "") + COMPACTION_SUMMARY_SUFFIX
            converted = _text_user(text, timestamp)
        else:
            continue
        if block_images and converted.get("role") in ("user", "toolResult"):
            blocked = _block_images(converted.get("content"))
            if blocked is not converted.get("content"):
                converted = {**converted, "content": blocked}
        out.append(converted)
    return out


def to_typed(messages: list[Message]) -> list[AgentMessage]:
    """Convert message dicts to pi_core.types models (user/assistant/toolResult typed, others CustomMessage)."""
    from pi_core.types import message_from_json

    return [message_from_json(m) for m in messages]


def message_text(message: Message, joiner: str = "\n") -> str:
    """The text blocks of a message's content joined by ``joiner`` (a string content is returned as is)."""
    # describe's other helpers serve listings and exports, which a print run never makes
    from pi_core.sessions.describe import content_text

    return content_text(message.get("content"), joiner)


def llm_converter(block_images: bool) -> Callable[[list[AgentMessage]], list[LlmMessage]]:
    """Session messages to LLM messages. Typed user/assistant/toolResult messages pass through as they
    are (no per-turn re-validation of the whole history); only custom roles are rewritten."""
    from pi_core.types import CustomMessage

    def convert(messages: list[Any]) -> list[Any]:
        if block_images:
            return to_typed(convert_to_llm(messages, True))
        out: list[Any] = []
        for message in messages:
            if isinstance(message, CustomMessage):
                out.extend(to_typed(convert_to_llm([message])))
            else:
                out.append(message)
        return out

    return convert
