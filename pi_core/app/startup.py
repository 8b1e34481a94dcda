"""Turn parsed arguments into a ready AgentSession: settings, plugins, tools, model, prompt, session file.

Every mode (print, JSON, RPC, interactive) starts here, so they all see the same plugins and model.
Problems the user must fix raise PiError; things worth knowing are collected in ``warnings``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_core.app.args import Args
from pi_core.app.environment import Startup
from pi_core.config_paths import agent_dir
from pi_core.errors import PiError
from pi_core.loader.plugins import PluginSet, load_plugins, load_project_plugins
from pi_core.registry import PluginFailure, Registry, build_registry
from pi_core.tools import ToolSettings
from pi_core.types import Model, clamp_thinking_level

if TYPE_CHECKING:
    from pi_core.app.prompt_sources import PromptSources
    from pi_core.app.settings import Settings
    from pi_core.app.trust import TrustDecision
    from pi_core.llm.cache_warmer import CacheWarmer
    from pi_core.llm.retry import RetryPolicy
    from pi_core.mode import Mode, ModeRequest
    from pi_core.models.registry import ModelRegistry
    from pi_core.providers import StreamOptions
    from pi_core.session import AgentSession
    from pi_core.session.parts import SessionParts, StreamFn
    from pi_core.sessions.manager import SessionManager
    from pi_core.sessions.picker import Picker


class SessionNotChosen(PiError):
    """The user cancelled the session picker: not an error (exit 0)."""

    exit_code = 0


def load_settings(cwd: Path, directory: Path, warnings: list[str]) -> Settings:
    """The global settings; the project's join once the project is trusted (``Settings.trust_project``)."""
    from pi_core.app.settings import Settings

    settings = Settings.load(cwd, directory, project_trusted=False)
    _drain_settings_errors(settings, warnings)
    _apply_http_proxy(settings.scope_data("global").get("httpProxy"))
    return settings


def _apply_http_proxy(proxy: str | None) -> None:
    """``httpProxy`` (global only) as Pi applies it: ``HTTP_PROXY``/``HTTPS_PROXY`` for provider requests,
    unless the environment names a proxy already."""
    if proxy and proxy.strip():
        import os

        os.environ.setdefault("HTTP_PROXY", proxy.strip())
        os.environ.setdefault("HTTPS_PROXY", proxy.strip())


def _drain_settings_errors(settings: Settings, warnings: list[str]) -> None:
    warnings.extend(error.warning("runtime creation").removeprefix("Warning: ") for error in settings.drain_errors())


def _disabled_plugins(args: Args, settings: Settings) -> set[str]:
    return set(args.disable_plugins) | set(settings.disabled_plugins) | ({"mcp"} if args.no_mcp else set())


