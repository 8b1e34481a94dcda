"""Turn parsed arguments into a ready AgentSession: settings, plugins, tools, model, prompt, session file.

Every mode (print, JSON, RPC, interactive) starts here, so they all see the same plugins and model.
Problems the user must fix raise PiError; things worth knowing are collected in ``warnings``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.app.args import Args
from pi_core.config_paths import agent_dir
from pi_core.errors import PiError
from pi_core.plugins import PluginSet, load_plugins
from pi_core.registry import Registry, build_registry
from pi_core.types import ImageContent


class SessionNotChosen(PiError):
    """The user cancelled the session picker: not an error (exit 0)."""

    exit_code = 0


@dataclass
class Startup:
    cwd: Path
    agent_dir: Path
    plugins: PluginSet
    registry: Registry
    settings: Any = None
    models: Any = None
    resources: Any = None
    warnings: list[str] = field(default_factory=list)


def load_settings(cwd: Path, directory: Path, warnings: list[str]) -> Any:
    from pi_core.app.settings import Settings

    settings = Settings.load(cwd, directory)
    warnings.extend(error.warning("runtime creation").removeprefix("Warning: ") for error in settings.drain_errors())
    return settings


def load_environment(args: Args, cwd: Path) -> Startup:
    """Settings and plugins: enough for ``pi plugins``, ``pi tools`` and ``--list-models``."""
    warnings: list[str] = []
    directory = agent_dir()
    settings = load_settings(cwd, directory, warnings)
    disabled = set(args.disable_plugins) | set(settings.get("disabledPlugins", []) or []) \
        | set(settings.disabled_plugins) | ({"mcp"} if args.no_mcp else set())
    plugins = load_plugins(extensions=[cwd / e for e in args.extensions], project_dir=cwd,
                           discover_extensions=not args.no_extensions, disabled=disabled, agent_dir=directory)
    registry = build_registry(plugins)
    for failure in plugins.failures:
        warnings.append(f'Failed to load plugin "{failure.name}" ({failure.source}): {failure.reason}')
    return Startup(cwd=cwd, agent_dir=directory, plugins=plugins, registry=registry, settings=settings,
                   warnings=warnings)


def model_registry(startup: Startup) -> Any:
    if startup.models is None:
        from pi_core.models.registry import ModelRegistry

        startup.models = ModelRegistry.from_plugins(startup.plugins, startup.agent_dir)
        startup.warnings.extend(startup.models.warnings)
    return startup.models


def read_file_args(paths: list[str], cwd: Path) -> tuple[str, list[ImageContent]]:
    """``@file`` arguments (cli.md §6): text inlined in <file> tags, images attached."""
    from pi_core.toolkit.images import SNIFF_BYTES, detect_image_mime_type, fit_image
    from pi_core.toolkit.paths import resolve_to_cwd

    text: list[str] = []
    images: list[ImageContent] = []
    for raw in paths:
        path = Path(resolve_to_cwd(raw, str(cwd)))
        if not path.is_file():
            raise PiError(f"File not found: {path}")
        try:
            data = path.read_bytes()
        except OSError as err:
            raise PiError(f"Could not read file {path}: {err.strerror or err}") from err
        if not data:
            continue
        mime = detect_image_mime_type(data[:SNIFF_BYTES])
        if mime is not None:
            fitted = fit_image(data, mime)
            if fitted is None:
                text.append(f'<file name="{path}">[Image omitted: could not be resized below the inline image '
                            'size limit.]</file>\n')
                continue
            images.append(ImageContent(data=fitted.data, mime_type=fitted.mime_type))
            text.append(f'<file name="{path}">{fitted.dimension_note() if fitted.resized else ""}</file>\n')
            continue
        text.append(f'<file name="{path}">\n{data.decode("utf-8", errors="replace")}\n</file>\n')
    return "".join(text), images


def read_piped_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    try:
        return sys.stdin.read().strip()
    except (OSError, ValueError):
        return ""


class PromptSources:
    """What the system prompt is built from (context files, skills, templates, SYSTEM.md, flags).

    ``reload()`` reads them all again (``/reload``); ``build(tools)`` composes the prompt for the
    active tools, with the plugins' prompt hooks.
    """

    def __init__(self, env: Startup, args: Args) -> None:
        self.env, self.args = env, args
        self.reload()

    def reload(self) -> None:
        from pi_core.resources import ResourceSettings, load_resources
        from pi_core.app.system_prompt import load_prompt_texts

        env, args = self.env, self.args
        scopes = ResourceSettings.from_scopes(env.settings.scope_data("global"), env.settings.scope_data("project"))
        self.resources = load_resources(env.cwd, env.agent_dir, no_context_files=args.no_context_files,
                                        no_skills=args.no_skills, skill_paths=args.skills,
                                        no_prompt_templates=args.no_prompt_templates,
                                        template_paths=args.prompt_templates, settings=scopes)
        env.resources = self.resources
        env.warnings.extend(str(d) for d in self.resources.diagnostics)
        self.texts = load_prompt_texts(env.cwd, env.agent_dir, system_prompt=args.system_prompt,
                                       append_system_prompt=args.append_system_prompt)

    def build(self, tools: list[Any]) -> str:
        from pi_core.app.system_prompt import build_system_prompt, gather_prompt_hooks

        env = self.env
        snippets, guidelines = gather_prompt_hooks(env.plugins, frozenset(t.name for t in tools))
        return build_system_prompt(tools=tools, cwd=env.cwd, agent_dir=env.agent_dir, custom_prompt=self.texts.custom,
                                   append_prompts=self.texts.append, context_files=self.resources.context_files,
                                   skills=self.resources.skills, extra_snippets=snippets, extra_guidelines=guidelines)


def open_session_store(args: Args, env: Startup) -> Any:
    """The session file per the flags' precedence: --no-session > --fork > --session > --continue > new."""
    from pi_core.sessions.lookup import find_session
    from pi_core.sessions.manager import SessionManager
    from pi_core.sessions.store import resolve_session_dir

    cwd = env.cwd
    session_dir = resolve_session_dir(cwd, args.session_dir, env.settings.session_dir)
    if args.no_session:
        return SessionManager.in_memory(cwd)
    if args.fork:
        found = find_session(args.fork, cwd, session_dir)
        return SessionManager.fork_from(found.path, cwd, session_dir)
    if args.session:
        found = find_session(args.session, cwd, session_dir)
        if found.other_project:
            return SessionManager.fork_from(found.path, cwd, session_dir)
        return SessionManager.open(found.path, session_dir)
    if args.resume:
        from pi_core.sessions.picker import pick_session

        chosen = pick_session(SessionManager.list(cwd, session_dir))
        if chosen is None:
            raise SessionNotChosen("No session selected")
        return SessionManager.open(chosen, session_dir)
    if args.continue_:
        return SessionManager.continue_recent(cwd, session_dir)
    return SessionManager.create(cwd, session_dir)


