"""The ``pi`` process around a run: whether it ends right after (``EXITING``), the fast exit, the start-up
stand-in editor's start and release (``pi_core.app.typeahead``), and a mode's coroutine run to its end.

Imported by ``pi --version`` too: nothing beyond ``os`` and ``sys`` at module level.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # typing's, without importing typing (pi_core/__init__.py says why)
if TYPE_CHECKING:
    from collections.abc import Callable

    from pi_core.session import AgentSession

EXITING = False  # set by start(): the process ends right after the run, so the modes may skip teardown


def start() -> None:
    """``cli()``'s first step: a process with no profiler or debugger attached ends right after its run."""
    global EXITING
    EXITING = sys.getprofile() is None and sys.gettrace() is None


def exit_now(code: int) -> None:
    """Leave as soon as the run is done: the session file is written and closed, the terminal restored
    (the modes do both before returning), atexit handlers run (temp dirs); then flush stdout/stderr
    and ``os._exit``, skipping the interpreter's teardown of ~500 modules (0.1-0.4 s that Pi never pays)."""
    import atexit

    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # a profiler or debugger writes its results after the program: let it
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``pi -p … | head``): nothing left to deliver
            pass
    os._exit(code)


def out(text: str) -> None:
    release_typeahead()  # the start-up stand-in editor gives way (what was typed stays on screen)
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    release_typeahead()
    sys.stderr.write(text + "\n")


# Options that never keep a run from being interactive: flags, and options with one value. Anything else (-p,
# --mode, --api-key, -r, --help, an unknown flag, a first word that may be a command) waits for the real parse.
_NEUTRAL_FLAGS = frozenset((
    "-c", "--continue", "--no-session", "--no-tools", "-nt", "--no-builtin-tools", "-nbt", "--no-extensions", "-ne",
    "--no-skills", "-ns", "--no-prompt-templates", "-np", "--no-themes", "--no-context-files", "-nc", "--verbose",
    "--offline", "--no-mcp", "--approve", "-a", "--no-approve", "-na"))
_NEUTRAL_OPTIONS = frozenset((
    "--provider", "--model", "--models", "--thinking", "--session", "--session-id", "--session-dir", "--fork",
    "--system-prompt", "--append-system-prompt", "--use-theme", "--theme", "--tools", "-t", "--exclude-tools", "-xt",
    "--extension", "-e", "--skill", "--prompt-template", "--disable-plugin", "--name", "-n", "--sandbox",
    "--tui-mode"))


def plainly_interactive(argv: list[str]) -> bool:
    """Whether ``argv`` surely asks for the interactive UI (the real parse then decides for good)."""
    if sys.platform == "win32" or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    i, words = 0, False
    while i < len(argv):
        token = argv[i]
        if token in _NEUTRAL_OPTIONS:
            i += 1
        elif token == "--" or token.startswith("@"):
            words = True
        elif token not in _NEUTRAL_FLAGS and (token.startswith("-") or not (words or " " in token)):
            return False
        else:
            words = words or not token.startswith("-")
        i += 1
    return True


def start_typeahead() -> None:
    """The stand-in editor from now on, taking keys while the plugins and the UI load."""
    if sys.platform != "win32":
        from pi_core.app import typeahead

        typeahead.start()


def release_typeahead() -> None:
    if "pi_core.app.typeahead" in sys.modules:
        sys.modules["pi_core.app.typeahead"].release()


def hand_typeahead_to(run: Callable[..., object]) -> None:
    if "pi_core.app.typeahead" in sys.modules:
        sys.modules["pi_core.app.typeahead"].hand_to(run)


_collecting_paused = False


def startup_begins() -> None:
    """The garbage collector off until ``startup_over()``: start-up creates some hundred thousand objects that
    live as long as the process (modules, classes, plugins, the catalog); collecting while they pile up finds
    nothing (~2 % of a print run's instructions). Only in pi's own process (``EXITING``): a test or an
    embedding program keeps its collector as it was."""
    global _collecting_paused
    if EXITING and gc.isenabled():
        gc.disable()
        _collecting_paused = True


def startup_over() -> None:
    """The session is built: what start-up made is frozen, so the collector never walks it again (not at the
    first request either, where re-enabling alone would walk it all at once). Idempotent."""
    global _collecting_paused
    if _collecting_paused:
        _collecting_paused = False
        gc.freeze()
        gc.enable()


def run_to_end(coro: object, session: AgentSession) -> int:
    """A mode's ``run`` coroutine to its end, with pi's signal handling (``run_with_signals``)."""
    from pi_core.modes.print_mode import run_with_signals

    return run_with_signals(coro, session, exiting=EXITING)  # type: ignore[arg-type]
