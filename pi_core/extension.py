"""What plugins can do at run time (docs/plugins.md#the-extension-context): the context for lifecycle hooks and tools.

Hooks receive an ``ExtensionContext``; tools reach it as ``ctx.pi``. It can change the active tools
(a tool that unlocks others), send messages, append custom session entries, name the session and ask
the user through whatever UI the mode has (interactive, RPC client, or the defaults of print mode).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pi_core.types import ImageContent, Model


class ToolInfo(Protocol):
    name: str
    description: str

    @property
    def exposure(self) -> str: ...
    @property
    def annotations(self) -> dict[str, bool] | None: ...

    @property
    def json_schema(self) -> dict[str, Any]: ...


class SessionHost(Protocol):
    """What a context needs of its session (``pi_core.session.AgentSession`` is the one pi has)."""

    @property
    def cwd(self) -> Path: ...
    @property
    def model(self) -> Model: ...
    @property
    def is_streaming(self) -> bool: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def session_name(self) -> str | None: ...
    @property
    def active_tool_names(self) -> list[str]: ...
    @property
    def available_tools(self) -> Mapping[str, ToolInfo]: ...
    @property
    def project_trusted(self) -> bool: ...
    def messages(self) -> list[Any]: ...

    def set_active_tools(self, names: list[str]) -> None: ...
    def add_tools(self, tools: list[Any]) -> list[str]: ...
    def remove_tools(self, names: list[str]) -> None: ...
    def steer(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None: ...
    def follow_up(self, text: str, images: list[ImageContent] | None = None, *, expanded: bool = False) -> None: ...
    async def prompt(self, text: str, images: list[ImageContent] | None = None, *,
                     streaming_behavior: str | None = None, source: str = "print", expand: bool = True) -> str: ...
    def send_custom_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,
                            deliver_as: str | None = None) -> None: ...
    def append_entry(self, custom_type: str, data: Any = None) -> None: ...
    def set_session_name(self, name: str) -> None: ...
    def request_abort(self) -> None: ...
    def has_queued_messages(self) -> bool: ...
    def request_shutdown(self) -> None: ...


class UI:
    """Asking the user. The base class is the no-UI behaviour of print and JSON mode: defaults only."""

    has_ui = False

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        return False

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return None

    def notify(self, message: str, level: Literal["info", "warning", "error"] = "info") -> None:
        return None

    def set_status(self, key: str, text: str | None = None) -> None:
        return None

    def set_editor_text(self, text: str) -> None:
        return None

    def get_editor_text(self) -> str:
        return ""


@dataclass
class SlashCommand:
    """A ``/name`` command a plugin adds (interactive and RPC ``prompt``). ``handler(args, ctx)``."""

    name: str
    description: str
    handler: Any  # Callable[[str, ExtensionContext], Awaitable[None] | None]


@dataclass
class InputResult:
    """Returned by ``pi_input``: keep going, replace the text, or mark the input as handled."""

    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[ImageContent] | None = None


@dataclass
class BeforeAgentStart:
    """Returned by ``pi_before_agent_start``: a custom message to add, and/or a new system prompt."""

    message: dict[str, Any] | None = None  # {customType, content, display, details}
    system_prompt: str | None = None


@dataclass(frozen=True)
class ProjectTrust:
    """Returned by ``pi_project_trust``: trust the project or not; ``remember`` saves the answer in
    ``<agentDir>/trust.json`` for the project folder (docs/config.md#project-trust)."""

    trusted: bool
    remember: bool = False


@dataclass(frozen=True)
class ProjectTrustContext:
    """What ``pi_project_trust`` gets: the project folder, what in it needs trust, and a UI to ask with.

    ``resources`` names what was found (``.pi/extensions``, ``.pi/settings.toml``, ...). ``ui`` is the
    start-up UI of the mode: interactive mode can ask (``has_ui``); print, JSON and RPC cannot, and
    their ``notify`` writes to stderr. No session exists yet.
    """

    cwd: Path
    mode: str  # "interactive", "text", "json", "rpc"
    ui: UI
    resources: tuple[str, ...] = ()

    @property
    def has_ui(self) -> bool:
        return self.ui.has_ui


@dataclass
class ExtensionContext:
    session: SessionHost
    ui: UI = field(default_factory=UI)

    @property
    def cwd(self) -> Path:
        return self.session.cwd

    @property
    def has_ui(self) -> bool:
        return self.ui.has_ui

    @property
    def model(self) -> Model:
        return self.session.model

    def is_project_trusted(self) -> bool:
        """Whether this run loads the project's protected resources (docs/config.md#project-trust)."""
        return self.session.project_trusted

    # --- tools ------------------------------------------------------------------------------------

    def get_active_tools(self) -> list[str]:
        return self.session.active_tool_names

    def get_all_tools(self) -> list[dict[str, Any]]:
        return [{"name": t.name, "description": t.description, "parameters": t.json_schema,
                 "exposure": t.exposure, "annotations": t.annotations}
                for t in self.session.available_tools.values()]

    def set_active_tools(self, names: list[str]) -> None:
        """Activate exactly these tools (unknown names are ignored); effective from the next turn."""
        known = [n for n in names if n in self.session.available_tools]
        self.session.set_active_tools(known)

    def add_tools(self, tools: list[Any]) -> list[str]:
        """Add ``pi_core.tools.Tool`` objects while the session runs (tools that appear as a connection comes
        up), replacing tools of the same name. ``--tools``/``--exclude-tools`` still apply; ``direct`` tools become active from the next
        model request, ``deferred`` ones wait to be activated. Returns the names actually added."""
        return self.session.add_tools(tools)

    def remove_tools(self, names: list[str]) -> None:
        """Withdraw tools added with ``add_tools``: from the next model request they are neither declared nor callable."""
        self.session.remove_tools(names)

    def get_messages(self) -> list[Any]:
        """The conversation on the current branch, oldest first (e.g. to restore what earlier tool calls loaded)."""
        return list(self.session.messages)

    # --- messages and entries ---------------------------------------------------------------------

    def send_user_message(self, text: str, images: list[ImageContent] | None = None, *,
                          deliver_as: Literal["steer", "followUp"] | None = None) -> None:
        """Queue (while streaming) or start a prompt, without command/skill/template processing."""
        if self.session.is_streaming:
            if deliver_as is None:
                raise RuntimeError("The agent is streaming: pass deliver_as='steer' or 'followUp'")
            queue = self.session.steer if deliver_as == "steer" else self.session.follow_up
            queue(text, images, expanded=True)
            return
        asyncio.get_running_loop().create_task(self.session.prompt(text, images, expand=False))

    def send_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,
                     deliver_as: Literal["steer", "followUp", "nextTurn"] | None = None) -> None:
        self.session.send_custom_message(custom_type, content, display=display, details=details,
                                         deliver_as=deliver_as)

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        self.session.append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self.session.set_session_name(name)

    def get_session_name(self) -> str | None:
        return self.session.session_name

    # --- run control ------------------------------------------------------------------------------

    def is_idle(self) -> bool:
        return not self.session.is_streaming

    def abort(self) -> None:
        self.session.request_abort()

    def has_pending_messages(self) -> bool:
        return self.session.has_queued_messages()

    def shutdown(self) -> None:
        """Ask the mode to quit: interactive when idle, RPC after the next response, print: nothing."""
        self.session.request_shutdown()

    def get_system_prompt(self) -> str:
        return self.session.system_prompt
