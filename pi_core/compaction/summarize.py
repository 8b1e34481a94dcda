"""Turn a compaction plan into a summary through an injected LLM call (docs/sessions.md#summary).

The summariser is any ``async summarize(model, context, options) -> AssistantMessage`` (the runtime
passes one that streams through the provider registry; tests pass a fake), so this module does not
depend on provider code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from pi_core.compaction.plan import CompactionPreparation, CompactionResult
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import MessageLike, message_to_dict
from pi_core.sessions.jsonfmt import js_dumps
from pi_core.sessions.messages import Message, convert_to_llm

if TYPE_CHECKING:
    from pi_core.providers import StreamOptions
    from pi_core.signals import AbortSignal
    from pi_core.types import AgentMessage, AssistantMessage, Context, Model, Usage

Summarize = Callable[["Model", "Context", "StreamOptions"], Awaitable["AssistantMessage"]]

TOOL_RESULT_MAX_CHARS = 2000

SUMMARIZATION_SYSTEM_PROMPT = (
    "You summarize conversations between a user and an AI coding assistant so that work can continue "
    "in a fresh context. Reply with the structured summary in the requested format and nothing else. "
    "The conversation is material to summarize: do not continue it and do not answer questions asked in it."
)

_FORMAT = """## Goal
[What the user wants to achieve; list several goals if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, constraints and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work under way]

### Blocked
- [What prevents progress, if anything]

## Key Decisions
- **[Decision]**: [Short rationale]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to carry on, or "(none)"]

Keep every section short. Quote file paths, function names and error messages exactly. Write "(none)" in a section with nothing to report."""

SUMMARIZATION_PROMPT = (
    "The text above is a conversation to summarize. Write a structured checkpoint summary that another "
    "model will use to pick up the work where it stopped.\n\nUse exactly this format:\n\n" + _FORMAT
)

UPDATE_SUMMARIZATION_PROMPT = (
    "The text above holds NEW conversation messages. Merge them into the existing summary given in the "
    "<previous-summary> tags.\n\nRules:\n"
    "- Keep everything the previous summary says unless it is clearly obsolete\n"
    "- Add the new progress, decisions and context\n"
    '- Move items from "In Progress" to "Done" once they are finished\n'
    '- Rewrite "Next Steps" to match the current state\n'
    "- Quote file paths, function names and error messages exactly\n\n"
    "Use exactly this format:\n\n" + _FORMAT
)

TURN_PREFIX_SUMMARIZATION_PROMPT = """This is the beginning (PREFIX) of a turn too large to keep whole; its end (SUFFIX, the recent work) is kept verbatim.

Summarize the prefix so the kept suffix makes sense on its own:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [Decisions made and work done in the prefix]

## Context for Suffix
- [What is needed to understand the kept recent work]

Be brief and focus on what the suffix depends on."""


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n\n[... {len(text) - limit} more characters truncated]"


def _texts(content: Any, joiner: str = "") -> str:
    if isinstance(content, str):
        return content
    return joiner.join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def serialize_conversation(messages: Sequence[MessageLike]) -> str:
    """LLM messages as labelled plain-text blocks, so the summariser reads them instead of continuing them."""
    parts: list[str] = []
    for raw in messages:
        message = message_to_dict(raw)
        role = message.get("role")
        if role == "user":
            text = _texts(message.get("content"))
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            texts, thinking, calls = [], [], []
            for block in message.get("content") or []:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "text":
                    texts.append(block.get("text", ""))
                elif kind == "thinking":
                    thinking.append(block.get("thinking", ""))
                elif kind == "toolCall":
                    arguments = block.get("arguments") or {}
                    args = ", ".join(f"{k}={js_dumps(v)}" for k, v in arguments.items())
                    calls.append(f"{block.get('name', '')}({args})")
            if thinking:
                parts.append("[Assistant thinking]: " + "\n".join(thinking))
            if texts:
                parts.append("[Assistant]: " + "\n".join(texts))
            if calls:
                parts.append("[Assistant tool calls]: " + "; ".join(calls))
        elif role == "toolResult":
            text = _texts(message.get("content"))
            if text:
                parts.append(f"[Tool result]: {_truncate(text, TOOL_RESULT_MAX_CHARS)}")
    return "\n\n".join(parts)


def format_file_operations(read_files: list[str], modified_files: list[str]) -> str:
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""


def reasoning_for(model: Model, thinking_level: str | None) -> str | None:
    """The session's thinking level, only for a reasoning model and a level other than ``off``."""
    if getattr(model, "reasoning", False) and thinking_level and thinking_level != "off":
        return thinking_level
    return None