def load_environment(args: Args, cwd: Path, *, mode: str | None = None, trust: TrustDecision | None = None,
                     ) -> Startup:
    """Settings and plugins: enough for ``pi plugins``, ``pi tools`` and ``--list-models``.

    User-level and ``-e`` plugins load first and take part in the project-trust decision
    (docs/config.md#project-trust); the project's settings and plugins load only when it is trusted.
    ``mode`` names the mode that will run: its start-up UI, if it has one, may ask the user. ``trust``
    is a decision this process already made (a second load never asks again).
    """
    warnings: list[str] = []
    directory = agent_dir()
    settings = load_settings(cwd, directory, warnings)
    disabled = _disabled_plugins(args, settings)
    extensions = [e if e.startswith("plugin:") else cwd / e for e in args.extensions]
    plugins = load_plugins(extensions=extensions, project_dir=None, discover_extensions=not args.no_extensions,
                           disabled=disabled, agent_dir=directory, enabled=set(settings.enabled_plugins))
    registry = build_registry(plugins, tool_overrides=settings.tool_overrides)
    from pi_core.app.trust import record_decision

    trust = trust or _decide_trust(args, cwd, directory, registry, settings, mode)
    record_decision(trust)
    warnings.extend(trust.warnings)
    if trust.trusted:
        settings.trust_project()
        _drain_settings_errors(settings, warnings)
        before = dict(plugins.info)
        project_disabled = _disabled_plugins(args, settings) - disabled
        for name in project_disabled:
            plugins.pm.set_blocked(name)  # also unregisters a user-level plugin the project turns off
            plugins.info.pop(name, None)
        if not args.no_extensions:
            load_project_plugins(plugins, cwd, disabled | project_disabled)
        if plugins.info != before:
            registry = build_registry(plugins, tool_overrides=settings.tool_overrides)
    else:
        line = _untrusted_line(trust, mode)
        if line:
            warnings.append(line)
    warnings.extend(_failure_text(f, args.verbose) + "; skipped" for f in plugins.failures if not f.fatal)
    for clash in (c for c in registry.conflicts if c.kind != "tool" or settings.tool_overrides.get(c.name) != c.winner):
        warnings.append(f'{clash.kind.capitalize()} "{clash.name}" is provided by plugins "{clash.winner}" and '
                        f'"{clash.loser}" of one layer; using "{clash.winner}" '
                        f'(choose with toolOverrides = {{ {clash.name} = "{clash.loser}" }} in settings)'
                        if clash.kind == "tool" else
                        f'{clash.kind.capitalize()} "{clash.name}" of plugin "{clash.loser}" conflicts with '
                        f'plugin "{clash.winner}"; using "{clash.winner}"')
    from pi_core.app.flags import remember_flags

    remember_flags(plugins, registry)
    return Startup(cwd=cwd, agent_dir=directory, plugins=plugins, registry=registry, settings=settings,
                   warnings=warnings, trust=trust)


def _decide_trust(args: Args, cwd: Path, directory: Path, registry: Registry, settings: Settings,
                  mode: str | None) -> TrustDecision:
    from pi_core.app.trust import DEFAULT_TRUST, resolve_trust

    default = settings.get("defaultProjectTrust", "ask")
    if default not in DEFAULT_TRUST:
        default = "ask"
    chosen = registry.modes.items.get(mode) if mode is not None else None
    ui = chosen.startup_ui() if chosen is not None and chosen.startup_ui is not None else None
    return resolve_trust(cwd, directory, override=args.approve, plugins=registry.plugins, default=default,
                         mode=mode or "text", ui=ui)


def _untrusted_line(trust: TrustDecision, mode: str | None) -> str | None:
    from pi_core.app.trust import INTERACTIVE_UNTRUSTED

    if not trust.skipped or trust.source == "flag":
        return None
    if mode == "interactive":
        return INTERACTIVE_UNTRUSTED
    return trust.skipped_line()


def _failure_text(failure: PluginFailure, verbose: bool) -> str:
    text = f'Failed to load plugin "{failure.name}" ({failure.source}): {failure.reason}'
    text += f" at {failure.where}" if failure.where else ""
    return text + (f"\n{failure.details.rstrip()}" if verbose and failure.details else "")


def check_plugins(env: Startup) -> None:
    """Refuse to start a session when a plugin the user asked for could not load (Pi's wording for ``-e``)."""
    fatal = [f for f in env.plugins.failures if f.fatal]
    if not fatal:
        return
    lines = [f'Failed to load extension "{f.source}": {f.reason}' if f.source.startswith(("/", "plugin:"))
             else _failure_text(f, False) for f in fatal]
    names = " ".join(f"--disable-plugin {f.name}" for f in fatal)
    raise PiError("\n".join(lines) + f"\nHint: start without it: pi {names}, or without extensions: pi -ne")


def start_sandbox(args: Args, env: Startup) -> None:
    """Confine what the model runs from here on (docs/sandbox.md), or refuse to start when that was asked for
    and cannot be done; with no sandbox asked for, nothing is imported."""
    if args.sandbox is None and env.settings.get("sandbox") is None and not env.plugins.has("pi_sandbox_policy"):
        return  # the common case (resolve_sandbox's first test, before its imports)
    from pi_core.app.sandbox_start import resolve_sandbox
    from pi_core.toolkit.sandbox import activate

    chosen = resolve_sandbox(env.plugins, env.settings, env.cwd, env.agent_dir, args.sandbox)
    if chosen is not None:
        activate(chosen[0])


