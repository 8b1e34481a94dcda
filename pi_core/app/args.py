"""Pi's command-line grammar (docs/cli.md#argument-grammar): one left-to-right pass, exactly as Pi users type it.

click cannot express Pi's rules (a value flag takes the next token whatever it looks like, unknown
``--flags`` consume a value, ``-p`` may take the next token as a message), so the top-level invocation
is parsed here; sub-commands (``pi plugins``, ``pi install``, a plugin's ``pi batch``) stay click commands.

The sub-command boundary: ``split_command`` finds the first bare word that could name a sub-command.
Pi's options before it are parsed here; every token after it belongs to that command's own parser.
Whether the word *is* a command is the CLI's call (plugin commands are known only once plugins load);
when it is not, the whole line is parsed again as ``pi [options] [messages...]``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (pi_core/__init__.py says why)
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

# pi_core.types.THINKING_LEVELS, spelled out: importing it would load pydantic for `pi --help`.
THINKING_CHOICES = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class Args:
    """One parsed command line. A plain class rather than a dataclass: ``pi --help`` parses one, and importing
    ``dataclasses`` (with ``inspect``) and building a 50-field dataclass cost more than the whole parse."""

    help: bool = False
    version: bool = False
    print: bool = False
    mode: str | None = None
    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    thinking: str | None = None
    models: list[str] | None = None
    list_models: bool | str = False
    continue_: bool = False
    resume: bool = False
    session: str | None = None
    session_id: str | None = None
    name: str | None = None
    fork: str | None = None
    session_dir: str | None = None
    no_session: bool = False
    tools: list[str] | None = None
    no_tools: bool = False
    no_builtin_tools: bool = False
    exclude_tools: list[str] | None = None
    extensions: list[str]
    no_extensions: bool = False
    no_mcp: bool = False
    sandbox: str | None = None  # --sandbox MODE (docs/sandbox.md)
    disable_plugins: list[str]
    skills: list[str]
    no_skills: bool = False
    prompt_templates: list[str]
    no_prompt_templates: bool = False
    themes: list[str]
    no_themes: bool = False
    use_theme: str | None = None
    tui_mode: str | None = None  # --tui-mode fullscreen|regular (setting tuiMode)
    no_context_files: bool = False
    system_prompt: str | None = None
    append_system_prompt: list[str]
    export: str | None = None
    share: str | None = None  # --share SESSION: pi's own addition (docs/sessions.md#share-a-session)
    yes: bool = False  # --yes: share without the confirmation
    verbose: bool = False
    offline: bool = False
    approve: bool | None = None  # -a / -na: this run's project-trust decision (docs/config.md#project-trust)
    messages: list[str]
    file_args: list[str]
    unknown_flags: dict[str, Any]  # open: plugin flag values, as each flag declares them
    # Where the word an unknown ``--flag`` took as its value sat among the messages (a plugin's boolean
    # flag gives it back: pi_core.app.flags.parse_plugin_flags).
    unknown_flag_positions: dict[str, int]
    plugin_flag_values: dict[str, Any] | None = None  # open: plugin flag values, as each flag declares them; parse_plugin_flags' result, once plugins are loaded
    warnings: list[str]
    errors: list[str]
    # Index in argv of the first bare word, when nothing that starts a prompt came before it
    # (a message, an @file, -p/--print, --mode, --export): where a sub-command may start.
    command_at: int | None = None

    def __init__(self, **values: object) -> None:
        self.extensions = []
        self.disable_plugins = []
        self.skills = []
        self.prompt_templates = []
        self.themes = []
        self.append_system_prompt = []
        self.messages = []
        self.file_args = []
        self.unknown_flags = {}
        self.unknown_flag_positions = {}
        self.warnings = []
        self.errors = []
        for name, value in values.items():
            if name not in _FIELDS:
                raise TypeError(f"Args() got an unexpected keyword argument {name!r}")
            setattr(self, name, value)

    def replace(self, **changes: object) -> Args:
        """A copy with ``changes`` applied (lists and dicts copied, so the copy can grow on its own)."""
        values = {name: getattr(self, name) for name in _FIELDS}
        values.update({name: value.copy() for name, value in values.items() if isinstance(value, (list, dict))})
        return Args(**{**values, **changes})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Args) and all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return f"Args({', '.join(f'{name}={getattr(self, name)!r}' for name in _FIELDS)})"

    def plugin_selection(self) -> tuple[tuple[str, ...], bool, tuple[str, ...], bool | None, bool]:
        """The options that decide which plugins load (two parses agreeing here can share one load)."""
        return tuple(self.extensions), self.no_extensions, tuple(self.disable_plugins), self.approve, self.no_mcp


class CommandLine:
    """``pi [global options] NAME [command arguments]``, split at the sub-command's name."""

    __slots__ = ("argv", "global_argv", "name", "options")

    def __init__(self, name: str, options: Args, global_argv: list[str], argv: list[str]) -> None:
        self.name = name
        self.options = options  # pi's own options, parsed from the tokens before NAME
        self.global_argv = global_argv  # those tokens, as typed
        self.argv = argv  # every token after NAME, for the command's own parser

    def __repr__(self) -> str:
        return f"CommandLine({self.name!r}, {self.options!r}, {self.global_argv!r}, {self.argv!r})"


