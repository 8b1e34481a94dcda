"""``pi`` sub-commands (click): plugins, tools, and the package commands. Imported only when used."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from pi_core.app.args import Args
from pi_core.errors import PiError

@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def commands() -> None:
    """pi sub-commands."""


def _environment(no_extensions: bool = False) -> object:
    from pi_core.app.startup import load_environment

    env = load_environment(Args(no_extensions=no_extensions), Path.cwd())
    for warning in env.warnings:
        click.echo(f"Warning: {warning}", err=True)
    return env


@commands.command("plugins")
@click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
def plugins_command(json_: bool) -> None:
    """List plugins: origin, contributed tools and providers, and overrides."""
    from pi_core.app.plugin_report import plugin_rows, render_plugin_rows

    env = _environment()
    rows = plugin_rows(env.registry)  # type: ignore[attr-defined]
    if json_:
        import json

        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(render_plugin_rows(rows, env.registry))  # type: ignore[attr-defined]


@commands.command("tools")
@click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
def tools_command(json_: bool) -> None:
    """List registered tools, who provides them, and which are active by default."""
    from pi_core.app.tool_selection import select_tools

    env = _environment()
    registry = env.registry  # type: ignore[attr-defined]
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


from pi_core.app.packages import register_package_commands  # noqa: E402 - cheap: click only, pip runs lazily

register_package_commands(commands)


def run(argv: list[str]) -> int:
    """Run a sub-command; errors meant for the user print without a traceback."""
    try:
        commands.main(args=argv, prog_name="pi", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except PiError as err:
        sys.stderr.write(f"Error: {err}\n")
        return 1
    return 0