def model_registry(startup: Startup) -> ModelRegistry:
    if startup.models is None:
        from pi_core.models.registry import ModelRegistry

        startup.models = ModelRegistry.from_plugins(startup.plugins, startup.agent_dir)
        startup.warnings.extend(startup.models.warnings)
    return startup.models


def open_session_store(args: Args, env: Startup, picker: Picker | None = None) -> SessionManager:
    """The session file per the flags' precedence: --no-session > --fork > --session > --resume >
    --continue > --session-id > new (docs/cli.md#session-flags)."""
    from pi_core.sessions.manager import SessionManager
    from pi_core.sessions.store import resolve_session_dir

    cwd = env.cwd
    session_dir = resolve_session_dir(cwd, args.session_dir, env.settings.session_dir)
    _clean_old_outputs(session_dir)
    wanted_id = args.session_id
    if wanted_id is not None:
        from pi_core.sessions.lookup import check_session_id

        check_session_id(wanted_id)
    if args.no_session:
        return SessionManager.in_memory(cwd, session_id=wanted_id)
    if args.fork:
        from pi_core.sessions.lookup import find_by_id, find_session

        if wanted_id is not None and find_by_id(wanted_id, cwd, session_dir) is not None:
            raise PiError(f"Session already exists with id '{wanted_id}'")
        found = find_session(args.fork, cwd, session_dir)
        return SessionManager.fork_from(found.path, cwd, session_dir, session_id=wanted_id)
    if args.session:
        from pi_core.sessions.lookup import find_session

        found = find_session(args.session, cwd, session_dir)
        if found.other_project:
            return SessionManager.fork_from(found.path, cwd, session_dir)
        return SessionManager.open(found.path, session_dir)
    if args.resume:
        from pi_core.sessions.picker import pick_session

        chosen = pick_session(SessionManager.list(cwd, session_dir), picker)
        if chosen is None:
            raise SessionNotChosen("No session selected")
        return SessionManager.open(chosen, session_dir)
    if args.continue_:
        return SessionManager.continue_recent(cwd, session_dir)
    if wanted_id is not None:
        from pi_core.sessions.lookup import find_by_id

        existing = find_by_id(wanted_id, cwd, session_dir)
        if existing is not None:
            return SessionManager.open(existing, session_dir)
        env.warnings.append(f"No project session found with id '{wanted_id}'; creating a new session with that id.")
    return SessionManager.create(cwd, session_dir, session_id=wanted_id)


def _clean_old_outputs(session_dir: Path) -> None:
    """Start-up housekeeping (docs/sessions.md#full-output-files): full outputs of deleted sessions after
    a week, temp-dir ones (``--no-session``) after a day."""
    from pi_core.sessions.outputs import clean_orphan_outputs
    from pi_core.toolkit.tempdir import clean_temp_outputs_when_due

    clean_orphan_outputs((session_dir,))
    clean_temp_outputs_when_due()


