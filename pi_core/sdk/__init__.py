"""The Python SDK (docs/sdk.md): pi's agent session in a program, in the spirit of Pi's ``createAgentSession``.

``create_session(...)`` builds the session exactly as the ``pi`` command does (settings, plugins, model
resolution, session store: ``pi_core.app.startup``) and returns a :class:`Session`, a thin typed facade on
``AgentSession`` and ``SessionControl``: the same agent loop the print, JSON and RPC modes drive. Events are the
objects JSON mode prints (``event.to_json()`` is that line). Several sessions may live in one process.
:class:`SyncSession` (``create_session_sync``) wraps it for scripts and notebooks.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self, TypedDict, TypeVar, Unpack

from pi_core.errors import PiError
from pi_core.events import AgentEvent
from pi_core.tools import Tool
from pi_core.types import AgentMessage, ImageContent

if TYPE_CHECKING:
    from pi_core.hookspecs.results import CompactionResult
    from pi_core.session import AgentSession

__all__ = ["ImageContent", "SdkError", "Session", "SessionState", "SyncSession", "create_session",
           "create_session_sync", "image_from_file"]


class SdkError(PiError):
    """A call the session cannot take now (a prompt during a run, a disposed session)."""


@dataclass(frozen=True)
class SessionState:
    """A read-only snapshot of the session."""

    session_id: str | None
    session_file: Path | None
    model: str | None  # "provider/id"
    thinking_level: str
    tools: tuple[str, ...]
    messages: tuple[AgentMessage, ...]
    is_streaming: bool


class Session:
    """One agent session. Build it with :func:`create_session`; ``dispose()`` (or ``async with``) ends it."""

    def __init__(self, session: AgentSession) -> None:
        from pi_core.control.session_control import SessionControl

        self._session = session
        self._control = SessionControl(session)
        self._queues: list[asyncio.Queue[AgentEvent | None]] = []
        self._run: asyncio.Task[str] | None = None
        self._disposed = False
        session.subscribe(self._fan_out)

    def _fan_out(self, event: AgentEvent) -> None:
        for queue in self._queues:
            queue.put_nowait(event)

    def _live(self) -> AgentSession:
        if self._disposed:
            raise SdkError("This session was disposed")
        return self._session

    # --- runs ----------------------------------------------------------------------------------

    async def prompt(self, text: str, images: Sequence[ImageContent] = ()) -> str:
        """Run a prompt until the agent settles; returns ``"started"`` or ``"handled"`` (a plugin command).
        ``images`` go with the text (:func:`image_from_file` reads one). A prompt while a run is active is
        refused: use :meth:`steer` or :meth:`follow_up`."""
        session = self._live()
        if self.is_running:
            raise SdkError("A run is in progress: steer() or follow_up() queue a message for it, "
                           "or wait_for_idle() first")
        self._run = asyncio.ensure_future(session.prompt(text, list(images) or None, source="sdk"))
        try:
            return await asyncio.shield(self._run)
        finally:
            if self._run is not None and self._run.done():
                self._run = None

    @property
    def is_running(self) -> bool:
        return (self._run is not None and not self._run.done()) or not self._session.is_idle

    def steer(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        """Deliver ``text`` after the current tool calls, before the next model turn."""
        self._live().steer(text, list(images) or None)

    def follow_up(self, text: str, images: Sequence[ImageContent] = ()) -> None:
        """Deliver ``text`` once the agent would otherwise stop."""
        self._live().follow_up(text, list(images) or None)

    async def abort(self) -> None:
        """Stop the run (and a pending retry) and wait until the session is idle."""
        await self._live().abort()
        await self.wait_for_idle()

    async def wait_for_idle(self) -> None:
        if self._run is not None:
            await asyncio.wait({self._run})
        await self._session.wait_for_idle()

    async def events(self) -> AsyncIterator[AgentEvent]:
        """Every event from now on, in order (``agent_settled`` included), until the session is disposed."""
        queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        self._queues.append(queue)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            self._queues.remove(queue)

    # --- session operations --------------------------------------------------------------------

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        return await self._live().compact(instructions)

    def fork_points(self) -> list[tuple[str, str]]:
        """(entry id, text) of each user message: where :meth:`fork` can start."""
        return [(point["entryId"], point["text"]) for point in self._control.fork_messages()]

    async def fork(self, entry_id: str) -> str:
        """A new session from the user message ``entry_id``; returns that message's text."""
        text, _cancelled = await self._control.fork(entry_id)
        return text

    async def new_session(self) -> bool:
        return bool(await self._control.new_session(None))

    async def switch_session(self, session_file: str | Path) -> bool:
        return bool(await self._control.switch_session(str(session_file)))

    @property
    def state(self) -> SessionState:
        session = self._session
        store = session.store
        model = session.config.model
        return SessionState(
            session_id=store.session_id, session_file=Path(store.session_file) if store.session_file else None,
            model=f"{model.provider}/{model.id}" if model is not None else None,
            thinking_level=session.thinking_level, tools=tuple(session.active_tool_names),
            messages=tuple(session.messages), is_streaming=session.is_streaming)

    def last_text(self) -> str | None:
        """The text of the last assistant reply."""
        return self._control.last_assistant_text()

    async def dispose(self) -> None:
        """Abort a run, end the session (plugins see ``session_shutdown``) and close every event iterator."""
        if self._disposed:
            return
        if self.is_running:
            await self.abort()
        self._disposed = True
        await self._session.shutdown("quit")
        for queue in self._queues:
            queue.put_nowait(None)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.dispose()


