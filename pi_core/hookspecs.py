"""Hooks that pi_core calls. Each docstring is the contract: when it runs and what it may return.

Plugins contribute by *returning* objects. Hooks that several plugins may want to chain
(before/after tool call) are called one implementation at a time by the core, later layers last,
so a project plugin sees what an installed pack already changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import click

    from pi_core.events import AgentEvent
    from pi_core.extension import (
        BeforeAgentStart,
        ExtensionContext,
        InputResult,
        ProjectTrust,
        ProjectTrustContext,
        SlashCommand,
    )
    from pi_core.mode import Mode
    from pi_core.providers import ApiProvider
    from pi_core.render import Renderer
    from pi_core.signals import AbortSignal
    from pi_core.tools import (
        AfterToolCall,
        BeforeToolCall,
        Tool,
        ToolCallInfo,
        ToolResult,
    )
    from pi_core.types import CompactionPreparation, CompactionResult, Model

hookspec = pluggy.HookspecMarker("pi")
hookimpl = pluggy.HookimplMarker("pi")


@hookspec
def pi_tools() -> list[Tool] | None:
    """Return the tools this plugin provides. Called once per session.

    A tool named like one from a lower layer replaces it (built-in < installed < project/``-e``).
    """


@hookspec
def pi_providers() -> list[ApiProvider] | None:
    """Return API implementations, each with a unique ``api`` such as "anthropic-messages".

    An installed plugin returning an ``api`` that a built-in already serves replaces it.
    """


@hookspec
def pi_models() -> list[Model] | None:
    """Return models to add to the catalog (id, api, provider, base URL, costs, limits)."""


@hookspec
def pi_provider_presets() -> dict[str, dict[str, Any]] | None:
    """Return provider presets by provider id: ``{"baseUrl", "api", "apiKeyEnv", ...}`` for OpenAI-compatible
    services, so a models file only has to name the model ids."""


@hookspec
def pi_discover_models(settings: Any, timeout_s: float) -> list[Model] | None:
    """Return the models that servers listing their own models (local Ollama, llama.cpp, ...) answer with.

    Called when the user asks for the model list (``--list-models``, ``/model``, RPC ``get_available_models``),
    never at every start. ``settings`` has ``get(key)``; give up on a server after ``timeout_s``.
    """


@hookspec
def pi_oauth_providers() -> list[Any] | None:
    """Return subscription sign-in flows (``pi_core.models.oauth.OAuthProvider`` objects), one per provider id.

    They appear in ``/login`` and ``pi auth login``; their credentials are stored in ``auth.json`` and
    refreshed through them.
    """


@hookspec
def pi_prompt_snippets(active_tools: frozenset[str]) -> str | None:
    """Return text to append to the system prompt's tool section while ``active_tools`` are on, or None."""


@hookspec
def pi_prompt_guidelines(active_tools: frozenset[str]) -> list[str] | None:
    """Return extra guideline bullets (without the leading "- ") for the system prompt, or None."""


@hookspec
def pi_before_tool_call(call: ToolCallInfo) -> BeforeToolCall | None:
    """Run after validation, before ``execute``.

    Return ``BeforeToolCall(block=True, reason=...)`` to refuse the call (the model reads the reason),
    or ``BeforeToolCall(args={...})`` to replace the arguments (not validated again).
    Raising ``ToolError`` also blocks, with the error's message. May be ``async def``: the call waits
    for it (e.g. until a server whose tools ``call.tool`` may reach has connected, see ``Tool.reaches_tools``).
    """


@hookspec
def pi_after_tool_call(call: ToolCallInfo, result: ToolResult, is_error: bool) -> AfterToolCall | None:
    """Run after ``execute``. Return ``AfterToolCall`` to replace content, details or is_error (field by field)."""


@hookspec
def pi_renderers() -> list[Renderer] | None:
    """Return renderers: how a tool's call and result are drawn in the terminal, keyed by tool name."""


@hookspec
def pi_modes() -> list[Mode] | None:
    """Return modes, each a way to run a session, keyed by ``name`` (``pi --mode NAME``).

    pi's own ``text``, ``json`` and ``rpc`` modes and the ``interactive`` UI arrive through this hook
    too; a mode named like one from a lower layer replaces it.
    """


@hookspec
def pi_cli_commands() -> list[click.Command] | None:
    """Return click commands to add as ``pi <name>`` sub-commands.

    pi's options may precede the name (``pi -e ext.py <name> ...``) and choose the plugins; every token
    after the name goes to the command's own parser. The command's click ``obj`` is a
    ``pi_core.app.subcommands.CommandContext`` holding those options and the loaded plugins.
    """


@hookspec(firstresult=True)
def pi_project_trust(ctx: ProjectTrustContext) -> ProjectTrust | None:
    """Decide whether the project in ``ctx.cwd`` is trusted, before any of its protected resources load.

    Runs once per ``pi`` start, only when the folder has protected resources (``ctx.resources``) and no
    ``--approve`` / ``--no-approve`` was given; only user-level and command-line (``-e``) plugins take
    part, never the project's own. Called one implementation at a time, lowest layer first; the first
    ``ProjectTrust`` returned decides (``remember=True`` saves it in ``<agentDir>/trust.json``) and the
    rest are not called. Return None to leave the decision to the next plugin, then the saved
    decision, then ``defaultProjectTrust``. May be ``async def`` (``await ctx.ui.select(...)`` works in
    interactive mode). A raising implementation is reported as a start-up warning and counts as None.
    """


# --- lifecycle (docs/plugins.md#lifecycle-hooks). ``ctx`` is a pi_core.extension.ExtensionContext. ---


@hookspec
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    """The session is bound and ready (``reason``: startup, new, resume, fork, reload)."""


@hookspec
def pi_session_shutdown(ctx: ExtensionContext, reason: str) -> None:
    """The session is ending (``reason``: quit, new, resume, fork, reload). Flush what you keep."""


@hookspec
def pi_input(ctx: ExtensionContext, text: str, source: str) -> InputResult | None:
    """A prompt arrived (``source``: interactive, rpc, print). Return ``InputResult`` to transform the text
    (later plugins see the new text) or to mark it handled (nothing is sent to the model)."""


@hookspec
def pi_before_agent_start(ctx: ExtensionContext, prompt: str, system_prompt: str) -> BeforeAgentStart | None:
    """Just before a run starts: add a custom message to this prompt, or replace the system prompt for it."""


@hookspec
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    """Observe every agent event (agent_start, turn_end, tool_execution_end, ...). Return nothing."""


@hookspec
def pi_commands() -> list[SlashCommand] | None:
    """Return ``/name`` commands for the interactive editor and RPC prompts."""


# --- compaction -----------------------------------------------------------------------------------


@hookspec(firstresult=True)
def pi_session_compact(
    preparation: CompactionPreparation,
    branch_entries: list[dict[str, Any]],
    custom_instructions: str | None,
    signal: AbortSignal,
) -> CompactionResult | None:
    """Run before pi summarises the branch for a compaction (manual, threshold or overflow).

    ``preparation`` says what would be summarised (``messages_to_summarize``, ``turn_prefix_messages``,
    ``first_kept_entry_id``, ``tokens_before``, ``previous_summary``, ``file_ops``); ``branch_entries``
    is the branch root→leaf as session entry dicts. Return a ``CompactionResult`` to store it instead
    of pi's summary (saved with ``fromHook: true``), or None to let pi summarise. Raise
    ``pi_core.sessions.CompactionCancelled`` to cancel the compaction; any other exception is
    reported and pi's own summary is used. May be ``async def``. Stops at the first non-None result.
    """