_FIELDS = tuple(Args.__annotations__)


_BOOL_FLAGS = {
    "--help": "help", "-h": "help", "--version": "version", "-v": "version",
    "--continue": "continue_", "-c": "continue_", "--resume": "resume", "-r": "resume",
    "--no-session": "no_session", "--no-tools": "no_tools", "-nt": "no_tools",
    "--no-builtin-tools": "no_builtin_tools", "-nbt": "no_builtin_tools",
    "--no-extensions": "no_extensions", "-ne": "no_extensions", "--no-skills": "no_skills", "-ns": "no_skills",
    "--no-prompt-templates": "no_prompt_templates", "-np": "no_prompt_templates", "--no-themes": "no_themes",
    "--no-context-files": "no_context_files", "-nc": "no_context_files", "--verbose": "verbose",
    "--offline": "offline", "--no-mcp": "no_mcp", "--yes": "yes",
}
_VALUE_FLAGS = {
    "--mode": "mode", "--provider": "provider", "--model": "model", "--api-key": "api_key",
    "--thinking": "thinking", "--session": "session", "--session-id": "session_id", "--fork": "fork",
    "--session-dir": "session_dir", "--system-prompt": "system_prompt", "--export": "export",
    "--use-theme": "use_theme", "--sandbox": "sandbox", "--share": "share", "--tui-mode": "tui_mode",
}
_LIST_FLAGS = {"--models": "models", "--tools": "tools", "-t": "tools", "--exclude-tools": "exclude_tools",
               "-xt": "exclude_tools"}
_REPEAT_FLAGS = {
    "--extension": "extensions", "-e": "extensions", "--skill": "skills", "--prompt-template": "prompt_templates",
    "--theme": "themes", "--append-system-prompt": "append_system_prompt", "--disable-plugin": "disable_plugins",
}


