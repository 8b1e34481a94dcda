"""custom_compaction: compaction that summarises the whole conversation with a cheaper model (Gemini Flash)."""

from __future__ import annotations

from pi_core import CompactionPreparation, CompactionResult, hookimpl
from pi_core.compaction.summarize import serialize_conversation
from pi_core.extension import ExtensionContext
from pi_core.sessions.messages import convert_to_llm
from pi_core.signals import AbortSignal

SUMMARY_PROVIDER, SUMMARY_MODEL = "google", "gemini-2.5-flash"
MAX_TOKENS = 8192

PROMPT = """You are a conversation summarizer. Create a comprehensive summary of this conversation that captures:{previous}

1. The main goals and objectives discussed
2. Key decisions made and their rationale
3. Important code changes, file modifications, or technical details
4. Current state of any ongoing work
5. Any blockers, issues, or open questions
6. Next steps that were planned or suggested

Be thorough but concise. The summary will replace the ENTIRE conversation history, so include all information needed to continue the work effectively.

Format the summary as structured markdown with clear sections.

<conversation>
{conversation}
</conversation>"""


def summary_request(preparation: CompactionPreparation) -> tuple[str, int]:
    """The summariser's prompt over every message being compacted, and how many messages it covers."""
    messages = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
    previous = (f"\n\nPrevious session summary for context:\n{preparation.previous_summary}"
                if preparation.previous_summary else "")
    return PROMPT.format(previous=previous, conversation=serialize_conversation(convert_to_llm(messages))), len(messages)


@hookimpl
async def pi_session_before_compact(ctx: ExtensionContext, preparation: CompactionPreparation,
                                    signal: AbortSignal) -> CompactionResult | None:
    ctx.ui.notify("Custom compaction extension triggered", "info")
    model = ctx.model_registry.find(SUMMARY_PROVIDER, SUMMARY_MODEL)
    if model is None:
        ctx.ui.notify("Could not find Gemini Flash model, using default compaction", "warning")
        return None
    prompt, count = summary_request(preparation)
    ctx.ui.notify(f"Custom compaction: summarizing {count} messages ({preparation.tokens_before:,} tokens) "
                  f"with {model.id}...", "info")
    try:
        reply = await ctx.model_registry.complete(model, [prompt], max_tokens=MAX_TOKENS, signal=signal)
    except Exception as err:  # noqa: BLE001 - whatever failed, pi's own compaction takes over
        ctx.ui.notify(f"Compaction failed: {err}", "error")
        return None
    if reply.stop_reason in ("error", "aborted"):
        if not signal.aborted:
            ctx.ui.notify(f"Compaction failed: {reply.error_message or 'the summary request failed'}", "error")
        return None
    summary = "\n".join(block.text for block in reply.content if block.type == "text")
    if not summary.strip():
        if not signal.aborted:
            ctx.ui.notify("Compaction summary was empty, using default compaction", "warning")
        return None
    return CompactionResult(summary=summary, first_kept_entry_id=preparation.first_kept_entry_id,
                            tokens_before=preparation.tokens_before, usage=reply.usage)
