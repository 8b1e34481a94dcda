"""Hooks that contribute named things: tools, providers, models, renderers, modes, commands, flags, shortcuts.

All are **collect** hooks called synchronously or awaited at start-up (before the session exists), again on
``/reload`` and, for tools, on ``ctx.refresh_tools()``. A raising implementation is reported and its plugin
contributes nothing from that hook. Named items follow one rule: a higher layer replaces a lower one
(``pi plugins`` shows winner and loser); inside one layer the first implementation in call order wins and pi
warns naming both (``toolOverrides`` in settings picks a tool's owner explicitly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.hookspecs.markers import spec

if TYPE_CHECKING:
    from collections.abc import Callable

    import click

    from pi_core.hookspecs.results import (
        Flag,
        OAuthProvider,
        ProviderPreset,
        Shortcut,
        SlashCommand,
    )
    from pi_core.mode import Mode
    from pi_core.providers import ApiProvider, VirtualModel
    from pi_core.render import EntryRenderer, MessageRenderer, Renderer
    from pi_core.tools import Tool
    from pi_core.types import Model

__all__ = ["pi_cli_commands", "pi_commands", "pi_discover_models", "pi_entry_renderers", "pi_event_handlers", "pi_flags",
           "pi_message_renderers", "pi_models", "pi_modes", "pi_oauth_providers", "pi_prompt_guidelines",
           "pi_prompt_snippets", "pi_provider_presets", "pi_providers", "pi_renderers", "pi_shortcuts", "pi_tools",
           "pi_virtual_models"]


@spec("collect")
def pi_tools() -> list[Tool] | None:
    """Return the tools this plugin provides.

    Called at start-up and again on ``/reload`` and ``ctx.refresh_tools()`` (a plugin that keeps a list and
    appends to it adds tools while the session runs). A tool named like one of a lower layer replaces it.
    """


@spec("collect")
def pi_providers() -> list[ApiProvider] | None:
    """Return API implementations, each with a unique ``api`` such as "anthropic-messages".

    Called once at start-up. An installed plugin returning an ``api`` a built-in serves replaces it.
    """


@spec("collect")
def pi_models() -> list[Model] | None:
    """Return models to add to the catalog (id, api, provider, base URL, costs, limits). Called at start-up."""


@spec("collect")
def pi_virtual_models() -> list[VirtualModel] | None:
    """Return virtual models, whose ``route`` picks a physical model per request (docs/models.md#virtual-models)."""


@spec("collect")
def pi_provider_presets() -> dict[str, ProviderPreset] | None:
    """Return provider presets by provider id (``ProviderPreset(api=..., base_url=..., api_key=...)``) for
    OpenAI-compatible services and local servers, so a models file only has to name the model ids. Called at
    start-up; a later plugin's preset for a provider replaces an earlier one. A plain dict of models-file keys
    (``{"baseUrl", "api", "apiKey", ...}``) is still accepted for one release."""


@spec("collect")
def pi_discover_models(settings: Any, timeout_s: float) -> list[Model] | None:  # open: the settings (JSON), read with get(key)
    """Return the models that servers listing their own models (local Ollama, llama.cpp, ...) answer with.

    Called when the user asks for the model list (``--list-models``, ``/model``, RPC ``get_available_models``),
    never at every start. ``settings`` has ``get(key)``; give up on a server after ``timeout_s``. A raising
    implementation is reported and its server's models are left out.
    """


@spec("collect")
def pi_oauth_providers() -> list[OAuthProvider] | None:
    """Return subscription sign-in flows (``OAuthProvider``: subclass ``pi_core.models.oauth.OAuthFlow``), one per
    provider id.

    Called at start-up. They appear in ``/login`` and ``pi auth login``; their credentials are stored in
    ``auth.json`` and refreshed through them.
    """


@spec("collect")
def pi_prompt_snippets(active_tools: frozenset[str]) -> str | None:
    """Return text to append to the system prompt's tool section while ``active_tools`` are on, or None.

    Called each time the system prompt is built (start-up, tool changes, reload).
    """


@spec("collect")
def pi_prompt_guidelines(active_tools: frozenset[str]) -> list[str] | None:
    """Return extra guideline bullets (without the leading "- ") for the system prompt, or None.

    Called each time the system prompt is built.
    """


@spec("collect")
def pi_renderers() -> list[Renderer] | None:
    """Return renderers: how a tool's call and result are drawn in the terminal, keyed by tool name.

    Called once when the interactive UI starts. pi's own renderers are ``trylast``, so any plugin's win.
    """


@spec("collect")
def pi_message_renderers() -> list[MessageRenderer] | None:
    """Return renderers for custom messages (``ctx.send_message``), keyed by ``custom_type``.

    Called once when the interactive UI starts; other modes never draw. A raising renderer falls back to
    the default drawing (the type label and the content).
    """


@spec("collect")
def pi_entry_renderers() -> list[EntryRenderer] | None:
    """Return renderers for custom session entries (``ctx.append_entry``), keyed by ``custom_type``.

    Called once when the interactive UI starts; a renderer gets the typed ``CustomEntry`` (``entry.data``). Entries without a renderer are not drawn; they never reach
    the model either way.
    """


@spec("collect")
def pi_modes() -> list[Mode] | None:
    """Return modes, each a way to run a session, keyed by ``name`` (``pi --mode NAME``). Called at start-up.

    pi's own ``text``, ``json`` and ``rpc`` modes and the ``interactive`` UI arrive through this hook too; a
    mode named like one from a lower layer replaces it.
    """


@spec("collect")
def pi_cli_commands() -> list[click.Command] | None:
    """Return click commands to add as ``pi <name>`` sub-commands. Called when ``pi`` meets a bare word.

    pi's options may precede the name (``pi -e ext.py <name> ...``) and choose the plugins; every token after
    the name goes to the command's own parser. The command's click ``obj`` is a
    ``pi_core.app.subcommands.CommandContext`` holding those options and the loaded plugins.
    """


@spec("collect")
def pi_commands() -> list[SlashCommand] | None:
    """Return ``/name`` commands for the interactive editor, RPC prompts and ``ctx.send_user_message``.

    Called at start-up and on ``/reload``. Pi's own interactive commands win over a plugin's of the same
    name (with a warning); pi-only built-ins (``/tools``, ``/exit``) yield to it. A handler that raises is
    reported as an extension error of hook ``command:<name>``.
    """


@spec("collect")
def pi_flags() -> list[Flag] | None:
    """Return command-line flags this plugin reads (``--plan``, ``--preset NAME``); values via ``ctx.get_flag``.

    Called at start-up; the result is cached so ``pi --help`` lists the flags without importing plugins.
    Two plugins declaring one flag: the first wins and pi warns.
    """


@spec("collect")
def pi_shortcuts() -> list[Shortcut] | None:
    """Return keyboard shortcuts for the interactive UI (``Shortcut("ctrl+alt+p", ...)``).

    Called once when the interactive UI starts. A shortcut on a reserved built-in key is refused with a
    warning; any other built-in binding of that key is overridden, with a warning.
    """


@spec("collect")
def pi_event_handlers() -> dict[str, Callable[..., object]] | None:
    """Return ``{channel: handler}`` to subscribe to the plugin event bus (``ctx.events``) for the whole run.

    Called once when the session starts. Handlers may be async; each raising call is reported as an
    extension error of hook ``events:<channel>``.
    """