def image_from_file(path: str | Path) -> ImageContent:
    """An image file as prompt content, resized as ``pi @image.png`` resizes it (PNG, JPEG, GIF, WebP)."""
    from pi_core.toolkit.images import SNIFF_BYTES, detect_image_mime_type, fit_image

    if not Path(path).is_file():  # a FIFO or a directory would block or fail obscurely
        raise SdkError(f"Image not found or not a file: {path}")
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise SdkError(f"Could not read image {path}: {err.strerror or err}") from err
    mime = detect_image_mime_type(data[:SNIFF_BYTES])
    if mime is None:
        raise SdkError(f"{path} is not a PNG, JPEG, GIF or WebP image")
    fitted = fit_image(data, mime)
    if fitted is None:
        raise SdkError(f"{path} could not be resized below the inline image size limit")
    return ImageContent(data=fitted.data, mime_type=fitted.mime_type)


SessionStorage = Literal["memory", "disk"]
T = TypeVar("T")


class SessionOptions(TypedDict, total=False):
    """The keyword arguments of :func:`create_session`, which :func:`create_session_sync` passes on."""

    cwd: str | Path | None
    model: str | None
    provider: str | None
    thinking: str | None
    tools: Sequence[str] | None
    custom_tools: Iterable[Tool]
    plugins: Sequence[str | Path]
    no_plugins: bool
    storage: SessionStorage
    session_dir: str | Path | None
    session_file: str | Path | None
    system_prompt: str | None
    api_key: str | None
    trust_project: bool


async def create_session(
    *, cwd: str | Path | None = None, model: str | None = None, provider: str | None = None,
    thinking: str | None = None, tools: Sequence[str] | None = None, custom_tools: Iterable[Tool] = (),
    plugins: Sequence[str | Path] = (), no_plugins: bool = False, storage: SessionStorage = "memory",
    session_dir: str | Path | None = None, session_file: str | Path | None = None,
    system_prompt: str | None = None, api_key: str | None = None, trust_project: bool = False,
) -> Session:
    """A started session built as the ``pi`` command builds one.

    ``model`` is a pattern as ``--model`` takes (``"provider/id"``), ``tools`` the built-in or plugin tool names
    (``--tools``), ``custom_tools`` :class:`pi_core.tools.Tool` objects added to them, ``plugins`` plugin files
    or ``plugin:NAME`` (``-e``). ``storage="memory"`` keeps nothing on disk; ``"disk"`` writes a session file
    (under ``session_dir`` when given); ``session_file`` opens that file. ``trust_project`` runs the project's
    ``.pi`` plugins (as ``-a``); otherwise they stay off, with no question asked.
    """
    from pi_core.app import startup
    from pi_core.app.args import Args

    args = Args()
    args.model, args.provider, args.thinking, args.api_key = model, provider, thinking, api_key
    extra = list(custom_tools)
    args.tools = [*tools, *(t.name for t in extra)] if tools is not None else None
    args.extensions = [str(p) for p in plugins]
    args.no_extensions = no_plugins
    args.system_prompt = system_prompt
    args.approve = trust_project
    args.no_session = storage == "memory" and session_file is None
    args.session = str(session_file) if session_file is not None else None
    args.session_dir = str(session_dir) if session_dir is not None else None
    where = Path(cwd).resolve() if cwd is not None else Path.cwd()
    env = startup.load_environment(args, where)
    for tool in extra:  # as if a plugin named "sdk" contributed them: a custom tool replaces one of its name
        env.registry.tools.items[tool.name] = tool
        env.registry.tools.owner[tool.name] = "sdk"
    session = startup.build_session(args, env)
    await session.start("startup")
    return Session(session)


class SyncSession:
    """:class:`Session` for scripts and notebooks: each call runs to completion on a private event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, session: Session) -> None:
        self._loop = loop
        self.session = session

    def _run(self, awaitable: Awaitable[T]) -> T:
        return self._loop.run_until_complete(awaitable)

    def prompt(self, text: str, images: Sequence[ImageContent] = ()) -> str:
        return str(self._run(self.session.prompt(text, images)))

    def prompt_events(self, text: str, images: Sequence[ImageContent] = ()) -> Iterator[AgentEvent]:
        """Run a prompt; returns the events it produced, in order, once it settled."""
        seen: list[AgentEvent] = []
        unsubscribe = self.session._session.subscribe(seen.append)
        try:
            self.prompt(text, images)
        finally:
            unsubscribe()
        return iter(seen)

    def compact(self, instructions: str | None = None) -> CompactionResult:
        return self._run(self.session.compact(instructions))

    def fork(self, entry_id: str) -> str:
        return str(self._run(self.session.fork(entry_id)))

    def new_session(self) -> bool:
        return bool(self._run(self.session.new_session()))

    def switch_session(self, session_file: str | Path) -> bool:
        return bool(self._run(self.session.switch_session(session_file)))

    @property
    def state(self) -> SessionState:
        return self.session.state

    def last_text(self) -> str | None:
        return self.session.last_text()

    def dispose(self) -> None:
        try:
            self._run(self.session.dispose())
        finally:
            self._loop.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()


def create_session_sync(**options: Unpack[SessionOptions]) -> SyncSession:
    """:func:`create_session` for code without an event loop (takes the same keyword arguments)."""
    loop = asyncio.new_event_loop()
    try:
        session = loop.run_until_complete(create_session(**options))
    except BaseException:
        loop.close()
        raise
    return SyncSession(loop, session)
