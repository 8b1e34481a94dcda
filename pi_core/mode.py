"""What a mode is: one way to run a session (text, JSON, RPC, the interactive UI), found through ``pi_modes``.

``pi --mode NAME`` runs the mode of that name; ``-p`` is ``text``; with no flag pi runs ``interactive`` when
stdin and stdout are terminals, else ``text``. A plugin can add its own (``pi --mode web``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from pi_core.types import ImageContent
    from pi_core.ui import UI

Session = TypeVar("Session")


@dataclass(eq=False, repr=False)
class ModeRequest(Generic[Session]):
    """What the CLI hands a mode: the ready session (a ``pi_core.session.AgentSession``: a mode annotates
    ``ModeRequest[AgentSession]``; the kernel does not import the runtime) and what the user asked for.

    ``messages`` are the prompts in order; the first already carries piped stdin and ``@file`` text, and
    ``images`` belong to it. ``warnings`` were printed to stderr at start-up (a UI may show them again).
    """

    session: Session
    messages: list[str] = field(default_factory=list)
    images: list[ImageContent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    verbose: bool = False
    args: Any = None  # the parsed command line (pi_core.app.args.Args), for a mode's own flags (--use-theme)
    # The settings and plugins the CLI loaded (pi_core.app.startup.Startup): a mode that serves several sessions
    # (ACP) builds the others from them.
    startup: Any = None


@dataclass(eq=False, repr=False)
class Mode:
    """A mode a plugin returns from ``pi_modes``.

    ``run`` serves the request and returns the exit code. ``pick_session`` lets ``pi -r`` choose among
    sessions (newest first; None when the user cancels); the interactive UI has one. ``startup_ui``
    builds a UI that can ask the user before any session exists (the project-trust prompt, a plugin's
    ``pi_project_trust``); modes without one cannot ask at start-up. ``stdio``: the mode speaks a protocol on
    stdin/stdout (RPC, ACP), so the CLI reads no prompt from stdin, takes no ``@file`` arguments, starts without
    a model (the client may choose one) and keeps file descriptor 1 for the protocol.
    """

    name: str
    run: Callable[[ModeRequest[Any]], Awaitable[int]]
    description: str = ""
    pick_session: Callable[[list[Any]], Path | None] | None = None
    startup_ui: Callable[[], UI] | None = None
    stdio: bool = False
