"""The types of the hook contract: what each hook (``pi_core/hookspecs/<topic>.py``) is given and returns.

One module for all topics, so that the contexts (``pi_core.extension``) and the specs can both import it
without importing each other. docs/plugins.md#hook-types lists each of them (tests/core/test_docs.py checks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from pi_core.hookspecs.entries import SessionEntry
    from pi_core.types import (
        AgentMessage,
        CompactionSettings,
        FileOperations,
        ImageContent,
        TextContent,
        Usage,
    )
    from pi_core.ui import UI

# pi_core.extension.CommandContext, named loosely: the contexts import this module.
CommandContext = Any

__all__ = ["AfterToolCall", "BeforeAgentStart", "BeforeToolCall", "Cancel", "CommandInfo", "CompactionPreparation",
           "CompactionResult", "CompletionItem", "Flag", "InputResult", "OAuthProvider", "ProjectTrust", "ProjectTrustContext", "ProviderPreset",
           "ResourcePaths", "Shortcut", "SlashCommand", "SystemPromptOptions", "TreeDecision", "TreePreparation",
           "UserBash"]


# --- a run (pi_core/hookspecs/run.py) -------------------------------------------------------------


@dataclass
class InputResult:
    """Returned by ``pi_input``: keep going, replace the text, or mark the input as handled."""

    action: Literal["continue", "transform", "handled"] = "continue"
    text: str | None = None
    images: list[ImageContent] | None = None


@dataclass(eq=False, repr=False)
class SystemPromptOptions:
    """The inputs of the system prompt (``pi_before_agent_start``'s ``options``, ``ctx.get_system_prompt_options``).

    Editing ``sections`` (name -> text, rendered as ``<name>text</name>`` after pi's prompt),
    ``selected_tools`` or ``append_system_prompt`` in the hook rebuilds the prompt for that run.
    """

    custom_prompt: str | None = None
    selected_tools: list[str] = field(default_factory=list)
    tool_snippets: dict[str, str] = field(default_factory=dict)
    prompt_guidelines: list[str] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)
    append_system_prompt: list[str] = field(default_factory=list)
    cwd: str = ""
    context_files: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)


@dataclass
class BeforeAgentStart:
    """Returned by ``pi_before_agent_start``: a custom message to add, and/or a new system prompt."""

    message: dict[str, Any] | None = None  # open: a custom message, JSON {customType, content, display, details}; {customType, content, display, details}
    system_prompt: str | None = None


# --- the session's life (pi_core/hookspecs/session.py) --------------------------------------------


@dataclass(frozen=True, repr=False)
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


@dataclass(frozen=True)
class ProjectTrust:
    """Returned by ``pi_project_trust``: trust the project or not; ``remember`` saves the answer in
    ``<agentDir>/trust.json`` for the project folder (docs/config.md#project-trust)."""

    trusted: bool
    remember: bool = False


@dataclass
class Cancel:
    """Returned by a ``pi_session_before_*`` hook to veto the operation."""

    reason: str | None = None


@dataclass(eq=False, repr=False)
class CompactionPreparation:
    """What a compaction would summarise: the typed messages (``pi_core.types``: ``UserMessage``,
    ``AssistantMessage``, ``ToolResultMessage``, a ``CustomMessage`` for the session roles such as
    ``bashExecution`` or ``compactionSummary``) before the kept part, and a split turn's prefix."""

    first_kept_entry_id: str
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings


@dataclass
class CompactionResult:
    """What a compaction stores: also what a ``pi_session_compact`` hook returns to replace the summariser."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: Any = None  # open: plugin-defined details, stored in the session JSON
    usage: Usage | None = None  # what producing the summary cost (a plugin's own model call)

    def to_json(self) -> dict[str, Any]:  # open: JSON
        out: dict[str, Any] = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.details is not None:
            out["details"] = self.details
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        return out


@dataclass(eq=False, repr=False)
class TreePreparation:
    """What ``pi_session_before_tree`` sees: where the leaf goes and what a branch summary would cover."""

    target_id: str | None
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]  # oldest first, from the old leaf back to the common ancestor
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool = False
    label: str | None = None


@dataclass
class TreeDecision:
    """Returned by ``pi_session_before_tree``: veto, supply the summary text, or change how pi summarises."""

    cancel: bool = False
    summary: str | None = None
    details: Any = None  # open: plugin-defined details, stored in the session JSON
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass
class ResourcePaths:
    """Returned by ``pi_resources_discover``: more skill, prompt-template and theme files or directories."""

    skill_paths: list[str | Path] = field(default_factory=list)
    prompt_paths: list[str | Path] = field(default_factory=list)
    theme_paths: list[str | Path] = field(default_factory=list)


# --- tool calls and the user's shell (pi_core/hookspecs/tools.py) ---------------------------------


@dataclass
class BeforeToolCall:
    """Returned by ``pi_before_tool_call``: block the call with a reason (``terminate``: and end the run once
    the batch is done), or replace its arguments."""

    block: bool = False
    reason: str | None = None
    args: Any = None  # open: the tool's arguments as the hook replaces them (JSON or a model)
    terminate: bool = False


@dataclass
class AfterToolCall:
    """Returned by ``pi_after_tool_call``: fields left as None keep their value."""

    content: list[TextContent | ImageContent] | None = None  # what ToolResult.content holds
    details: Any = None  # open: plugin-defined details, stored in the session JSON
    is_error: bool | None = None
    terminate: bool | None = None


@dataclass
class UserBash:
    """Returned by ``pi_user_bash``: run the command through ``operations`` (a
    ``pi_core.toolkit.procs.ShellOperations``), or ``result`` (a ``pi_core.toolkit.shell.BashResult``) when
    the plugin already ran it. Exactly one of the two."""

    operations: Any = None
    result: Any = None

    def __post_init__(self) -> None:
        if (self.operations is None) == (self.result is None):
            raise ValueError("Invalid user_bash handler result: return None for local execution or exactly one "
                             "valid UserBash(operations=...) or UserBash(result=...)")


# --- contributions (pi_core/hookspecs/contributions.py) -------------------------------------------


@dataclass(frozen=True)
class ProviderPreset:
    """Returned by provider id from ``pi_provider_presets``: what a models file may leave out for that provider
    (an OpenAI-compatible service, a local server), so it only has to name the model ids. ``api_key`` is a key,
    an environment variable's name or ``!command``, as in models.json; ``compat`` and ``headers`` are merged
    under the models file's own."""

    api: str | None = None
    base_url: str | None = None
    name: str | None = None
    api_key: str | None = None
    compat: dict[str, Any] | None = None  # open: the models file's compat object, JSON
    headers: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:  # open: JSON
        """The models-file keys (``baseUrl``, ``apiKey``, ...) this preset sets."""
        keys = {"api": self.api, "baseUrl": self.base_url, "name": self.name, "apiKey": self.api_key,
                "compat": self.compat, "headers": self.headers}
        return {key: value for key, value in keys.items() if value is not None}


class OAuthProvider(Protocol):
    """Returned (a list) by ``pi_oauth_providers``: one provider's subscription sign-in, for ``/login`` and
    ``pi auth login``. ``pi_core.models.oauth.OAuthFlow`` is a base class that fills in the defaults; its module
    has the types named loosely here (``LoginUI``, ``LoginMethod``, ``RequestAuth``): they belong to that wing.

    ``provider`` is the catalog provider id whose requests the credential authorizes, ``name`` the text shown
    (``Anthropic (Claude Pro/Max)``), ``methods`` the ways to sign in. A credential is Pi's ``auth.json`` entry.
    """

    provider: str
    name: str
    methods: tuple[Any, ...]

    async def login(self, ui: Any) -> dict[str, Any]: ...
    async def refresh(self, credential: dict[str, Any]) -> dict[str, Any]: ...  # open: a stored credential, JSON (auth.json)
    def to_auth(self, credential: dict[str, Any]) -> Any: ...
    def visible_models(self, credential: dict[str, Any]) -> set[str] | None: ...  # open: a stored credential, JSON (auth.json)


@dataclass
class CompletionItem:
    """One argument completion: ``value`` is inserted, ``label`` and ``description`` are shown."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass(eq=False, repr=False)
class SlashCommand:
    """A ``/name`` command (interactive editor, RPC ``prompt``). ``handler(args, ctx)`` gets the text after the
    name; ``complete(prefix)`` offers argument completions in the interactive editor (None: none)."""

    name: str
    description: str
    handler: Callable[[str, CommandContext], Awaitable[None] | None]
    complete: Callable[[str], list[CompletionItem] | None] | None = None


@dataclass(eq=False, repr=False)
class CommandInfo:
    """A command as ``ctx.get_commands()`` and RPC ``get_commands`` list it: a plugin's, a prompt template or a
    skill. ``source_info``: path, source, scope, origin (RPC's ``sourceInfo``)."""

    name: str
    description: str | None
    source: Literal["extension", "prompt", "skill"]
    source_info: dict[str, Any] = field(default_factory=dict)  # open: where the command came from, JSON for RPC get_commands

    def to_json(self) -> dict[str, Any]:  # open: JSON
        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        data.update(source=self.source, sourceInfo=self.source_info)
        return data


@dataclass(eq=False, repr=False)
class Flag:
    """A command-line flag a plugin reads with ``ctx.get_flag(name)``: ``--name`` (boolean) or ``--name VALUE``
    / ``--name=VALUE`` (string). ``default`` is what ``get_flag`` returns when the flag is not given."""

    name: str
    description: str = ""
    type: Literal["boolean", "string"] = "boolean"
    default: bool | str | None = None

    def __post_init__(self) -> None:
        expected = bool if self.type == "boolean" else str
        if self.default is not None and not isinstance(self.default, expected):
            raise TypeError(f'Invalid default for flag "{self.name}": expected {self.type}, '
                            f"got {type(self.default).__name__}")

    def to_json(self) -> dict[str, Any]:  # open: JSON
        return {"name": self.name, "description": self.description, "type": self.type, "default": self.default}


@dataclass(eq=False, repr=False)
class Shortcut:
    """A key of the interactive UI in Pi's key syntax (``"ctrl+shift+u"``, ``"alt+p"``, ``"f5"``) and what it
    does: ``handler(ctx)`` with a ``CommandContext``."""

    key: str
    description: str
    handler: Callable[[CommandContext], Awaitable[None] | None]

