"""``pi`` sub-commands (click): plugins, tools, and the package commands. Imported only when used.

Every sub-command, built-in or a plugin's (``pi_cli_commands``), runs with a ``CommandContext`` as its
click ``obj``: pi's own options given before the command's name, and the plugins they loaded.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pi_core.app.args import Args, CommandLine
from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.app.environment import Startup


@dataclass
class CommandContext:
    """What a sub-command gets as ``click.get_current_context().obj`` (or ``@click.pass_obj``).

    ``options`` are pi's options typed before the command's name (``pi -e ext.py batch ...``);
    ``global_argv`` is the same tokens as typed; ``startup`` holds the settings and plugins those
    options loaded (None for the built-in commands, which load what they need themselves).
    """

    options: Args = field(default_factory=Args)
    global_argv: list[str] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    startup: Startup | None = None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def commands() -> None:
    """pi sub-commands."""


def _plugin_options(command: click.Command) -> click.Command:
    """The options that choose plugins, as ``pi`` itself takes them: added to each listing command."""
    for option in reversed([
        click.Option(["-e", "--extension", "extensions"], multiple=True, metavar="FILE",
                     help="Load a plugin file for this run (repeatable)."),
        click.Option(["--disable-plugin", "disable_plugins"], multiple=True, metavar="NAME",
                     help="Do not load this plugin (repeatable)."),
        click.Option(["-ne", "--no-extensions", "no_extensions"], is_flag=True,
                     help="Skip plugin discovery (-e files still load)."),
        click.Option(["-a/-na", "--approve/--no-approve", "approve"], default=None,
                     help="Trust (or skip) the project's .pi files and packages for this command."),
    ]):
        command.params.insert(0, option)
    return command


def _environment(context: CommandContext, extensions: tuple[str, ...], disable_plugins: tuple[str, ...],
                 no_extensions: bool, approve: bool | None) -> Startup:
    from pi_core.app.startup import load_environment

    given = context.options
    options = given.replace(extensions=[*given.extensions, *extensions],
                            disable_plugins=[*given.disable_plugins, *disable_plugins],
                            no_extensions=given.no_extensions or no_extensions,
                            approve=given.approve if approve is None else approve)
    env = load_environment(options, context.cwd)
    for warning in env.warnings:
        click.echo(f"Warning: {warning}", err=True)
    return env


@commands.command("plugins")
@click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def plugins_command(context: CommandContext, json_: bool, extensions: tuple[str, ...],
                    disable_plugins: tuple[str, ...], no_extensions: bool, approve: bool | None) -> None:
    """List plugins: origin, contributed tools and providers, and overrides."""
    from pi_core.app.plugin_report import plugin_rows, render_plugin_rows

    env = _environment(context, extensions, disable_plugins, no_extensions, approve)
    rows = plugin_rows(env.registry, sandbox_status(context.options, env))
    if json_:
        import json

        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(render_plugin_rows(rows, env.registry))


def sandbox_status(options: Args, env: Startup) -> dict[str, str]:
    """``{plugin: "sandbox: <mode> (<mechanism>)"}`` for the plugin that would confine this run; "sandbox: off",
    or why a sandbox cannot start, under every plugin that offers one otherwise."""
    from pi_core.app.sandbox_start import resolve_sandbox
    from pi_core.toolkit.sandbox import SandboxError

    offering = [impl.plugin_name for impl in env.plugins.pm.hook.pi_sandbox.get_hookimpls()]
    try:
        chosen = resolve_sandbox(env.plugins, env.settings, env.cwd, env.agent_dir, options.sandbox)
    except SandboxError as err:
        return dict.fromkeys(offering, f"sandbox: cannot start: {err}")
    return {chosen[1]: f"sandbox: {chosen[0].describe()}"} if chosen is not None else \
        dict.fromkeys(offering, "sandbox: off")


@commands.command("tools")
@click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
@click.pass_obj
def tools_command(context: CommandContext, json_: bool, extensions: tuple[str, ...],
                  disable_plugins: tuple[str, ...], no_extensions: bool, approve: bool | None) -> None:
    """List registered tools, who provides them, and which are active by default."""
    from pi_core.app.tool_selection import select_tools

    env = _environment(context, extensions, disable_plugins, no_extensions, approve)
    registry = env.registry
    active = {t.name for t in select_tools(registry).active}
    rows = [{"name": name, "plugin": registry.tools.owner[name], "active": name in active,
             "description": tool.description.strip().splitlines()[0].lstrip("# ").split(". ")[0]} for name, tool in registry.tools.items.items()]
    if json_:
        import json

        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        mark = "*" if row["active"] else " "
        click.echo(f"{mark} {row['name']:<12} {row['plugin']:<22} {row['description']}")


@commands.command("config")
@click.option("-l", "--local", is_flag=True, help="Start in this project's settings (.pi/settings.toml).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or not) this project's .pi files for this command (with -l).")
@click.pass_obj
def config_command(context: CommandContext, local: bool, approve: bool | None) -> int:
    """Switch plugins on or off: built-in, installed, opt-in and extension files (Tab switches scope)."""
    from pi_core.app.config_command import ResourceConfig, print_list

    given = context.options.approve
    config = ResourceConfig(context.cwd, approve=given if approve is None else approve,
                            scope="project" if local else "global")
    if sys.stdin.isatty() and sys.stdout.isatty():
        from pi_core.app.config_tui import browse

        browse(config)
    else:
        print_list(config)
    return 0


_plugin_options(plugins_command)
_plugin_options(tools_command)

from pi_core.app.package_commands import (
    register_package_commands,  # cheap: click only, pip runs lazily
)

register_package_commands(commands)


def run_click(command: click.Command, argv: list[str], prog_name: str, context: CommandContext) -> int:
    """Run a click command; its usage errors and pi's user errors print without a traceback."""
    try:
        result = command.main(args=argv, prog_name=prog_name, standalone_mode=False, obj=context)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        sys.stderr.write("Aborted!\n")
        return 1
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except PiError as err:
        sys.stderr.write(f"Error: {err}\n")
        return getattr(err, "exit_code", 1)
    return result if isinstance(result, int) else 0