def session_parts(store: SessionManager, plugins: PluginSet, registry: Registry, *,
                  models: ModelRegistry | None = None, settings: Settings | None = None,
                  prompt: PromptSources | None = None, api_key: str | None = None,
                  expand_input: Callable[[str], str] | None = None, stream_fn: StreamFn | None = None,
                  cache_warmer: CacheWarmer | None = None) -> SessionParts:
    """The standard collaborators of a session over ``store``: provider dispatch with request-level retry,
    the compactor (with the plugins' compaction hooks), ``ctx.exec``, agent-level retry, the message
    converter and the session-file operations, per ``settings`` (defaults when None). ``stream_fn`` replaces the provider dispatch (tests
    pass a fake provider's); ``cache_warmer`` keeps the prompt caches of the agent's requests warm.
    Embedders and tests build sessions with it too."""
    from pi_core.app.settings_schema import RetryTable
    from pi_core.compaction.compactor import Compactor, llm_summarizer
    from pi_core.llm.retry import stream_with_retry
    from pi_core.models.registry import ModelRegistry
    from pi_core.session import SessionParts, provider_stream_fn
    from pi_core.sessions.messages import llm_converter
    from pi_core.types import CompactionSettings

    refresh_fn = stream_fn  # a cache refresh is sent once, never retried
    if stream_fn is None:
        policy = _retry_policy(settings)
        stream_fn = provider_stream_fn(registry, lambda provider, model, context, options: stream_with_retry(
            provider, model, context, with_transport_settings(options, settings), policy))
        refresh_fn = provider_stream_fn(registry)
        if isinstance(models, ModelRegistry):  # stored credentials on each request; OAuth refreshed after a 401
            from pi_core.llm.authorized import authorized_stream

            stream_fn, refresh_fn = authorized_stream(models, stream_fn), authorized_stream(models, refresh_fn)
    direct_fn = stream_fn  # requests outside the agent loop (compaction, ctx.model_registry)
    if cache_warmer is not None:  # inside the routing: a virtual model's routed requests are not the selection's
        stream_fn = cache_warmer.wrap(stream_fn, refresh_fn)
    if isinstance(models, ModelRegistry) and models.sources.virtual:
        from pi_core.llm.routed import routed_stream

        direct_fn = routed_stream(models, store, direct_fn, direct=True)
        stream_fn = routed_stream(models, store, stream_fn)

    def key_for(model: Model) -> str | None:
        return api_key or (models.api_key_for(model) if models is not None else None)

    from pi_core.app.plugin_reload import reload_plugins
    from pi_core.control.session_files import SessionFiles
    from pi_core.models.access import SessionModels
    from pi_core.toolkit.exec import run_program

    compactor = Compactor(store, llm_summarizer(direct_fn, key_for),
                          settings=settings.compaction_for if settings is not None else CompactionSettings(),
                          plugins=plugins)
    return SessionParts(store=store, stream_fn=stream_fn, models=models, settings=settings, prompt=prompt,
                        compactor=compactor, retry=settings.retry if settings is not None else RetryTable(),
                        messages=store.build_session_context().typed_messages(), expand_input=expand_input,
                        convert_to_llm=llm_converter(settings.block_images if settings is not None else False),
                        exec=run_program, model_access=SessionModels(models, direct_fn, lambda: api_key),
                        files=SessionFiles(), reimport=reload_plugins, cache_warmer=cache_warmer)


