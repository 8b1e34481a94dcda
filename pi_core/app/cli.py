"""The ``pi`` command: parses the line with Pi's own flag grammar and dispatches it through ``ACTIONS``.

``pi [options] NAME ...`` runs a built-in sub-command (``plugins``, ``tools``, the package commands) or a
plugin's (``pi_cli_commands``) when NAME is the first bare word; the options before NAME are pi's and
choose the plugins, everything after NAME is the command's own. Otherwise NAME is the first message, and the
run is the action of the first of ``--export``, ``--share``, ``--list-models`` the line sets, else the mode's
session (``--mode``). Building (settings, plugins, the session) is in ``app/startup.py``; the process around
the run (fast exit, the start-up stand-in editor, the async runner) in ``app/process.py``.

Nothing heavy is imported at module level: ``pi --help`` and ``pi --version`` load no plugin, SDK or UI.
"""

from __future__ import annotations

import os
import sys

from pi_core import __version__
from pi_core.app import process
from pi_core.app.process import exit_now
from pi_core.errors import PiError

# typing's, without importing typing (pi_core/__init__.py says why). pathlib too is imported where it is used:
# with re, urllib.parse and ipaddress it costs a wheel install's `pi --version` 15 M instructions.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from pi_core.app.args import Args, CommandLine
    from pi_core.app.environment import Startup

SUBCOMMANDS = ("plugins", "tools", "config", "install", "remove", "uninstall", "update", "list")

__all__ = ["ACTIONS", "cli", "exit_now", "main", "run_session"]


def cli() -> None:
    """Console-script entry point."""
    process.start()
    argv = sys.argv[1:]
    if argv in (["--version"], ["-v"]):  # what main() prints for these, before the argument parser is imported
        process.out(__version__)
        exit_now(0)
    if process.plainly_interactive(argv):  # the common start: the stand-in editor before even the parser loads
        process.start_typeahead()
    from pi_core.app.hidden_key import hide_api_key, with_hidden_key

    hide_api_key(argv)
    exit_now(main(with_hidden_key(argv)))


class Call:
    """What an action gets: the parsed line (a sub-command's: pi's options before its name), the folder, the
    sub-command's line (None for a run of pi's own), the plugins once loaded, and ``started`` to call once
    start-up is over (``process.startup_over``)."""

    __slots__ = ("args", "command", "cwd", "env", "started")

    def __init__(self, args: Args, cwd: Path, command: CommandLine | None = None, env: Startup | None = None,
                 started: Callable[[], None] = process.startup_over) -> None:
        self.args, self.cwd, self.command, self.env, self.started = args, cwd, command, env, started


def main(argv: list[str], cwd: Path | None = None) -> int:
    from pathlib import Path

    from pi_core.app.args import parse_args, split_command

    command = split_command(argv)
    if command is not None and (command.options.help or command.options.version):
        command = None  # pi --help/--version act first, as in Pi
    if command is not None:
        if command.options.errors:
            return _report_parse(command.options)
        builtin = ACTIONS.get(command.name)  # action flags start with "-": never a command's name
        if builtin is not None:
            return builtin[1](Call(command.options, cwd or Path.cwd(), command))
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
            process.out(str(err))
            return 0
        return _fail(str(err), code)
    except KeyboardInterrupt:
        return 130
    finally:
        process.release_typeahead()


def _fail(message: str, code: int = 1) -> int:
    process.err(f"Error: {message}")
    return code


def _catch_typeahead(args: Args, command: CommandLine | None) -> None:
    """An interactive run shows a stand-in editor now, taking keys while the plugins and the UI load."""
    from pi_core.app.args import mode_name

    if (mode_name(args) != "interactive" or args.resume or _action_name(args) != "--mode"
            or (command is not None and command.name.replace("-", "").replace("_", "").replace(":", "").isalnum())):
        process.release_typeahead()  # started by cli() on a guess the parse does not bear out
    else:
        process.start_typeahead()


def _version_or_help(args: Args, cwd: Path | None = None) -> int:
    if args.version:
        process.out(__version__)
    else:
        from pathlib import Path

        from pi_core.app.flags import cached_flags, help_section
        from pi_core.app.help_text import HELP

        # Plugin flags come from the cache the last run wrote: --help imports no plugin.
        sys.stdout.write(HELP + help_section(cached_flags(args, cwd or Path.cwd())))
    return 0


def _report_parse(args: Args) -> int:
    for warning in args.warnings:
        process.err(f"Warning: {warning}")
    for error in args.errors:
        process.err(f"Error: {error}")
    return 1 if args.errors else 0