def run(command: CommandLine, cwd: Path | None = None) -> int:
    """Run a built-in sub-command with pi's options typed before its name."""
    context = CommandContext(options=command.options, global_argv=command.global_argv, cwd=cwd or Path.cwd())
    return run_click(commands, [command.name, *command.argv], "pi", context)


# Commands of the plugins pi ships (Pi 1.6.0 has ``mcp`` built in): with the plugin off, the word is still
# never sent to the model as a prompt.
PLUGIN_COMMANDS = {"mcp": "mcp", "batch": "batch", "acp": "acp"}


def plugin_command(env: Startup, name: str) -> click.Command | None:
    """The click command a plugin's ``pi_cli_commands`` registered as ``name``, or None; a shipped plugin's
    command whose plugin is off raises the error that says how to turn it on."""
    for _plugin, registered in env.plugins.call_sync("pi_cli_commands"):
        for command in registered:
            if command.name == name:
                return command  # type: ignore[no-any-return]
    if name in PLUGIN_COMMANDS:
        plugin = PLUGIN_COMMANDS[name]
        flags = "--no-mcp, " if name == "mcp" else ""
        raise PiError(f'"pi {name}" is a command of the {plugin} plugin, which is not loaded in this run (turned off '
                      f"by {flags}--no-extensions, --disable-plugin or the disabledPlugins setting: see pi config). "
                      f'To send "{name} ..." to the model as a prompt: pi -- {name} ...')
    return None


def run_plugin_command(found: click.Command, command: CommandLine, cwd: Path, env: Startup) -> int:
    """A plugin's sub-command, on the plugins pi's options before its name loaded."""
    from pi_core.app.startup import print_warnings

    print_warnings(env.warnings)
    return run_click(found, command.argv, f"pi {command.name}",
                     CommandContext(options=command.options, global_argv=command.global_argv, cwd=cwd, startup=env))