def build_session(args: Args, env: Startup, *, picker: Picker | None = None, interactive: bool = False,
                  model_optional: bool = False) -> AgentSession:
    """Everything a mode needs, in one AgentSession. Without a model it fails, unless the mode can choose one
    later (``interactive``, ``model_optional``: RPC and ACP clients)."""
    from pi_core.app.flags import parse_plugin_flags
    from pi_core.app.tool_selection import select_tools
    from pi_core.models.resolution import initial_model, resolve_scope
    from pi_core.resources import expand_input
    from pi_core.session import AgentSession, SessionConfig

    check_plugins(env)
    flag_values = parse_plugin_flags(args, env.registry)
    settings = env.settings
    start_sandbox(args, env)
    if args.provider and not args.model:
        raise PiError(f"--provider requires --model (for example: --provider {args.provider} --model <pattern>)")
    name = args.name.strip() if args.name is not None else None
    if name == "":
        raise PiError("--name requires a non-empty value")
    models = model_registry(env)
    store = open_session_store(args, env, picker)
    env.warnings.extend(getattr(store, "warnings", []))
    if name is not None:
        store.append_session_info(name)
    context = store.build_session_context()
    has_history = bool(context.typed_messages())

    selection = select_tools(env.registry, allow=args.tools, no_tools=args.no_tools,
                             no_builtin=args.no_builtin_tools, exclude=args.exclude_tools,
                             default_names=settings.default_tools)
    from pi_core.app.prompt_sources import PromptSources

    sources = PromptSources(env, args)

    wanted = args.provider or (args.model.split("/", 1)[0] if args.model and "/" in args.model else None)
    if wanted and wanted not in models.providers():
        models.discover(settings)  # --model ollama/qwen3:8b: ask the local servers what they serve
    patterns = args.models if args.models is not None else settings.enabled_models
    scoped = resolve_scope(models, patterns, env.warnings.append) if patterns else []
    chosen = initial_model(models, cli_provider=args.provider, cli_model=args.model, scope=scoped,
                           has_messages=has_history,
                           session_model=(context.model["provider"], context.model["modelId"])
                           if context.model else None,
                           default_provider=settings.default_provider, default_model=settings.default_model)
    if chosen.message:
        env.warnings.append(chosen.message)
    env.warnings.extend(getattr(chosen, "warnings", None) or [])
    if args.api_key:
        if chosen.model is None:
            raise PiError("--api-key requires a model to be specified via --model, --provider/--model, or --models")
        models.set_runtime_key(chosen.model.provider, args.api_key)
    thinking = args.thinking or chosen.thinking or (context.thinking_level if has_history else None) \
        or (settings.thinking_level_for(chosen.model.provider, chosen.model.id) if chosen.model is not None
            else settings.default_thinking_level) or "medium"
    thinking = clamp_thinking_level(chosen.model, thinking) if chosen.model is not None else "off"
    if chosen.model is None:
        from pi_core.models.resolution import no_models_text

        if args.mode != "rpc" and not (interactive or model_optional):
            raise PiError(no_models_text())
        env.warnings.append(no_models_text())  # the interactive header and a client's stderr say how to fix it

    config = SessionConfig(cwd=env.cwd, model=chosen.model, thinking_level=thinking, tools=selection.active,
                           all_tools=selection.available, system_prompt=sources.build(selection.active),
                           steering_mode=settings.steering_mode, follow_up_mode=settings.follow_up_mode,
                           scoped_models=scoped, project_trusted=env.project_trusted,
                           tool_settings=ToolSettings(shell_path=settings.shell_path,
                                                      shell_command_prefix=settings.shell_command_prefix,
                                                      auto_resize_images=settings.auto_resize_images),
                           tool_policy=selection.policy, flag_values=flag_values)
    from pi_core.llm.cache_warmer import CacheWarmer

    warmer = CacheWarmer(lambda: settings.values.cache_warming, store)
    parts = session_parts(store, env.plugins, env.registry, models=models, settings=settings, prompt=sources,
                          api_key=args.api_key, expand_input=lambda text: expand_input(text, sources.resources),
                          cache_warmer=warmer)
    session = AgentSession(config, parts, plugins=env.plugins, registry=env.registry)
    warmer.bind(session)
    if chosen.model is not None and not has_history:
        store.append_model_change(chosen.model.provider, chosen.model.id)
        store.append_thinking_level_change(thinking)
    return session


TRANSPORTS = ("auto", "sse", "websocket", "websocket-cached")


def with_transport_settings(options: StreamOptions, settings: Settings | None) -> StreamOptions:
    """``transport`` and ``websocketConnectTimeoutMs`` as the settings say now (read per request, so a
    ``/settings`` change or ``/reload`` applies to the next one); a value the settings check reported as
    invalid leaves the wire's default."""
    if settings is None:
        return options
    transport = settings.get("transport")
    timeout = settings.get("websocketConnectTimeoutMs")
    connect_s = None
    if timeout == "disabled":
        connect_s = 0.0
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 <= timeout < float("inf"):
        connect_s = float(timeout) / 1000
    return dataclasses.replace(options, transport=transport if transport in TRANSPORTS else options.transport,
                               websocket_connect_timeout_s=connect_s)