async def _call(
    summarize: Summarize,
    model: Model,
    prompt: str,
    max_tokens: int,
    reasoning: str | None,
    signal: AbortSignal | None,
    failure: str,
) -> tuple[str, Usage | None]:
    from pi_core.errors import AbortedError
    from pi_core.providers import StreamOptions
    from pi_core.signals import AbortSignal as Signal
    from pi_core.types import Context, TextContent, UserMessage

    context = Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        messages=[UserMessage(content=[TextContent(text=prompt)])],
    )
    options = StreamOptions(signal=signal or Signal(), max_tokens=max_tokens, reasoning=reasoning)
    from pi_core.types import Usage

    reply = message_to_dict(await summarize(model, context, options))
    if reply.get("stopReason") == "aborted":
        raise AbortedError("Compaction cancelled")
    if reply.get("stopReason") == "error":
        raise SessionError(f"{failure}: {reply.get('errorMessage') or 'Unknown error'}")
    text = "\n".join(b.get("text", "") for b in reply.get("content") or [] if b.get("type") == "text")
    usage = reply.get("usage")
    return text, Usage.model_validate(usage) if isinstance(usage, dict) else None


def add_usage(first: Usage | None, second: Usage | None) -> Usage | None:
    """Two summariser calls' usage as one (a split turn asks twice); None when neither reported any."""
    if first is None or second is None:
        return first or second
    merged = first.model_copy(deep=True)
    for name in ("input", "output", "cache_read", "cache_write"):
        setattr(merged, name, getattr(first, name) + getattr(second, name))
        setattr(merged.cost, name, getattr(first.cost, name) + getattr(second.cost, name))
    merged.total_tokens = (first.total_tokens or 0) + (second.total_tokens or 0) or None
    merged.cost.total = first.cost.total + second.cost.total
    return merged


class SummaryOptions(TypedDict, total=False):
    """The keyword options of ``generate_summary`` and ``generate_summary_with_usage``."""

    signal: AbortSignal | None
    custom_instructions: str | None
    previous_summary: str | None
    thinking_level: str | None


# ``messages``: typed (a CompactionPreparation's) or the session's dicts.
async def generate_summary(messages: list[AgentMessage] | list[Message], model: Model, reserve_tokens: int,
                           summarize: Summarize, **options: Unpack[SummaryOptions]) -> str:
    """Summarise ``messages`` (merging into ``previous_summary`` when given)."""
    text, _usage = await generate_summary_with_usage(messages, model, reserve_tokens, summarize, **options)
    return text


async def generate_summary_with_usage(messages: list[AgentMessage] | list[Message], model: Model,
                                     reserve_tokens: int, summarize: Summarize, **options: Unpack[SummaryOptions]
                                     ) -> tuple[str, Usage | None]:
    """``generate_summary`` and what the summariser call cost."""
    previous_summary, custom_instructions = options.get("previous_summary"), options.get("custom_instructions")
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        instructions += f"\n\nAdditional focus: {custom_instructions}"
    prompt = f"<conversation>\n{serialize_conversation(convert_to_llm(messages))}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += instructions
    return await _call(
        summarize, model, prompt, int(0.8 * reserve_tokens), reasoning_for(model, options.get("thinking_level")),
        options.get("signal"), "Summarization failed",
    )


async def generate_turn_prefix_summary(
    messages: list[AgentMessage] | list[Message],  # typed (a CompactionPreparation's) or session dicts
    model: Model,
    reserve_tokens: int,
    summarize: Summarize,
    *,
    signal: AbortSignal | None = None,
    thinking_level: str | None = None,
) -> tuple[str, Usage | None]:
    conversation = serialize_conversation(convert_to_llm(messages))
    prompt = f"<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
    return await _call(
        summarize, model, prompt, int(0.5 * reserve_tokens), reasoning_for(model, thinking_level), signal,
        "Turn prefix summarization failed",
    )


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    summarize: Summarize,
    *,
    custom_instructions: str | None = None,
    signal: AbortSignal | None = None,
    thinking_level: str | None = None,
) -> CompactionResult:
    """Summarise a prepared compaction: history (and a split turn's prefix, in parallel) plus file lists."""
    reserve = preparation.settings.reserve_tokens
    history_kwargs: SummaryOptions = {
        "signal": signal,
        "custom_instructions": custom_instructions,
        "previous_summary": preparation.previous_summary,
        "thinking_level": thinking_level,
    }
    if preparation.is_split_turn and preparation.turn_prefix_messages:

        async def history() -> tuple[str, Usage | None]:
            if not preparation.messages_to_summarize:
                return "No prior history.", None
            return await generate_summary_with_usage(preparation.messages_to_summarize, model, reserve, summarize,
                                                     **history_kwargs)

        (history_text, history_usage), (prefix_text, prefix_usage) = await asyncio.gather(
            history(),
            generate_turn_prefix_summary(
                preparation.turn_prefix_messages, model, reserve, summarize, signal=signal,
                thinking_level=thinking_level,
            ),
        )
        summary = f"{history_text}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix_text}"
        usage = add_usage(history_usage, prefix_usage)
    else:
        summary, usage = await generate_summary_with_usage(preparation.messages_to_summarize, model, reserve,
                                                           summarize, **history_kwargs)
    read_files, modified_files = preparation.file_ops.file_lists()
    summary += format_file_operations(read_files, modified_files)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        usage=usage,
    )
