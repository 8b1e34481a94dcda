"""The ``pi`` command: the main invocation with Pi's own flag grammar; sub-commands live in subcommands.py.

``pi [options] NAME ...`` runs a built-in sub-command (``plugins``, ``tools``, the package commands) or a
plugin's (``pi_cli_commands``) when NAME is the first bare word; the options before NAME are pi's and
choose the plugins, everything after NAME is the command's own. Otherwise NAME is the first message.

Nothing heavy is imported at module level: ``pi --help`` and ``pi --version`` load no plugin, SDK or UI.
"""

from __future__ import annotations

import gc
import os
import sys

from pi_core import __version__
from pi_core.errors import PiError

# typing's, without importing typing (pi_core/__init__.py says why). pathlib too is imported where it is used:
# with re, urllib.parse and ipaddress it costs a wheel install's `pi --version` 15 M instructions.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    import click

    from pi_core.app.args import Args, CommandLine
    from pi_core.app.environment import Startup
    from pi_core.app.trust import TrustDecision
    from pi_core.mode import Mode
    from pi_core.sessions.picker import Picker

SUBCOMMANDS = ("plugins", "tools", "config", "install", "remove", "uninstall", "update", "list")
# Commands of the plugins pi ships (Pi 1.6.0 has ``mcp`` built in): with the plugin off, the word is still
# never sent to the model as a prompt.
PLUGIN_COMMANDS = {"mcp": "mcp", "batch": "batch", "acp": "acp"}


_EXITING = False  # set by cli(): the process ends right after main(), so the modes may skip teardown


def cli() -> None:
    """Console-script entry point."""
    global _EXITING
    _EXITING = sys.getprofile() is None and sys.gettrace() is None
    argv = sys.argv[1:]
    if argv in (["--version"], ["-v"]):  # what main() prints for these, before the argument parser is imported
        _out(__version__)
        exit_now(0)
    if _plainly_interactive(argv):  # the common start: the stand-in editor before even the parser loads
        from pi_core.app import typeahead

        typeahead.start()
    from pi_core.app.hidden_key import hide_api_key, with_hidden_key

    hide_api_key(argv)
    exit_now(main(with_hidden_key(argv)))


# Options that never keep a run from being interactive: flags, and options with one value. Anything else (-p,
# --mode, --api-key, -r, --help, an unknown flag, a first word that may be a command) waits for the real parse.
_NEUTRAL_FLAGS = frozenset((
    "-c", "--continue", "--no-session", "--no-tools", "-nt", "--no-builtin-tools", "-nbt", "--no-extensions", "-ne",
    "--no-skills", "-ns", "--no-prompt-templates", "-np", "--no-themes", "--no-context-files", "-nc", "--verbose",
    "--offline", "--no-mcp", "--approve", "-a", "--no-approve", "-na"))
_NEUTRAL_OPTIONS = frozenset((
    "--provider", "--model", "--models", "--thinking", "--session", "--session-id", "--session-dir", "--fork",
    "--system-prompt", "--append-system-prompt", "--use-theme", "--theme", "--tools", "-t", "--exclude-tools", "-xt",
    "--extension", "-e", "--skill", "--prompt-template", "--disable-plugin", "--name", "-n", "--sandbox",
    "--tui-mode"))


def _plainly_interactive(argv: list[str]) -> bool:
    """Whether ``argv`` surely asks for the interactive UI (main's parse then decides for good)."""
    if sys.platform == "win32" or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    i, words = 0, False
    while i < len(argv):
        token = argv[i]
        if token in _NEUTRAL_OPTIONS:
            i += 1
        elif token == "--" or token.startswith("@"):
            words = True
        elif token not in _NEUTRAL_FLAGS and (token.startswith("-") or not (words or " " in token)):
            return False
        else:
            words = words or not token.startswith("-")
        i += 1
    return True


def exit_now(code: int) -> None:
    """Leave as soon as the run is done: the session file is written and closed, the terminal restored
    (the modes do both before returning), atexit handlers run (temp dirs); then flush stdout/stderr
    and ``os._exit``, skipping the interpreter's teardown of ~500 modules (0.1-0.4 s that Pi never pays)."""
    import atexit

    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # a profiler or debugger writes its results after the program: let it
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``pi -p … | head``): nothing left to deliver
            pass
    os._exit(code)