def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def parse_args(argv: list[str]) -> Args:
    args = Args()
    i = 0
    n = len(argv)
    words_are_messages = False  # a message, @file, -p, --mode or --export came first
    while i < n:
        token = argv[i]
        has_next = i + 1 < n
        if token in _BOOL_FLAGS:
            setattr(args, _BOOL_FLAGS[token], True)
        elif token in ("--approve", "-a", "--no-approve", "-na"):
            args.approve = token in ("--approve", "-a")
        elif token == "--":
            for rest in argv[i + 1:]:  # everything after "--" is a message or an @file, never a flag
                if rest.startswith("@"):
                    args.file_args.append(rest[1:])
                else:
                    args.messages.append(rest)
            break
        elif token in ("--name", "-n"):
            if has_next:
                i += 1
                args.name = argv[i]
            else:
                args.errors.append("--name requires a value")
        elif token in ("--print", "-p"):
            args.print = True
            words_are_messages = True
            if has_next:
                nxt = argv[i + 1]
                if not nxt.startswith("@") and (not nxt.startswith("-") or nxt.startswith("---")):
                    args.messages.append(nxt)
                    i += 1
        elif token in _VALUE_FLAGS and has_next:
            i += 1
            name, value = _VALUE_FLAGS[token], argv[i]
            words_are_messages = words_are_messages or name in ("mode", "export", "share")
            if name == "thinking" and value not in THINKING_CHOICES:
                args.warnings.append(f'Invalid thinking level "{value}". Valid values: {", ".join(THINKING_CHOICES)}')
            elif name == "tui_mode" and value not in ("regular", "fullscreen"):
                args.errors.append(f'Invalid TUI mode "{value}". Valid values: regular, fullscreen')
            else:
                setattr(args, name, value)
        elif token in _LIST_FLAGS and has_next:
            i += 1
            setattr(args, _LIST_FLAGS[token], _split_list(argv[i]))
        elif token in _REPEAT_FLAGS and has_next:
            i += 1
            getattr(args, _REPEAT_FLAGS[token]).append(argv[i])
        elif token == "--list-models":
            args.list_models = True
            if has_next and not argv[i + 1].startswith(("-", "@")):
                i += 1
                args.list_models = argv[i]
        elif token.startswith("@"):
            args.file_args.append(token[1:])
            words_are_messages = True
        elif token.startswith("--"):
            name, eq, value = token[2:].partition("=")
            if eq:
                args.unknown_flags[name] = value
            elif has_next and not argv[i + 1].startswith(("-", "@")):
                i += 1
                args.unknown_flags[name] = argv[i]
                args.unknown_flag_positions[name] = len(args.messages)
            else:
                args.unknown_flags[name] = True
        elif token.startswith("-") and token != "-":
            args.errors.append(f"Unknown option: {token}")
        else:
            if not words_are_messages and not args.messages:
                args.command_at = i
            words_are_messages = True
            args.messages.append(token)
        i += 1
    return args


def unknown_flag_error(args: Args, known: Collection[str] = ()) -> str | None:
    """Pi's error for ``--flags`` that neither pi nor a loaded plugin defines, or None when all are known.

    ``known`` holds the names (without ``--``) of the flags plugins register; start-up checks once the
    plugins are loaded, before any model request.
    """
    unknown = [f"--{name}" for name in args.unknown_flags if name not in known]
    if not unknown:
        return None
    return f"Unknown option{'' if len(unknown) == 1 else 's'}: {', '.join(unknown)}"


def split_command(argv: list[str]) -> CommandLine | None:
    """Split ``argv`` at the first bare word that may name a sub-command, or None when there is none.

    ``pi -e ext.py batch tasks.jsonl -j 4`` gives name ``batch``, options parsed from ``-e ext.py`` and
    argv ``["tasks.jsonl", "-j", "4"]``: nothing after the name is read as one of pi's options.
    """
    at = parse_args(argv).command_at
    if at is None:
        return None
    return CommandLine(name=argv[at], options=parse_args(argv[:at]), global_argv=argv[:at], argv=argv[at + 1:])


def mode_name(args: Args) -> str:
    """``--mode NAME``; ``-p`` is ``text``; otherwise ``interactive`` on a terminal, else ``text``."""
    import sys

    if args.mode:
        return args.mode
    if args.print or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "text"
    return "interactive"


def session_flag_conflict(args: Args) -> str | None:
    """The error for session flags that exclude each other (docs/cli.md#session-flags), or None."""
    conflicting = [flag for flag, on in (("--session", args.session), ("--continue", args.continue_),
                                         ("--resume", args.resume), ("--no-session", args.no_session)) if on]
    if args.fork and conflicting:
        return f"--fork cannot be combined with {', '.join(conflicting)}"
    conflicting = [flag for flag in conflicting if flag != "--no-session"]
    if args.session_id is not None and conflicting:
        return f"--session-id cannot be combined with {', '.join(conflicting)}"
    return None
