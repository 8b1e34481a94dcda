"""What the extension context needs of its session, and the records the context's methods return.

``SessionHost`` is the session as ``ExtensionContext`` (``pi_core.extension``) reaches it; the session runtime
(``pi_core.session.AgentSession``) is the one pi has, and a host embedding pi may bring its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pi_core.hookspecs.results import (
        CommandInfo,
        CompactionResult,
        SlashCommand,
        SystemPromptOptions,
    )
    from pi_core.registry import PluginSet
    from pi_core.session_log import SessionLog
    from pi_core.signals import AbortSignal
    from pi_core.types import (
        AgentMessage,
        AssistantMessage,
        ImageContent,
        Message,
        Model,
        ScopedModel,
    )


# --- what context methods return -----------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class ExecResult:
    """What ``ctx.exec`` returns: output, exit code (128 + signal when killed), and why it stopped early."""

    stdout: str
    stderr: str
    code: int
    killed: bool = False
    truncated: bool = False


@dataclass(eq=False, repr=False)
class ContextUsage:
    """How full the model's context window is (``tokens``, ``percent``: None when unknown)."""

    tokens: int | None
    context_window: int
    percent: float | None


@dataclass(eq=False, repr=False)
class SessionChange:
    """What ``new_session`` / ``fork`` / ``switch_session`` report: vetoed by a plugin, or done."""

    cancelled: bool
    selected_text: str | None = None


# --- what the context needs of its session ---------------------------------------------------------------


class ToolInfo(Protocol):
    """A registered tool as ``ctx.get_all_tools()`` lists it (a ``pi_core.tools.Tool``)."""

    name: str
    description: str
    prompt_guidelines: list[str]

    @property
    def exposure(self) -> str: ...
    @property
    def annotations(self) -> dict[str, bool] | None: ...
    @property
    def json_schema(self) -> dict[str, Any]: ...  # open: a JSON Schema


class ModelAccess(Protocol):
    """``ctx.model_registry``: the configured models and one-off model calls with their credentials."""

    def find(self, provider: str, model_id: str) -> Model | None: ...
    def available_models(self) -> list[Model]: ...
    def has_auth(self, model: Model | str) -> bool: ...
    async def complete(self, model: Model, messages: list[str | Message], *, system_prompt: str | None = None,
                       reasoning: str | None = None, max_tokens: int | None = None,
                       signal: AbortSignal | None = None) -> AssistantMessage: ...


class NoModels:
    """``ctx.model_registry`` of a session built without models: nothing to find, no calls."""

    def find(self, provider: str, model_id: str) -> Model | None:
        return None

    def available_models(self) -> list[Model]:
        return []

    def has_auth(self, model: Model | str) -> bool:
        return False

    async def complete(self, model: Model, messages: list[str | Message], **_: object) -> AssistantMessage:
        from pi_core.errors import PiError

        raise PiError("No models are configured in this session")


class SessionHost(Protocol):
    """What a context needs of its session (``pi_core.session.AgentSession`` is the one pi has)."""

    plugins: PluginSet

    @property
    def commands(self) -> dict[str, SlashCommand]: ...
    @property
    def cwd(self) -> Path: ...
    @property
    def model(self) -> Model: ...
    @property
    def thinking_level(self) -> str: ...
    @property
    def scoped_models(self) -> list[ScopedModel]: ...
    @property
    def signal(self) -> AbortSignal | None: ...
    @property
    def is_streaming(self) -> bool: ...
    @property
    def is_idle(self) -> bool: ...
    @property
    def system_prompt(self) -> str: ...
    @property
    def session_name(self) -> str | None: ...
    @property
    def project_trusted(self) -> bool: ...
    @property
    def active_tool_names(self) -> list[str]: ...
    @property
    def available_tools(self) -> Mapping[str, ToolInfo]: ...
    @property
    def messages(self) -> list[AgentMessage]: ...
    @property
    def store(self) -> SessionLog: ...
    @property
    def model_access(self) -> ModelAccess: ...
    @property
    def flag_values(self) -> dict[str, Any]: ...  # open: plugin flag values, as each flag declares them

    def set_active_tools(self, names: list[str]) -> None: ...
    def add_tools(self, tools: list[Any]) -> list[str]: ...
    def remove_tools(self, names: list[str]) -> None: ...
    async def refresh_tools(self) -> list[str]: ...
    def send_custom_message(self, custom_type: str, content: Any, *, display: bool = True, details: Any = None,  # open: plugin-defined content, details and data, stored in the session JSON
                            deliver_as: str | None = None, trigger_turn: bool = False) -> None: ...
    def send_user_message(self, text: str, images: list[ImageContent] | None, *, deliver_as: str | None,
                          expand: bool) -> asyncio.Task[str]: ...
    def append_entry(self, custom_type: str, data: Any = None) -> str: ...  # open: plugin-defined content, details and data, stored in the session JSON
    def set_session_name(self, name: str) -> None: ...
    def set_label(self, entry_id: str, label: str | None) -> None: ...
    async def select_model(self, model: Model, *, source: str = "set") -> bool: ...
    def set_thinking_level(self, level: str) -> None: ...
    def request_abort(self) -> None: ...
    def has_queued_messages(self) -> bool: ...
    def request_shutdown(self) -> None: ...
    def context_usage(self) -> ContextUsage | None: ...
    def compact_later(self, custom_instructions: str | None, on_complete: Callable[[CompactionResult], object] | None,
                      on_error: Callable[[BaseException], object] | None) -> asyncio.Task[object]: ...
    def command_infos(self) -> list[CommandInfo]: ...
    def settings_copy(self) -> dict[str, Any]: ...  # open: the merged settings, JSON
    async def exec(self, command: str, args: list[str], *, cwd: Path | None, timeout: float | None,
                   signal: AbortSignal | None) -> ExecResult: ...
    async def wait_for_idle(self) -> None: ...
    async def new_session(self, parent_session: str | None = None, *,
                          setup: Callable[[SessionLog], object] | None = None) -> bool: ...
    async def switch_session(self, session_path: str) -> bool: ...
    async def fork(self, entry_id: str) -> tuple[str, bool]: ...
    async def clone(self) -> bool: ...
    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None, replace_instructions: bool = False,
                            label: str | None = None) -> object: ...  # the move made; None: vetoed or cancelled
    async def reload(self) -> None: ...
    def system_prompt_options(self) -> SystemPromptOptions: ...