def _out(text: str) -> None:
    _release_typeahead()  # the start-up stand-in editor gives way (what was typed stays on screen)
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    _release_typeahead()
    sys.stderr.write(text + "\n")


def _fail(message: str, code: int = 1) -> int:
    _err(f"Error: {message}")
    return code


def main(argv: list[str], cwd: Path | None = None) -> int:
    from pathlib import Path

    from pi_core.app.args import parse_args, split_command

    command = split_command(argv)
    if command is not None and (command.options.help or command.options.version):
        command = None  # pi --help/--version act first, as in Pi
    if command is not None:
        if command.options.errors:
            return _report_parse(command.options)
        builtin = BUILTIN_COMMANDS.get(command.name)
        if builtin is not None:
            return builtin(command, cwd or Path.cwd())
    args = parse_args(argv)
    if args.offline or os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        os.environ["PI_OFFLINE"] = "1"
        os.environ["PI_SKIP_VERSION_CHECK"] = "1"
    if command is None:
        code = _report_parse(args)
        if code or args.version or args.help:
            return code or _version_or_help(args, cwd)
    try:
        _catch_typeahead(args, command)
        return _run(args, cwd or Path.cwd(), command)
    except PiError as err:
        code = getattr(err, "exit_code", 1)
        if code == 0:
            _out(str(err))
            return 0
        return _fail(str(err), code)
    except KeyboardInterrupt:
        return 130
    finally:
        _release_typeahead()


def _auth_command(command: CommandLine, cwd: Path) -> int:
    from pi_core.app.auth_command import run

    return run(command.argv, command.options)


def _click_command(command: CommandLine, cwd: Path) -> int:
    from pi_core.app.subcommands import run

    return run(command, cwd)


# The built-in sub-commands, run before any plugin loads; each module is imported only when its command runs.
# A plugin's command (pi_cli_commands) is looked up once the plugins that pi's options choose have loaded.
BUILTIN_COMMANDS: dict[str, Callable[[CommandLine, Path], int]] = {
    "auth": _auth_command, **dict.fromkeys(SUBCOMMANDS, _click_command)}


def _catch_typeahead(args: Args, command: CommandLine | None) -> None:
    """An interactive run shows a stand-in editor now, taking keys while the plugins and the UI load."""
    if (sys.platform == "win32" or _mode_name(args) != "interactive" or args.resume or args.export or args.share or args.list_models is not False
            or (command is not None and _may_be_command(command.name))):
        _release_typeahead()  # started by cli() on a guess the parse does not bear out
        return
    from pi_core.app import typeahead

    typeahead.start()


def _may_be_command(word: str) -> bool:
    return word.replace("-", "").replace("_", "").replace(":", "").isalnum()


def _release_typeahead() -> None:
    if "pi_core.app.typeahead" in sys.modules:
        sys.modules["pi_core.app.typeahead"].release()


def _version_or_help(args: Args, cwd: Path | None = None) -> int:
    if args.version:
        _out(__version__)
    else:
        from pathlib import Path

        from pi_core.app.flags import cached_flags, help_section
        from pi_core.app.help_text import HELP

        # Plugin flags come from the cache the last run wrote: --help imports no plugin.
        sys.stdout.write(HELP + help_section(cached_flags(args, cwd or Path.cwd())))
    return 0


def _report_parse(args: Args) -> int:
    for warning in args.warnings:
        _err(f"Warning: {warning}")
    for error in args.errors:
        _err(f"Error: {error}")
    return 1 if args.errors else 0


