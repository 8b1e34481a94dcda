"""Interactive mode: the terminal UI users live in (``pi`` with no ``-p`` on a terminal).

Only imported when interactive mode is chosen; rich and prompt_toolkit load inside ``run_interactive``
so that nothing else pays for them. ``pi_plugins.interactive.renderers`` is also a plugin module (the
built-in tool renderers, ``trylast``).
"""

from __future__ import annotations

from typing import Any

from pi_plugins.interactive.header import StartupInfo

__all__ = ["StartupInfo", "run_interactive", "run_interactive_sync"]


async def run_interactive(session: Any, *, initial_message: str | None = None,
                          initial_images: list[Any] | None = None, startup: Any = None,
                          header: StartupInfo | None = None, input: Any = None, output: Any = None,
                          console: Any = None) -> int:
    """Run the UI until the user quits; returns the exit code. The terminal is restored on any exit.

    ``startup`` is the CLI's start-up environment (plugins, resources, warnings) for the header;
    ``header`` replaces it. ``input``/``output``/``console`` are for tests (prompt_toolkit pipe
    input and output, a recording rich console for the scrollback).
    """
    import asyncio
    import sys
    import traceback

    from pi_plugins.interactive.app import InteractiveApp

    try:
        app = InteractiveApp(session, startup=startup, header=header, console=console, input=input, output=output)
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
