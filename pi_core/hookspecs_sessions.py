"""Session hooks: let a plugin replace the compaction summariser.

Register with ``plugin_manager.add_hookspecs(pi_core.hookspecs_sessions)`` next to ``pi_core.hookspecs``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.hookspecs import hookspec

if TYPE_CHECKING:
    from pi_core.sessions.compaction import CompactionPreparation, CompactionResult
    from pi_core.signals import AbortSignal


@hookspec(firstresult=True)
def pi_session_compact(
    preparation: CompactionPreparation,
    branch_entries: list[dict[str, Any]],
    custom_instructions: str | None,
    signal: AbortSignal,
) -> CompactionResult | None:
    """Run before pi summarises the branch for a compaction (manual, threshold or overflow).

    ``preparation`` says what would be summarised (``messages_to_summarize``, ``turn_prefix_messages``,
    ``first_kept_entry_id``, ``tokens_before``, ``previous_summary``, ``file_ops``); ``branch_entries``
    is the branch root→leaf as session entry dicts. Return a ``CompactionResult`` to store it instead
    of pi's summary (saved with ``fromHook: true``), or None to let pi summarise. Raise
    ``pi_core.sessions.CompactionCancelled`` to cancel the compaction; any other exception is
    reported and pi's own summary is used. May be ``async def``. Stops at the first non-None result.
    """