def _run(args: Args, cwd: Path, command: CommandLine | None = None) -> int:
    if command is not None:
        # A bare word after pi's options may be a plugin's command: load the plugins those options choose.
        env = _load(command.options, cwd, rpc=args.mode == "rpc", mode=_mode_name(args))
        found = _plugin_command(env, command.name)
        if found is not None:
            _report_parse(command.options)
            _check_flags(command.options, env)
            from pi_core.app.startup import print_warnings
            from pi_core.app.subcommands import CommandContext, run_click

            print_warnings(env.warnings)

            return run_click(found, command.argv, f"pi {command.name}",
                             CommandContext(options=command.options, global_argv=command.global_argv, cwd=cwd,
                                            startup=env))
        if command.name in PLUGIN_COMMANDS:
            raise PiError(_missing_command(command.name))
        code = _report_parse(args)  # not a command after all: the whole line is pi's
        if code or args.version or args.help:
            return code or _version_or_help(args, cwd)
        if args.plugin_selection() != command.options.plugin_selection():
            env = _load(args, cwd, rpc=args.mode == "rpc", mode=_mode_name(args),
                        trust=env.trust if args.approve == command.options.approve else None)
        return _run_session(args, cwd, env)
    return _run_session(args, cwd, None)


def _missing_command(name: str) -> str:
    plugin = PLUGIN_COMMANDS[name]
    flags = "--no-mcp, " if name == "mcp" else ""
    return (f'"pi {name}" is a command of the {plugin} plugin, which is not loaded in this run (turned off by '
            f"{flags}--no-extensions, --disable-plugin or the disabledPlugins setting: see pi config). "
            f'To send "{name} ..." to the model as a prompt: pi -- {name} ...')


def _load(args: Args, cwd: Path, *, rpc: bool, mode: str, trust: TrustDecision | None = None) -> Startup:
    from pi_core.app import startup as boot

    if rpc:
        from pi_core.modes.rpc import protect_stdout

        protect_stdout()  # before plugins load: a plugin printing at import must not corrupt the protocol
    return boot.load_environment(args, cwd, mode=mode, trust=trust)


def _check_flags(args: Args, env: Startup) -> None:
    """After plugins load: a ``--flag`` neither pi nor a plugin defines is an error (docs/cli.md#unknown-options)."""
    from pi_core.app.args import unknown_flag_error

    error = unknown_flag_error(args, env.plugin_flags)
    if error is not None:
        raise PiError(error)


def _export_theme(args: Args, cwd: Path) -> Any:
    """The page colours of ``--export``: the ``theme`` setting's theme, as Pi's export uses."""
    from pathlib import Path

    from pi_core.app.settings import Settings
    from pi_core.app.trust import project_trusted
    from pi_core.config_paths import agent_dir
    from pi_core.resources.themes import active_theme, setting_theme_paths

    trusted = project_trusted(cwd, agent_dir(), approve=args.approve)  # no plugins load for an export
    settings = Settings.load(cwd, project_trusted=trusted)
    theme, _found, warnings = active_theme(
        cwd, agent_dir(), settings.get("theme"), cli_paths=[Path(p).expanduser() for p in args.themes],
        setting_paths=setting_theme_paths(settings.scope_data("global"), settings.scope_data("project"), agent_dir(), cwd),
        no_themes=args.no_themes, project_trusted=lambda: trusted,
    )
    for warning in warnings:
        _err(f"Warning: {warning}")
    return theme


def run_session(args: Args, cwd: Path, env: Startup | None = None) -> int:
    """Run a session as ``pi [options]`` does, on plugins already loaded (``env``): for a plugin's sub-command
    that is a mode by another name (``pi acp``)."""
    return _run_session(args, cwd, env)


def _run_session(args: Args, cwd: Path, env: Startup | None) -> int:
    if not _EXITING:  # pi's own process only: a test or an embedding program keeps its collector as it was
        return _start_session(args, cwd, env)
    # Start-up creates some hundred thousand objects that live as long as the process (modules, classes,
    # plugins, the catalog): collecting while they pile up finds nothing (~2 % of a print run's instructions).
    # Frozen once the session is built, the collector never walks them again (not at the first request
    # either, where re-enabling alone would walk them all at once).
    gc.disable()
    try:
        return _start_session(args, cwd, env, started=_startup_over)
    finally:
        _startup_over()