def _retry_policy(settings: Settings | None) -> RetryPolicy:
    from pi_core.llm.retry import RetryPolicy

    retry = settings.get("retry") if settings is not None else None
    provider = retry.get("provider") if isinstance(retry, dict) else None
    policy = RetryPolicy.from_settings(provider if isinstance(provider, dict) else None)
    if settings is not None:
        policy.idle_timeout_s = settings.http_idle_timeout_s
    return policy


def load_for_mode(args: Args, cwd: Path, *, plugins_from: Args | None = None, trust: TrustDecision | None = None,
                  ) -> Startup:
    """``load_environment`` for the mode ``args`` choose, with the plugins ``plugins_from`` (default ``args``)
    chooses; ``--mode rpc`` claims stdout before plugins load (a plugin printing at import must not corrupt
    the protocol)."""
    from pi_core.app.args import mode_name

    if args.mode == "rpc":
        from pi_core.modes.rpc import protect_stdout

        protect_stdout()
    return load_environment(plugins_from or args, cwd, mode=mode_name(args), trust=trust)


def list_models(args: Args, env: Startup) -> str:
    """``--list-models [SEARCH]``: the table of the models the loaded plugins and models files offer."""
    from pi_core.models.resolution import format_model_list

    models = model_registry(env)
    models.discover(env.settings)  # local servers answer only when asked
    print_warnings(env.warnings)  # after the models files were read: their errors are shown too
    return format_model_list(models.available_models(), args.list_models if isinstance(args.list_models, str) else None)


def choose_mode(env: Startup, name: str) -> Mode:
    mode = env.registry.modes.items.get(name)
    if mode is None:
        known = ", ".join(sorted(env.registry.modes.items)) or "none"
        raise PiError(f'Unknown mode "{name}" (available: {known}). A mode comes from a plugin; '
                      "check `pi plugins` for a disabled or failed one.")
    return mode


def session_picker(env: Startup) -> Picker | None:
    """``pi -r``: the interactive mode's picker, else any mode's that has one."""
    modes = env.registry.modes.items
    ordered = [modes["interactive"]] if "interactive" in modes else []
    ordered += [m for name, m in modes.items() if name != "interactive"]
    return next((m.pick_session for m in ordered if m.pick_session is not None), None)


def mode_request(mode: Mode, args: Args, env: Startup, picker: Picker | None = None) -> ModeRequest[AgentSession]:
    """What ``mode.run`` gets: its prompts gathered (``pi_core.app.prompt_input``), the session built, and each
    warning shown once (the interactive UI lists them in its header, other modes print them on stderr)."""
    from pi_core.app.prompt_input import gather_prompts
    from pi_core.mode import ModeRequest

    interactive = mode.name == "interactive"
    if mode.stdio:
        if args.file_args:
            raise PiError(f"@file arguments are not supported in {mode.name.upper()} mode")
        from pi_core.modes.rpc import protect_stdout

        protect_stdout()  # idempotent: --mode rpc claimed it before the plugins loaded
    shown = 0
    if not interactive:
        print_warnings(env.warnings)
        shown = len(env.warnings)
    messages, images = gather_prompts(args, env.cwd, mode)
    try:
        session = build_session(args, env, picker=picker, interactive=interactive, model_optional=mode.stdio)
    except PiError:
        print_warnings(env.warnings[shown:])
        raise
    if not interactive:
        print_warnings(env.warnings[shown:])
    return ModeRequest(session, messages=messages, images=images, warnings=env.warnings, verbose=args.verbose,
                       args=args, startup=env)


def print_warnings(warnings: list[str]) -> None:
    """Start-up warnings on stderr; the stand-in editor of a start-up (``pi_core.app.typeahead``) gives way first."""
    if "pi_core.app.typeahead" in sys.modules:
        sys.modules["pi_core.app.typeahead"].release()
    for warning in warnings:
        sys.stderr.write((warning if warning.startswith("Warning:") else f"Warning: {warning}") + "\n")
