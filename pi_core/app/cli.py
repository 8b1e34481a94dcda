"""The ``pi`` command: the main invocation with Pi's own flag grammar; sub-commands live in commands.py.

Nothing heavy is imported at module level: ``pi --help`` and ``pi --version`` load no plugin, SDK or UI.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


from pi_core import __version__
from pi_core.app.args import HELP, Args, parse_args
from pi_core.errors import PiError

SUBCOMMANDS = ("plugins", "tools", "install", "remove", "uninstall", "update", "list")


def cli() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if argv and argv[0] == "auth":
        from pi_core.app.auth_command import run as run_auth

        sys.exit(run_auth(argv[1:]))
    if argv and argv[0] in SUBCOMMANDS:
        from pi_core.app.subcommands import run

        sys.exit(run(argv))
    sys.exit(main(argv))


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


def _fail(message: str, code: int = 1) -> int:
    _err(f"Error: {message}")
    return code


def main(argv: list[str], cwd: Path | None = None) -> int:
    args = parse_args(argv)
    if args.offline or os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes"):
        os.environ["PI_OFFLINE"] = "1"
        os.environ["PI_SKIP_VERSION_CHECK"] = "1"
    for warning in args.warnings:
        _err(f"Warning: {warning}")
    if args.errors:
        for error in args.errors:
            _err(f"Error: {error}")
        return 1
    if args.version:
        _out(__version__)
        return 0
    if args.help:
        sys.stdout.write(HELP)
        return 0
    try:
        return _run(args, cwd or Path.cwd())
    except PiError as err:
        code = getattr(err, "exit_code", 1)
        if code == 0:
            _out(str(err))
            return 0
        return _fail(str(err), code)
    except KeyboardInterrupt:
        return 130


def _run(args: Args, cwd: Path) -> int:
    if args.export:
        from pi_core.export.html import export_html

        out = Path(args.messages[0]) if args.messages else cwd / f"pi-session-{Path(args.export).stem}.html"
        path = export_html(Path(args.export), out)
        _out(f"Exported to: {path}")
        return 0
    if args.mode == "rpc" and args.file_args:
        return _fail("@file arguments are not supported in RPC mode")
    conflicting = [flag for flag, on in (("--session", args.session), ("--continue", args.continue_),
                                         ("--resume", args.resume), ("--no-session", args.no_session)) if on]
    if args.fork and conflicting:
        return _fail(f"--fork cannot be combined with {', '.join(conflicting)}")

    from pi_core.app import startup as boot

    if args.mode == "rpc":
        from pi_core.modes.rpc import protect_stdout

        protect_stdout()  # before plugins load: a plugin printing at import must not corrupt the protocol
    env = boot.load_environment(args, cwd)
    _print_warnings(env.warnings)
    plugin_command = _plugin_command(env, args)
    if plugin_command is not None:
        command, rest = plugin_command
        return command.main(args=rest, prog_name=f"pi {command.name}", standalone_mode=False) or 0
    if args.list_models is not False:
        from pi_core.models.registry import format_model_list

        models = boot.model_registry(env)
        models.discover(env.settings)  # local servers answer only when asked
        search = args.list_models if isinstance(args.list_models, str) else None
        _out(format_model_list(models.available_models(), search))
        return 0

    interactive = args.mode != "rpc" and args.mode != "json" and not args.print and sys.stdin.isatty()
    stdin_text = "" if args.mode == "rpc" else boot.read_piped_stdin()
    file_text, images = boot.read_file_args(args.file_args, cwd)
    shown = len(env.warnings)
    session = boot.build_session(args, env)
    _print_warnings(env.warnings[shown:])

    if args.mode == "rpc":
        from pi_core.modes.rpc import run_rpc_mode

        return _run_async(run_rpc_mode(session), session)
    prompts = list(args.messages)
    first = stdin_text + file_text + (prompts.pop(0) if prompts else "")
    if interactive and sys.stdout.isatty():
        from pi_plugins.interactive import run_interactive

        return _run_async(run_interactive(session, initial_message=first or None, initial_images=images,
                                          startup=env), session)
    from pi_core.modes.print_mode import run_print_mode

    queue = ([first] if first or images else []) + prompts
    return _run_async(run_print_mode(session, queue, images, json_mode=args.mode == "json"), session)


def _plugin_command(env: object, args: Args) -> tuple[Any, list[str]] | None:
    """``pi <name> ...`` where a plugin's ``pi_cli_commands`` registered <name>."""
    if not args.messages or args.print or args.mode:
        return None
    from pi_core.registry import call_each

    for _plugin, commands_ in call_each(env.plugins, "pi_cli_commands"):  # type: ignore[attr-defined]
        for command in commands_:
            if command.name == args.messages[0]:
                argv = sys.argv[1:]
                return command, argv[argv.index(command.name) + 1:] if command.name in argv else []
    return None


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        _err(warning if warning.startswith("Warning:") else f"Warning: {warning}")


def _run_async(coro: object, session: object) -> int:
    from pi_core.modes.print_mode import run_with_signals

    return run_with_signals(coro, session)  # type: ignore[arg-type]
