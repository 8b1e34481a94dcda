"""The ACP agent: every request an editor can send, answered from pi's sessions (docs/acp.md).

Each method maps onto a ``LiveSession`` (one pi session and its control). Failures become JSON-RPC errors with
pi's own words: ``PiError`` texts as they are, anything else as an internal error whose traceback goes to
stderr (the client's agent log), never to the client.
"""

from __future__ import annotations

import asyncio
import functools
import re
import sys
import traceback
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from acp import PROTOCOL_VERSION, RequestError, schema
from pi_plugins.acp.live import LiveSession, ask_client
from pi_plugins.acp.prompt import prompt_parts
from pi_plugins.acp.sessions import SessionFactory, SessionNotFound
from pi_plugins.acp.ui import AcpUI

from pi_core import __version__
from pi_core.errors import PiError

if TYPE_CHECKING:
    from acp.interfaces import Client

    from pi_core.mode import ModeRequest
    from pi_core.session import AgentSession

P = ParamSpec("P")
R = TypeVar("R")

AUTH_METHOD = "pi-credentials"
SERVER_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
LIST_PAGE = 50


def answers(method: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
    """A request handler whose failures reach the client as JSON-RPC errors, never as a traceback."""

    @functools.wraps(method)
    async def handler(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except RequestError:
            raise
        except SessionNotFound as err:
            raise RequestError(-32002, str(err), {"details": str(err)}) from None
        except PiError as err:
            raise RequestError(-32603, str(err), {"details": str(err)}) from None
        except Exception as err:  # noqa: BLE001 - the traceback goes to stderr, the client gets an error
            sys.stderr.write(f"pi: {method.__name__} failed:\n{traceback.format_exc()}")
            text = str(err) or type(err).__name__
            raise RequestError(-32603, f"Internal error: {text}", {"details": text}) from None

    return handler


def client_mcp_servers(servers: list[Any] | None) -> dict[str, dict[str, Any]]:
    """The MCP servers a client passed, as ``mcpServers`` entries of pi's mcp.json (names made valid)."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers or []:
        name = SERVER_NAME_CHARS.sub("_", server.name).strip("_") or "editor"
        kind = getattr(server, "type", None)
        if kind in ("http", "sse"):
            entry: dict[str, Any] = {"url": server.url, "headers": {h.name: h.value for h in server.headers or []}}
            if kind == "sse":
                entry["type"] = "sse"  # pi's MCP plugin says it does not speak legacy SSE
        else:
            entry = {"command": server.command, "args": list(server.args or []),
                     "env": {v.name: v.value for v in server.env or []}}
        entry["exposure"] = "direct"  # the editor chose them for this session: declared at once, no tool_search
        entries[name] = entry
    return entries


class PiAgent:
    """``acp.interfaces.Agent`` over pi: several sessions in one process, each with its own cwd."""

    def __init__(self, request: ModeRequest[AgentSession]) -> None:
        self.factory = SessionFactory(request.args, request.startup)
        self.loop = asyncio.get_running_loop()
        self.sessions: dict[str, LiveSession] = {}
        self.caps: schema.ClientCapabilities | None = None
        self.client: Client | None = None
        args = request.args
        fresh = not (args.session or args.continue_ or args.resume or args.fork or args.session_id)
        # The session the CLI built: the first session/new for its folder takes it instead of building one.
        self._spare: AgentSession | None = request.session if fresh else None

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # --- connection ------------------------------------------------------------------------------------

    @answers
    async def initialize(self, protocol_version: int, client_capabilities: schema.ClientCapabilities | None = None,
                         client_info: schema.Implementation | None = None, **kwargs: Any) -> schema.InitializeResponse:
        self.caps = client_capabilities
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=False),
                session_capabilities=schema.SessionCapabilities(
                    list=schema.SessionListCapabilities(), close=schema.SessionCloseCapabilities(),
                    resume=schema.SessionResumeCapabilities(), fork=schema.SessionForkCapabilities())),
            auth_methods=[schema.AuthMethodAgent(
                id=AUTH_METHOD, name="pi's credentials",
                description="Sign in with `pi auth login <provider>` in a terminal, or set the provider's API key "
                            "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) or a models.json entry; then retry.")],
            agent_info=schema.Implementation(name="pi", title="pi", version=__version__))

    @answers
    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse:
        if method_id != AUTH_METHOD:
            raise RequestError.invalid_params({"details": f'Unknown auth method "{method_id}" '
                                                          f'(available: {AUTH_METHOD})'})
        env = await self.factory.environment(self.factory.first_cwd)
        if not await asyncio.to_thread(self.factory.has_credentials, env):
            raise self._auth_required()
        return schema.AuthenticateResponse()

    def _auth_required(self) -> RequestError:
        from pi_core.models.resolution import no_models_text

        return RequestError(-32000, "Authentication required", {"details": no_models_text()})

    # --- sessions --------------------------------------------------------------------------------------

    @answers
    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> schema.NewSessionResponse:
        folder = _absolute(cwd)
        session = None if self.factory.would_ask(folder) else self._take_spare(folder)
        if session is None:
            from pi_core.sessions.format import uuid7

            new_id = uuid7()  # known before the session exists: the trust question is asked on it
            assert self.client is not None
            asker = AcpUI(functools.partial(ask_client, self.client, new_id), self.loop)
            session = await self.factory.build(folder, new_id=new_id, asker=asker)
        live = await self._open(session, mcp_servers)
        self.loop.call_soon(lambda: asyncio.ensure_future(live.announce()))  # once the client knows the id
        return schema.NewSessionResponse(session_id=live.id, modes=live.modes(), config_options=live.config_options())

    @answers
    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None,
                           **kwargs: Any) -> schema.LoadSessionResponse:
        if session_id in self.sessions:
            await self.sessions.pop(session_id).close()  # the client reopens it: start from the file
        session = await self.factory.build(_absolute(cwd), session_id)
        live = await self._open(session, mcp_servers)
        await live.replay_history()
        await live.announce()
        return schema.LoadSessionResponse(modes=live.modes(), config_options=live.config_options())

    @answers
    async def resume_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                             mcp_servers: list[Any] | None = None, **kwargs: Any) -> schema.ResumeSessionResponse:
        """``session/load`` without the history replayed (the client still shows it)."""
        live = self.sessions.get(session_id)
        if live is None:
            live = await self._open(await self.factory.build(_absolute(cwd), session_id), mcp_servers)
            await live.announce()
        return schema.ResumeSessionResponse(modes=live.modes(), config_options=live.config_options())

    @answers
    async def fork_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                           mcp_servers: list[Any] | None = None, **kwargs: Any) -> schema.ForkSessionResponse:
        """A new session that starts with a copy of ``session_id``'s history (``pi --fork``)."""
        live = self.sessions.get(session_id)
        if live is not None:
            await live.settled()  # a turn still running is saved first
        session = await self.factory.build(_absolute(cwd), session_id, fork=True)
        forked = await self._open(session, mcp_servers)
        self.loop.call_soon(lambda: asyncio.ensure_future(forked.announce()))
        return schema.ForkSessionResponse(session_id=forked.id, modes=forked.modes(),
                                          config_options=forked.config_options())

    @answers
    async def close_session(self, session_id: str, **kwargs: Any) -> schema.CloseSessionResponse:
        """Stop the session's turn (saved as aborted) and let it go; ``session/load`` opens it again."""
        await self._live(session_id).close()
        self.sessions.pop(session_id, None)
        return schema.CloseSessionResponse()

    @answers
    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> schema.ListSessionsResponse:
        found = await asyncio.to_thread(self.factory.list_saved, _absolute(cwd) if cwd else None)
        start = int(cursor) if cursor and cursor.isdigit() else 0
        page = found[start:start + LIST_PAGE]
        sessions = [schema.SessionInfo(session_id=info.id, cwd=info.cwd, title=info.name or info.first_message[:80]
                                       or None, updated_at=_iso(info.modified)) for info in page]
        more = start + LIST_PAGE < len(found)
        return schema.ListSessionsResponse(sessions=sessions, next_cursor=str(start + LIST_PAGE) if more else None)

    def _take_spare(self, cwd: Path) -> AgentSession | None:
        spare, self._spare = self._spare, None
        if spare is not None and Path(spare.cwd).resolve() == cwd.resolve():
            return spare
        return None

    async def _open(self, session: AgentSession, mcp_servers: list[Any] | None) -> LiveSession:
        if session.model is None or session.model.id == "unknown":
            raise self._auth_required()  # a client shows its sign-in choices, then asks again
        servers = client_mcp_servers(mcp_servers)
        if servers:
            from pi_plugins.mcp import use_client_servers

            use_client_servers(session, servers)
        assert self.client is not None
        live = LiveSession(session, self.client, self.caps, self.loop)
        await session.start("startup")
        self.sessions[live.id] = live
        return live

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise SessionNotFound(f"Unknown session {session_id} (open it with session/new or session/load)")
        return live

    # --- a session's settings ----------------------------------------------------------------------------

    @answers
    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        await self._live(session_id).set_mode(mode_id)
        return schema.SetSessionModeResponse()

    @answers
    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> schema.SetSessionConfigOptionResponse:
        live = self._live(session_id)
        live.set_option(config_id, value)
        return schema.SetSessionConfigOptionResponse(config_options=live.config_options())

    # --- turns ---------------------------------------------------------------------------------------------

    @answers
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> schema.PromptResponse:
        live = self._live(session_id)
        text, images = prompt_parts(prompt)
        return schema.PromptResponse(stop_reason=await live.run_prompt(text, images))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close(self) -> None:
        """The client went away: stop every turn (saved as aborted) and shut the sessions down."""
        for live in list(self.sessions.values()):
            try:
                await live.close()
            except Exception:  # noqa: BLE001 - one session failing to close must not keep the others open
                sys.stderr.write(f"pi: closing session {live.id} failed:\n{traceback.format_exc()}")
        self.sessions.clear()


def _absolute(cwd: str) -> Path:
    path = Path(cwd).expanduser()
    if not path.is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"details": f"cwd is not a directory: {cwd}"})
    return path


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
