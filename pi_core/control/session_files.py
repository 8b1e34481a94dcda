"""SessionFiles: the operations that change which session file a session runs on or rewrite its branch.

New, resume, fork and clone (docs/sessions.md#session-operations), tree navigation and manual compaction.
Each asks the plugins first (``pi_session_before_*`` may veto), stops the run, and reloads the agent's
context from the store. ``pi_core.app.startup.session_parts`` hands one to every session
(``SessionParts.files``); ``AgentSession.new_session`` and the like delegate here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.errors import PiError
from pi_core.hookspecs.results import Cancel, CompactionResult
from pi_core.signals import AbortSignal
from pi_core.types import clamp_level

if TYPE_CHECKING:
    from pi_core.session.parts import RunningSession, SessionStore, TreeMove


class SessionFiles:
    """Session-file operations over whichever AgentSession calls them (one instance may serve several)."""

    async def new_session(self, session: RunningSession, parent_session: str | None = None, *,
                          setup: Callable[[SessionStore], object] | None = None) -> bool:
        """Start an empty session; False when a plugin vetoed (``pi_session_before_switch``)."""
        if await _vetoed(session, "pi_session_before_switch", reason="new"):
            return False
        await session.stop_run()
        previous = _file(session)
        await session.shutdown("new")
        store = session.store
        store.new_session(parent_session=parent_session)
        session.reset_agent([])
        if _has_model(session.model):
            store.append_model_change(session.model.provider, session.model.id)
        store.append_thinking_level_change(session.thinking_level)
        if setup is not None:
            outcome = setup(store)
            if asyncio.iscoroutine(outcome):
                await outcome
            session.reload_messages()
        await session.start("new", previous)
        return True

    async def switch_session(self, session: RunningSession, session_path: str) -> bool:
        path = Path(session_path).expanduser()
        if not path.is_absolute():
            path = Path(session.cwd) / path
        target = str(path.resolve())
        if await _vetoed(session, "pi_session_before_switch", reason="resume", target_session_file=target):
            return False
        await session.stop_run()
        previous = _file(session)
        await session.shutdown("resume", target)
        session.store.set_session_file(target)
        _restore_from_store(session)
        await session.start("resume", previous)
        return True

    async def fork(self, session: RunningSession, entry_id: str) -> tuple[str, bool]:
        """Fork before ``entry_id``; returns the user text to edit and whether a plugin vetoed."""
        if await _vetoed(session, "pi_session_before_fork", entry_id=entry_id, position="before"):
            return "", True
        await session.stop_run()
        previous = _file(session)
        result = session.store.fork(entry_id)  # validates first: a bad id changes nothing
        await session.shutdown("fork", _file(session))
        _restore_from_store(session)
        await session.start("fork", previous)
        return result.selected_text, False

    async def clone(self, session: RunningSession) -> bool:
        """Copy the current branch into a new session; False when a plugin vetoed."""
        store = session.store
        if store.leaf_id is None:
            raise PiError("Cannot clone session: no current entry selected")
        if await _vetoed(session, "pi_session_before_fork", entry_id=store.leaf_id, position="at"):
            return False
        await session.stop_run()
        previous = _file(session)
        store.clone()
        await session.shutdown("fork", _file(session))
        _restore_from_store(session)
        await session.start("fork", previous)
        return True

    async def navigate_tree(self, session: RunningSession, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> TreeMove | None:
        """Move the leaf (``/tree``): ``pi_session_before_tree`` may veto or supply the summary; returns the
        compactor's NavigationResult (``editor_text`` for the editor), or None when vetoed or cancelled."""
        if not session.is_idle:
            raise PiError("Cannot navigate the session tree while the agent is working")
        compactor = session.compactor
        if compactor is None:
            raise PiError("Tree navigation is not available in this session")
        preparation = compactor.prepare_tree(target_id, summarize=summarize, custom_instructions=custom_instructions,
                                             replace_instructions=replace_instructions, label=label)
        signal = AbortSignal()
        decision = await _call(session, "pi_session_before_tree", preparation=preparation, signal=signal)
        if decision is not None and decision.cancel:
            return None
        for name in ("custom_instructions", "replace_instructions", "label"):
            if decision is not None and getattr(decision, name) is not None:
                setattr(preparation, name, getattr(decision, name))
        summary = decision.summary if decision is not None else None
        result = await compactor.navigate(preparation, session.model if _has_model(session.model) else None,
                                          summary=summary, details=getattr(decision, "details", None),
                                          signal=signal)
        if result.cancelled:
            return None
        session.reload_messages()
        # the typed entries (pydantic models): only a tree move needs them
        from pi_core.hookspecs.entries import entry_from_json

        await _call(session, "pi_session_tree", new_leaf_id=result.new_leaf_id, old_leaf_id=result.old_leaf_id,
                    summary_entry=entry_from_json(result.summary_entry) if result.summary_entry else None,
                    from_plugin=summary is not None)
        return result

    async def compact(self, session: RunningSession, custom_instructions: str | None = None) -> CompactionResult:
        """Manual compaction (``/compact``, RPC ``compact``): stops the run, summarises, reloads the context."""
        compactor = session.compactor
        if compactor is None:
            raise PiError("Compaction is not available in this session")
        await session.abort()
        outcome = await compactor.compact(session.model if _has_model(session.model) else None,
                                          thinking_level=session.thinking_level, custom_instructions=custom_instructions)
        session.reload_messages()
        result: CompactionResult = outcome.result  # the Compactor protocol (session_parts) answers Any
        return result

    def compact_later(self, session: RunningSession, custom_instructions: str | None,
                      on_complete: Callable[[CompactionResult], object] | None,
                      on_error: Callable[[BaseException], object] | None) -> asyncio.Task[object]:
        """``ctx.compact``: compaction as a task (shutdown waits for it); the callbacks report its outcome."""

        async def run() -> Any:
            try:
                result = await self.compact(session, custom_instructions)
            except Exception as err:
                if on_error is None:
                    raise
                on_error(err)
                return None
            if on_complete is not None:
                on_complete(result)
            return result

        task = asyncio.ensure_future(run())
        session.listeners.background.add(task)
        task.add_done_callback(session.listeners.background.discard)
        return task


async def _call(session: RunningSession, hook: str, /, **kwargs: Any) -> Any:
    return await session.plugins.call(hook, ctx=session.ext, **kwargs)


async def _vetoed(session: RunningSession, hook: str, **kwargs: Any) -> bool:
    return isinstance(await _call(session, hook, **kwargs), Cancel)


def _file(session: RunningSession) -> str | None:
    store = session.store
    path = store.session_file
    return str(path) if path is not None and store.is_persisted else None


def _restore_from_store(session: RunningSession) -> None:
    """Messages, model and thinking level as the store's current branch recorded them."""
    context = session.store.build_session_context()
    session.reset_agent(context.typed_messages())
    models, state = session.models, session.agent.state
    if context.model and models is not None:
        recorded = models.find(context.model.get("provider", ""), context.model.get("modelId", ""))
        if recorded is not None and models.has_auth(recorded.provider):
            state.model = recorded
    if context.thinking_level:
        state.thinking_level = clamp_level(session.model, context.thinking_level)


def _has_model(model: Any) -> bool:
    return model is not None and model.id != "unknown"
