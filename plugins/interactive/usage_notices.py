"""What a session pays beyond its replies, as transcript notices when ``showCacheMissNotices`` is on: a large
prompt-cache miss, a cache refresh (``cacheWarming``), a compaction's cost. And the warning, unless
``warnings.anthropicExtraUsage`` is off, that an Anthropic subscription sign-in bills pi's requests as extra usage.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.events import AgentEvent

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

    from pi_core.control.cache_misses import CacheMiss
    from pi_core.session import AgentSession

ANTHROPIC_EXTRA_USAGE_WARNING = (
    "You are signed in to Anthropic with a Claude subscription: requests from a third-party harness such as pi "
    "are billed per token as extra usage, not counted against your plan's limits (manage it at "
    "https://claude.ai/settings/usage). /settings turns this warning off.")


def _setting(session: AgentSession, key: str, default: Any) -> Any:
    return session.settings.get(key, default) if session.settings is not None else default


def anthropic_extra_usage_warning(session: AgentSession) -> str | None:
    """The warning, when the session's model is Anthropic's and its credential is a subscription's."""
    model = session.model
    warnings = _setting(session, "warnings", {})
    if model.provider != "anthropic" or (isinstance(warnings, dict)
                                         and warnings.get("anthropicExtraUsage") is False):
        return None
    from pi_core.models.registry import ModelRegistry

    registry = session.models
    if not isinstance(registry, ModelRegistry):
        return None
    if registry.auth.kind("anthropic") == "oauth":
        return ANTHROPIC_EXTRA_USAGE_WARNING
    from pi_core.models.env_keys import env_api_key

    key = registry.runtime_keys.get("anthropic") or registry.auth.api_key("anthropic") or \
        env_api_key("anthropic", registry.auth.env("anthropic"))
    return ANTHROPIC_EXTRA_USAGE_WARNING if key and "sk-ant-oat" in key else None


def shown(session: AgentSession) -> bool:
    return _setting(session, "showCacheMissNotices", False) is True


def on_event(app: AppHost, event: AgentEvent) -> None:
    """Add the notice ``event`` calls for, if any (the message is already in the session file)."""
    session = app.session
    if not shown(session):
        return
    if event.type == "message_end" and getattr(event.message, "role", None) == "assistant" \
            and event.message.stop_reason not in ("aborted", "error"):
        branch = session.store.get_branch()
        last = next((e for e in reversed(branch) if e.get("type") == "message"
                     and (e.get("message") or {}).get("role") == "assistant"), None)
        if last is not None:
            _show_miss(app, misses(session, branch).get(str(last.get("id"))))
    elif event.type == "entry_appended" and is_refresh(event.get("entry")):
        show_refresh(app, event.entry)
    elif event.type == "compaction_end" and event.get("result") is not None:
        _compaction_cost(app, session)


def is_refresh(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("type") == "usage" and entry.get("kind") == "cache_warm"


def show_refresh(app: AppHost, entry: dict[str, Any]) -> None:
    from pi_core.llm.cache_warming import format_warmed

    cost = (entry.get("usage") or {}).get("cost") or {}
    app.notify(format_warmed(float(cost.get("total") or 0), entry.get("note")), "dim")


def misses(session: AgentSession, branch: list[dict[str, Any]]) -> dict[str, CacheMiss]:
    """The counted cache misses of ``branch``, by the id of the reply's entry."""
    from pi_core.control.cache_misses import cache_misses

    def read_price(provider: str, model_id: str) -> float:
        model = session.models.find(provider, model_id) if session.models is not None else None
        return model.cost.cache_read / 1_000_000 if model is not None else 0.0

    return cache_misses(branch, read_price)


def replay_misses(app: AppHost, branch: list[dict[str, Any]]) -> Callable[[Any], None]:
    """For redrawing the transcript: call the result after each reply to show the miss it paid, if any (misses
    are not stored, so they are found again)."""
    if not shown(app.session):
        return lambda message: None
    found = misses(app.session, branch)
    by_time = {entry["message"].get("timestamp"): found[str(entry.get("id"))] for entry in branch
               if str(entry.get("id")) in found}

    def after(message: Any) -> None:
        if getattr(message, "role", None) == "assistant" and message.stop_reason not in ("aborted", "error"):
            _show_miss(app, by_time.get(message.timestamp))

    return after


def _show_miss(app: AppHost, miss: CacheMiss | None) -> None:
    text = miss.notice() if miss is not None else None
    if text:
        app.notify(text, "yellow")


def _compaction_cost(app: AppHost, session: AgentSession) -> None:
    from pi_core.export.stats import format_tokens

    entry = next((e for e in reversed(session.store.get_branch()) if e.get("type") == "compaction"), None)
    usage = entry.get("usage") if entry is not None else None
    if not isinstance(usage, dict):
        return
    tokens = sum(int(usage.get(k) or 0) for k in ("input", "output", "cacheRead", "cacheWrite"))
    total = float((usage.get("cost") or {}).get("total") or 0)
    cost = f" (~${total:.2f})" if total >= 0.01 else ""
    app.notify(f"Compaction: {format_tokens(tokens)} tokens billed{cost}", "yellow")
