"""The sessions one ACP server holds: each a pi AgentSession built as the CLI builds one, for the client's cwd.

The command line's flags (``--model``, ``--tools``, ``-e``...) hold for every session; the session flags
(``--session``, ``--continue``...) do not: the client says which session it wants. Settings and plugins are
loaded once per project folder; the editor answers the project-trust question, on the session being opened.
"""

from __future__ import annotations

import asyncio
import copy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.acp.ui import OPENING

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.app.args import Args
    from pi_core.app.startup import Startup
    from pi_core.session import AgentSession
    from pi_core.ui import UI

MODE_NAME = "acp"


class SessionNotFound(PiError):
    pass


class SessionFactory:
    def __init__(self, args: Args, first: Startup) -> None:
        from pi_core.app.trust import canonical

        self.args = args
        self.first_cwd = Path(first.cwd)
        self._envs: dict[str, Startup] = {canonical(first.cwd): first}
        self._loading: dict[str, asyncio.Future[Startup]] = {}
        self._asked: set[str] = set()  # projects whose trust a client was asked about (or could have been)

    async def environment(self, cwd: Path, asker: UI | None = None) -> Startup:
        """Settings and plugins for ``cwd``, loaded in a worker thread the first time a session asks. ``asker``
        answers the project-trust question (the editor, through the session being opened); a project the CLI
        loaded before any client could answer is loaded again the first time one can."""
        from pi_core.app.trust import canonical

        key = canonical(cwd)
        known = self._envs.get(key)
        if known is not None and not (asker is not None and self.would_ask(cwd)):
            return known
        if key not in self._loading:
            if asker is not None:
                self._asked.add(key)
            token = OPENING.set(asker)
            try:  # to_thread copies the context: the worker's start-up UI is this session's
                self._loading[key] = asyncio.ensure_future(asyncio.to_thread(self._load, Path(key)))
            finally:
                OPENING.reset(token)
        try:
            env = await asyncio.shield(self._loading[key])
        finally:
            self._loading.pop(key, None)
        self._envs[key] = env
        return env

    def would_ask(self, cwd: Path) -> bool:
        """Whether opening a session in ``cwd`` would ask the client about trusting it: the CLI decided the
        project before any client could answer."""
        from pi_core.app.trust import canonical

        key = canonical(cwd)
        known = self._envs.get(key)
        return known is not None and known.trust is not None and known.trust.source == "no-ui" \
            and key not in self._asked

    def _load(self, cwd: Path) -> Startup:
        from pi_core.app.startup import check_plugins, load_environment

        env = load_environment(self.args, cwd, mode=MODE_NAME)
        check_plugins(env)
        for warning in env.warnings:
            sys.stderr.write((warning if warning.startswith("Warning:") else f"Warning: {warning}") + "\n")
        return env

    def session_args(self, session_id: str | None, *, fork: bool = False) -> Args:
        args = copy.copy(self.args)
        args.session = args.fork = args.name = None
        args.continue_ = args.resume = args.no_session = False
        args.session_id = session_id
        if fork:
            args.fork, args.session_id = session_id, None
        args.messages, args.file_args = [], []
        return args

    async def build(self, cwd: Path, session_id: str | None = None, *, fork: bool = False, new_id: str | None = None,
                    asker: UI | None = None) -> AgentSession:
        """A new session for ``cwd``, or the saved session ``session_id`` of that project (or a fork of it)."""
        from pi_core.app.startup import build_session
        from pi_core.sessions.lookup import find_by_id
        from pi_core.sessions.store import resolve_session_dir

        env = await self.environment(cwd, asker)
        if session_id is not None:
            session_dir = resolve_session_dir(env.cwd, self.args.session_dir, env.settings.session_dir)
            if find_by_id(session_id, env.cwd, session_dir) is None:
                raise SessionNotFound(f"No session {session_id} for {env.cwd}")
        shown = len(env.warnings)
        args = self.session_args(session_id, fork=fork)
        if new_id is not None:
            args.session_id = new_id  # the id the trust question was asked on
        session = build_session(args, env, model_optional=True)
        for warning in env.warnings[shown:]:
            if new_id is not None and warning.startswith("No project session found with id"):
                continue  # a new session is what was asked for
            sys.stderr.write((warning if warning.startswith("Warning:") else f"Warning: {warning}") + "\n")
        return session

    @staticmethod
    def has_credentials(env: Startup) -> bool:
        """Whether any model has credentials now (auth.json and models.json read again: the user may just have
        signed in)."""
        from pi_core.models.registry import ModelRegistry

        return bool(ModelRegistry.from_plugins(env.plugins, env.agent_dir).available_models())

    def list_saved(self, cwd: Path | None) -> list[Any]:
        """Saved sessions, newest first: of ``cwd``'s project, or of every project."""
        from pi_core.sessions.manager import SessionManager

        if cwd is None:
            found = SessionManager.list_all()
        else:
            from pi_core.sessions.store import resolve_session_dir

            first = next(iter(self._envs.values()))
            found = SessionManager.list(cwd, resolve_session_dir(cwd, self.args.session_dir,
                                                                 first.settings.session_dir))
        return sorted(found, key=lambda info: info.modified, reverse=True)
