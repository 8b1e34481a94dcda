"""Hooks of the session's life: start and end, replacing it (new, resume, fork), compaction, tree moves,
model and thinking-level changes, resource directories."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.hookspecs.markers import spec

if TYPE_CHECKING:
    from pathlib import Path

    from pi_core.extension import ExtensionContext
    from pi_core.hookspecs.entries import BranchSummaryEntry, SessionEntry
    from pi_core.hookspecs.results import (
        Cancel,
        CompactionPreparation,
        CompactionResult,
        ProjectTrust,
        ProjectTrustContext,
        ResourcePaths,
        TreeDecision,
        TreePreparation,
    )
    from pi_core.signals import AbortSignal
    from pi_core.types import Model

__all__ = ["pi_model_select", "pi_project_trust", "pi_resources_discover", "pi_session_before_compact", "pi_session_before_fork",
           "pi_session_before_switch", "pi_session_before_tree", "pi_session_compact", "pi_session_shutdown",
           "pi_session_start", "pi_session_tree", "pi_thinking_level_select"]


@spec("first")
def pi_project_trust(ctx: ProjectTrustContext) -> ProjectTrust | None:
    """Decide whether the project in ``ctx.cwd`` is trusted, before any of its protected resources load.

    Runs once per ``pi`` start, before any session exists, only when the folder has protected resources
    (``ctx.resources``) and no ``--approve`` / ``--no-approve`` was given; only user-level and ``-e`` plugins
    take part, never the project's own. The first ``ProjectTrust`` decides (``remember=True`` saves it in
    ``<agentDir>/trust.json``); None leaves it to the next plugin, then the saved decision, then
    ``defaultProjectTrust``. ``await ctx.ui.select(...)`` asks in interactive mode. A raising implementation,
    or one returning something else, is a start-up warning and counts as None.
    """


@spec("notify")
def pi_session_start(ctx: ExtensionContext, reason: str, previous_session_file: str | None = None) -> None:
    """The session is bound and ready: once at start-up and after each replacement.

    ``reason``: "startup", "new", "resume", "fork" or "reload"; ``previous_session_file`` is set for new,
    resume and fork. Module state a plugin keeps per session is reset here. A raising implementation is
    reported; the session starts anyway.
    """


@spec("notify")
def pi_session_shutdown(ctx: ExtensionContext, reason: str, target_session_file: str | None = None) -> None:
    """The session is ending: on every exit path (end of ``-p``, RPC end of input or SIGTERM/SIGHUP, ``/quit``,
    Ctrl+D, ``ctx.shutdown()``) and before a replacement; once per session.

    ``reason``: "quit", "new", "resume", "fork" or "reload"; ``target_session_file`` names the session that
    replaces this one, when known. Flush what you keep. A raising implementation is reported.
    """


@spec("first")
def pi_session_before_switch(ctx: ExtensionContext, reason: str, target_session_file: str | None = None) -> Cancel | None:
    """May the session be replaced? Before ``/new``, ``/resume``, RPC ``new_session`` / ``switch_session`` and
    ``ctx.new_session`` / ``ctx.switch_session``; once per attempt, ``reason`` "new" or "resume".

    Return ``Cancel()`` to veto (the first veto wins; RPC answers ``cancelled: true``). A raising
    implementation is reported and does not veto.
    """


@spec("first")
def pi_session_before_fork(ctx: ExtensionContext, entry_id: str | None, position: str) -> Cancel | None:
    """May the session be forked? Before ``/fork`` (``position`` "before": the new session ends before
    ``entry_id``) and ``/clone`` ("at": it keeps everything up to the current leaf), RPC ``fork`` / ``clone``
    and ``ctx.fork``; once per attempt.

    Return ``Cancel()`` to veto. A raising implementation is reported and does not veto.
    """


@spec("first")
def pi_session_before_compact(ctx: ExtensionContext, preparation: CompactionPreparation,
                              branch_entries: list[SessionEntry], custom_instructions: str | None, reason: str,
                              will_retry: bool, signal: AbortSignal) -> CompactionResult | Cancel | None:
    """Before each compaction (``reason``: "manual", "threshold" or "overflow"; ``will_retry``: the aborted
    turn is retried afterwards): once per compaction.

    ``preparation`` says what would be summarised (``messages_to_summarize``, ``turn_prefix_messages``,
    ``first_kept_entry_id``, ``tokens_before``, ``previous_summary``, ``file_ops``); ``branch_entries`` is the
    branch root to leaf as typed session entries (``pi_core.hookspecs.entries``). Return a ``CompactionResult`` to store it instead of pi's
    summary (saved with ``fromHook: true``), ``Cancel()`` to cancel the compaction, or None to let pi
    summarise. A raising implementation is reported and pi's own summary is used.
    """


@spec("first")
def pi_session_compact(preparation: CompactionPreparation, branch_entries: list[dict[str, Any]],  # open: session entries, Pi's JSONL records
                       custom_instructions: str | None, signal: AbortSignal) -> CompactionResult | None:
    """Deprecated name of ``pi_session_before_compact`` (kept for one release): asked once per compaction, when
    no ``pi_session_before_compact`` implementation answered, with its old arguments. Raising
    ``pi_core.sessions.CompactionCancelled`` cancels the compaction; any other exception is reported and pi's
    own summary is used."""


@spec("first")
def pi_session_before_tree(ctx: ExtensionContext, preparation: TreePreparation,
                           signal: AbortSignal) -> TreeDecision | None:
    """Before ``/tree`` or ``ctx.navigate_tree`` moves the session's leaf: once per move.

    ``preparation`` says where the leaf goes and what a branch summary would cover. Return
    ``TreeDecision(cancel=True)`` to veto, ``TreeDecision(summary=...)`` to supply the branch summary
    (used when the user asked for one), or new ``custom_instructions`` / ``label``. A raising implementation
    is reported and does not veto.
    """


@spec("notify")
def pi_session_tree(ctx: ExtensionContext, new_leaf_id: str | None, old_leaf_id: str | None,
                    summary_entry: BranchSummaryEntry | None = None, from_plugin: bool = False) -> None:
    """The leaf moved (``/tree``, ``ctx.navigate_tree``): rebuild per-branch state from
    ``ctx.session_manager.get_branch()``. Once per move; a raising implementation is reported."""


@spec("notify")
def pi_model_select(ctx: ExtensionContext, model: Model, previous_model: Model | None, source: str) -> None:
    """The model changed: ``/model``, Ctrl+P, RPC ``set_model`` / ``cycle_model``, ``ctx.set_model``
    (``source`` "set" or "cycle"); not when a session is restored. A raising implementation is reported."""


@spec("notify")
def pi_thinking_level_select(ctx: ExtensionContext, level: str, previous_level: str) -> None:
    """The thinking level changed, was set, or was clamped to what a new model supports. Once per change;
    a raising implementation is reported."""


@spec("collect")
def pi_resources_discover(ctx: ExtensionContext, cwd: Path, reason: str) -> ResourcePaths | None:
    """Contribute skill, prompt-template and theme paths: after ``pi_session_start`` at start-up
    (``reason`` "startup") and after ``/reload`` ("reload"). The resources load with the plugin as their
    origin and the system prompt is rebuilt. A raising implementation is reported; its paths are skipped."""
