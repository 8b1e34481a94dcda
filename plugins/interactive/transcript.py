"""The conversation drawn into the scrollback again: after /resume, /tree, /fork, and when the screen is redrawn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.header import render_header, startup_info
from pi_plugins.interactive.hosting import render_lines

from pi_core.events import AgentEvent

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost


def header_renderable(app: AppHost) -> Any:
    """The header: a plugin's (``ui.set_header``) or pi's version, key hints and what was loaded."""
    if app.chrome.header is not None:
        from rich.text import Text

        return Text.from_ansi("\n".join(render_lines(app.chrome.header, app.width())))
    info = app.header or startup_info(app.session, app.startup.warnings if app.startup else None)
    listing = app.setting("quietStartup", False) != "header"  # "header": keep only the header
    verbose = app.startup is not None and app.startup.verbose  # --verbose: everything, as Pi
    return render_header(info, app.session.config.cwd, listing=listing, expanded=app.view.expanded or verbose)


def replay(app: AppHost) -> None:
    """Draw the session's transcript again; custom entries in time order between the messages."""
    from pi_plugins.interactive import usage_notices
    from pi_plugins.interactive.custom_render import entry_time_ms

    view = app.view
    get_branch = getattr(app.session.store, "get_branch", None)
    branch = get_branch() if callable(get_branch) else []
    refreshes = usage_notices.shown(app.session)
    entries = [e for e in branch if e.get("type") == "custom" and e.get("customType") in view.custom.entries
               or refreshes and usage_notices.is_refresh(e)]
    after_reply = usage_notices.replay_misses(app, branch)

    def entries_until(when: float) -> None:
        while entries and entry_time_ms(entries[0]) <= when:
            entry = entries.pop(0)
            if usage_notices.is_refresh(entry):
                usage_notices.show_refresh(app, entry)
                continue
            drawn = view.custom.entry(entry, view.expanded)
            if drawn is not None:
                app.show(drawn)

    for message in app.session.messages:
        entries_until(float(getattr(message, "timestamp", 0) or 0))
        role = getattr(message, "role", None)
        if role == "toolResult":
            view.handle(AgentEvent("tool_execution_end", tool_call_id=message.tool_call_id,
                                   tool_name=message.tool_name, result=message, is_error=message.is_error))
            continue
        view.handle(AgentEvent("message_start", message=message))
        view.handle(AgentEvent("message_end", message=message))
        after_reply(message)
    entries_until(float("inf"))
    view.handle(AgentEvent("agent_end", messages=[]))
    app.entries.reset()


def redraw(app: AppHost) -> None:
    """Clear the screen and its scrollback and draw the header and the whole conversation again."""
    app.scrollback.clear_screen()
    if not app.quiet_startup:  # quietStartup: true has no header, on a redraw (Ctrl+O, /resume) either
        app.scrollback.pending.append(header_renderable(app))
    replay(app)
    app.scrollback.flush()