def _run(args: Args, cwd: Path, command: CommandLine | None = None) -> int:
    env = None
    if command is not None:
        # A bare word after pi's options may be a plugin's command: load the plugins those options choose.
        from pi_core.app import startup as boot
        from pi_core.app.subcommands import plugin_command, run_plugin_command

        env = boot.load_for_mode(args, cwd, plugins_from=command.options)
        found = plugin_command(env, command.name)
        if found is not None:
            _report_parse(command.options)
            _check_flags(command.options, env)
            return run_plugin_command(found, command, cwd, env)
        code = _report_parse(args)  # not a command after all: the whole line is pi's
        if code or args.version or args.help:
            return code or _version_or_help(args, cwd)
        if args.plugin_selection() != command.options.plugin_selection():
            env = boot.load_for_mode(args, cwd, trust=env.trust if args.approve == command.options.approve else None)
    return run_session(args, cwd, env)


def run_session(args: Args, cwd: Path, env: Startup | None = None) -> int:
    """Run ``args``' action as ``pi [options]`` does, on plugins already loaded (``env``): also for a plugin's
    sub-command that is a mode by another name (``pi acp``)."""
    process.startup_begins()
    try:
        return _act(Call(args, cwd, env=env))
    finally:
        process.startup_over()


def _act(call: Call) -> int:
    """The dispatch of a run of pi's own: its ``ACTIONS`` entry, after the plugins when it needs them."""
    args = call.args
    if args.unknown_flags:
        call.env = call.env or _load(call)
        _check_flags(args, call.env)
    needs_plugins, action = ACTIONS[_action_name(args)]
    if needs_plugins:
        from pi_core.app.args import session_flag_conflict

        conflict = session_flag_conflict(args)
        if conflict is not None:
            return _fail(conflict)
        call.env = call.env or _load(call)
        from pi_core.app.flags import parse_plugin_flags

        parse_plugin_flags(args, call.env.registry)  # before the messages are read: a boolean flag gives back its word
    return action(call)


def _action_name(args: Args) -> str:
    """The ``ACTIONS`` key of a run of pi's own: the first action flag set, else ``--mode``."""
    if args.export:
        return "--export"
    if args.share:
        return "--share"
    return "--mode" if args.list_models is False else "--list-models"


def _load(call: Call) -> Startup:
    from pi_core.app.startup import load_for_mode

    return load_for_mode(call.args, call.cwd)


def _check_flags(args: Args, env: Startup) -> None:
    """After plugins load: a ``--flag`` neither pi nor a plugin defines is an error (docs/cli.md#unknown-options)."""
    from pi_core.app.args import unknown_flag_error

    error = unknown_flag_error(args, env.plugin_flags)
    if error is not None:
        raise PiError(error)


def _auth_command(call: Call) -> int:
    from pi_core.app.auth_command import run

    assert call.command is not None
    return run(call.command.argv, call.command.options)


def _click_command(call: Call) -> int:
    from pi_core.app.subcommands import run

    assert call.command is not None
    return run(call.command, call.cwd)


def _export(call: Call) -> int:
    from pi_core.app.share_command import run_export

    process.out(run_export(call.args, call.cwd))
    return 0


def _share(call: Call) -> int:
    from pi_core.app.share_command import export_theme, run_share

    process.out(run_share(call.args, call.cwd, export_theme(call.args, call.cwd).export_colors()))
    return 0


def _list_models(call: Call) -> int:
    from pi_core.app.startup import list_models

    assert call.env is not None
    process.out(list_models(call.args, call.env))
    return 0


def _run_mode(call: Call) -> int:
    """The one call that runs a session: ``mode.run`` on what startup built for it (``mode_request``)."""
    from pi_core.app import startup as boot
    from pi_core.app.args import mode_name

    assert call.env is not None
    mode = boot.choose_mode(call.env, mode_name(call.args))
    request = boot.mode_request(mode, call.args, call.env, boot.session_picker(call.env))
    process.hand_typeahead_to(mode.run)
    call.started()
    return process.run_to_end(mode.run(request), request.session)


# Every run is one entry: a built-in sub-command by its name (run before any plugin loads; each module is
# imported only when its command runs), else the first action flag the line sets, else ``--mode``. The flag
# says whether the plugins load first. A plugin's command (pi_cli_commands) is looked up once the plugins
# that pi's options choose have loaded (``_run``).
ACTIONS: dict[str, tuple[bool, Callable[[Call], int]]] = {
    "auth": (False, _auth_command), **dict.fromkeys(SUBCOMMANDS, (False, _click_command)),
    "--export": (False, _export), "--share": (False, _share),
    "--list-models": (True, _list_models), "--mode": (True, _run_mode)}
