"""Interactive mode: the terminal UI users live in (``pi`` with no ``-p`` on a terminal), as a plugin.

It registers the ``interactive`` mode through ``pi_modes``; rich and prompt_toolkit load only when the
mode runs, so nothing else pays for them. ``pi_plugins.interactive.renderers`` is a plugin module too
(the built-in tool renderers, ``trylast``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.hookspecs import hookimpl
from pi_core.mode import Mode, ModeRequest

if TYPE_CHECKING:
    from pi_plugins.interactive.header import StartupInfo

    from pi_core.ui import UI

__all__ = ["StartupInfo", "run_interactive", "run_interactive_sync"]


def __getattr__(name: str) -> Any:
    # The plugin loads on every start (``pi -p`` too): the header and its imports wait until the UI runs.
    if name == "StartupInfo":
        from pi_plugins.interactive.header import StartupInfo

        return StartupInfo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def run_mode(request: ModeRequest) -> int:
    session = request.session
    settings = session.settings
    quiet = bool(settings is not None and settings.get("quietStartup", False) is True) and not request.verbose
    first = request.messages[0] if request.messages else None
    from pi_plugins.interactive.fullscreen import tui_mode

    mode, problem = tui_mode(request.args, settings)
    if problem is not None:
        request.warnings.append(problem)
    from pi_plugins.interactive.usage_notices import anthropic_extra_usage_warning

    extra_usage = anthropic_extra_usage_warning(session)
    if extra_usage is not None:
        request.warnings.append(extra_usage)
    return await run_interactive(session, initial_message=first, initial_images=request.images,
                                 startup=request, quiet_startup=quiet, tui_mode=mode)


run_mode.takes_typeahead = True  # type: ignore[attr-defined]  # the app replays the keys typed at start-up


def pick_session(infos: list[Any]) -> Path | None:
    from pi_plugins.interactive.pickers import pick_session as pick

    return pick(infos)


def startup_ui() -> UI:
    from pi_plugins.interactive.pickers import StartupUI

    return StartupUI()


@hookimpl
def pi_modes() -> list[Mode]:
    return [Mode("interactive", run_mode, "The terminal UI", pick_session=pick_session, startup_ui=startup_ui)]


async def run_interactive(session: Any, *, initial_message: str | None = None,
                          initial_images: list[Any] | None = None, startup: ModeRequest | None = None,
                          header: StartupInfo | None = None, input: Any = None, output: Any = None,
                          console: Any = None, quiet_startup: bool = False, tui_mode: str = "regular") -> int:
    """Run the UI until the user quits; returns the exit code. The terminal is restored on any exit.

    ``tui_mode`` is ``"regular"`` (drawn below the terminal's scrollback) or ``"fullscreen"`` (fullscreen.py).
    ``startup`` carries the start-up ``warnings`` for the header (a ModeRequest); ``quiet_startup`` hides it;
    ``header`` replaces it. ``input``/``output``/``console`` are for tests (prompt_toolkit pipe
    input and output, a recording rich console for the scrollback).
    """
    import asyncio
    import sys
    import traceback

    from pi_plugins.interactive.app import InteractiveApp

    try:
        app = InteractiveApp(session, startup=startup, header=header, console=console, input=input, output=output,
                             quiet_startup=quiet_startup, tui_mode=tui_mode)
        return await app.run(initial_message, initial_images)
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 130
    except Exception:  # noqa: BLE001 - shown to the user after prompt_toolkit restored the terminal
        sys.stdout.write("\x1b[?25h\n")
        traceback.print_exc()
        return 1


def run_interactive_sync(session: Any, **kwargs: Any) -> int:
    import asyncio

    return asyncio.run(run_interactive(session, **kwargs))
