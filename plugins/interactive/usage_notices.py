"""What a session pays beyond its replies, as transcript notices when ``showCacheMissNotices`` is on: a large
prompt-cache miss, a cache refresh (``cacheWarming``), a compaction's cost. And the warning, unless
``warnings.anthropicExtraUsage`` is off, that an Anthropic subscription sign-in bills pi's requests as extra usage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.events import AgentEvent

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

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


def on_event(app: AppHost, event: AgentEvent) -> None:
    """Add the notice ``event`` calls for, if any (the message is already in the session file)."""
    session = app.session
    if _setting(session, "showCacheMissNotices", False) is not True:
        return
    if event.type == "message_end" and getattr(event.message, "role", None) == "assistant" \
            and event.message.stop_reason not in ("aborted", "error"):
        _cache_miss(app, session)
    elif event.type == "entry_appended" and isinstance(event.get("entry"), dict) and \
            event.entry.get("type") == "usage" and event.entry.get("kind") == "cache_warm":
        from pi_core.llm.cache_warming import format_warmed

        entry = event.entry
        cost = (entry.get("usage") or {}).get("cost") or {}
        app.notify(format_warmed(float(cost.get("total") or 0), entry.get("note")), "dim")
    elif event.type == "compaction_end" and event.get("result") is not None:
        _compaction_cost(app, session)


def _cache_miss(app: AppHost, session: AgentSession) -> None:
    from pi_core.control.cache_misses import cache_misses

    branch = session.store.get_branch()
    last = next((e for e in reversed(branch) if e.get("type") == "message"
                 and (e.get("message") or {}).get("role") == "assistant"), None)
    if last is None:
        return

    def read_price(provider: str, model_id: str) -> float:
        model = session.models.find(provider, model_id) if session.models is not None else None
        return model.cost.cache_read / 1_000_000 if model is not None else 0.0

    miss = cache_misses(branch, read_price).get(str(last.get("id")))
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