def build_session(args: Args, env: Startup) -> Any:
    """Everything a mode needs, in one AgentSession."""
    from pi_core.models.resolution import initial_model
    from pi_core.resources import expand_input
    from pi_core.session import AgentSession, SessionConfig
    from pi_core.sessions.messages import llm_converter
    from pi_core.app.tool_selection import select_tools

    settings = env.settings
    models = model_registry(env)
    store = open_session_store(args, env)
    env.warnings.extend(getattr(store, "warnings", []))
    context = store.build_session_context()
    history = context.typed_messages()

    selection = select_tools(env.registry, allow=args.tools, no_tools=args.no_tools,
                             no_builtin=args.no_builtin_tools, exclude=args.exclude_tools,
                             default_names=settings.default_tools)
    sources = PromptSources(env, args)
    resources = sources.resources

    chosen = initial_model(models, cli_provider=args.provider, cli_model=args.model, has_messages=bool(history),
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
    thinking = args.thinking or chosen.thinking or (context.thinking_level if history else None) \
        or settings.default_thinking_level or "medium"
    if chosen.model is not None:
        from pi_core.models.thinking import clamp_thinking_level

        thinking = clamp_thinking_level(chosen.model, thinking)
    else:
        thinking = "off"
    if chosen.model is None and args.mode != "rpc" and (args.print or args.mode == "json" or not sys.stdin.isatty()):
        raise PiError("No models available. Set an API key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY) or add "
                      "models to models.toml in the config directory, then try again.")

    config = SessionConfig(cwd=env.cwd, model=chosen.model, thinking_level=thinking, tools=selection.active,
                           all_tools=selection.available, system_prompt=sources.build(selection.active),
                           steering_mode=settings.steering_mode, follow_up_mode=settings.follow_up_mode,
                           tool_policy=selection.policy)
    block_images = settings.block_images
    session = AgentSession(
        config, plugins=env.plugins, registry=env.registry, store=store, messages=history,
        api_key_for=lambda model: models.api_key_for(model),
        prompt_builder=sources.build, expand_input=lambda text: expand_input(text, sources.resources),
        convert_to_llm=llm_converter(block_images),
        retry=_retry_policy(settings),
    )
    session.models = models
    session.reloader = sources.reload
    session.resources = resources
    session.settings = settings
    session.quiet_startup = settings.quiet_startup and not args.verbose
    patterns = args.models if args.models is not None else settings.enabled_models
    if patterns:
        from pi_core.models.resolution import resolve_scope

        session.scoped_models = resolve_scope(models, patterns, env.warnings.append)
    session.retry_settings = settings.retry
    session.agent.tool_env.update(shell_path=settings.shell_path, shell_command_prefix=settings.shell_command_prefix,
                                  auto_resize_images=settings.auto_resize_images)
    if chosen.model is not None and not history:
        store.append_model_change(chosen.model.provider, chosen.model.id)
        store.append_thinking_level_change(thinking)
    return session


def _retry_policy(settings: Any) -> Any:
    from pi_core.llm.retry import RetryPolicy

    retry = settings.get("retry")
    provider = retry.get("provider") if isinstance(retry, dict) else None
    return RetryPolicy.from_settings(provider if isinstance(provider, dict) else None)