def _startup_over() -> None:
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _start_session(args: Args, cwd: Path, env: Startup | None,
                   started: Callable[[], None] = lambda: None) -> int:
    if args.unknown_flags:
        env = env or _load(args, cwd, rpc=args.mode == "rpc", mode=_mode_name(args))
        _check_flags(args, env)
    if args.export:
        return _export(args, cwd)
    if args.share:
        from pi_core.app.share_command import run_share

        _out(run_share(args, cwd, _export_theme(args, cwd).export_colors()))
        return 0
    conflicting = [flag for flag, on in (("--session", args.session), ("--continue", args.continue_),
                                         ("--resume", args.resume), ("--no-session", args.no_session)) if on]
    if args.fork and conflicting:
        return _fail(f"--fork cannot be combined with {', '.join(conflicting)}")
    conflicting = [flag for flag in conflicting if flag != "--no-session"]
    if args.session_id is not None and conflicting:
        return _fail(f"--session-id cannot be combined with {', '.join(conflicting)}")

    if env is None:
        env = _load(args, cwd, rpc=args.mode == "rpc", mode=_mode_name(args))
    from pi_core.app.flags import parse_plugin_flags

    parse_plugin_flags(args, env.registry)  # before the messages are read: a boolean flag gives back its word
    if args.list_models is not False:
        return _list_models(args, env)
    return _run_mode(_choose_mode(env, args), args, env, started)


def _export(args: Args, cwd: Path) -> int:
    from pathlib import Path

    from pi_core.export.html import export_html

    assert args.export is not None
    out = Path(args.messages[0]) if args.messages else cwd / f"pi-session-{Path(args.export).stem}.html"
    theme = _export_theme(args, cwd)
    path = export_html(Path(args.export), out, colors=theme.export_colors())
    _out(f"Exported to: {path}")
    return 0


def _list_models(args: Args, env: Startup) -> int:
    from pi_core.app import startup as boot
    from pi_core.models.resolution import format_model_list

    models = boot.model_registry(env)
    models.discover(env.settings)  # local servers answer only when asked
    boot.print_warnings(env.warnings)  # after the models files were read: their errors are shown too
    search = args.list_models if isinstance(args.list_models, str) else None
    _out(format_model_list(models.available_models(), search))
    return 0


def _run_mode(mode: Mode, args: Args, env: Startup, started: Callable[[], None]) -> int:
    """The one call that runs a session: ``mode.run`` on what startup built for it (``mode_request``)."""
    from pi_core.app import startup as boot

    request = boot.mode_request(mode, args, env, _session_picker(env))
    if "pi_core.app.typeahead" in sys.modules:
        sys.modules["pi_core.app.typeahead"].hand_to(mode.run)
    started()
    return _run_async(mode.run(request), request.session)


def _mode_name(args: Args) -> str:
    """``--mode NAME``; ``-p`` is ``text``; otherwise ``interactive`` on a terminal, else ``text``."""
    if args.mode:
        return args.mode
    if args.print or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return "text"
    return "interactive"


def _choose_mode(env: Startup, args: Args) -> Mode:
    modes = env.registry.modes.items
    name = _mode_name(args)
    mode = modes.get(name)
    if mode is None:
        known = ", ".join(sorted(modes)) or "none"
        raise PiError(f'Unknown mode "{name}" (available: {known}). A mode comes from a plugin; '
                      "check `pi plugins` for a disabled or failed one.")
    return mode  # type: ignore[no-any-return]


def _session_picker(env: Startup) -> Picker | None:
    """``pi -r``: the interactive mode's picker, else any mode's that has one."""
    modes = env.registry.modes.items
    ordered = [modes["interactive"]] if "interactive" in modes else []
    ordered += [m for name, m in modes.items() if name != "interactive"]
    return next((m.pick_session for m in ordered if m.pick_session is not None), None)


def _plugin_command(env: Startup, name: str) -> click.Command | None:
    """The click command a plugin's ``pi_cli_commands`` registered as ``name``, or None."""
    for _plugin, commands_ in env.plugins.call_sync("pi_cli_commands"):
        registered: list[click.Command] = commands_
        for command in registered:
            if command.name == name:
                return command
    return None


def _run_async(coro: object, session: object) -> int:
    from pi_core.modes.print_mode import run_with_signals

    return run_with_signals(coro, session, exiting=_EXITING)  # type: ignore[arg-type]
