"""The ``pi install`` / ``remove`` / ``update`` / ``list`` click commands over ``pi_core.app.packages``.

Importing this module is cheap (click only): pip, plugins and settings load when a command runs.
"""

from __future__ import annotations

from typing import Any

import click

from pi_core.app.packages import (
    describe,
    install,
    list_packages,
    remove,
    update,
)
from pi_core.app.pip_env import PackageError


def _source(ctx: click.Context, source: str | None, command: str) -> str:
    if not source:
        click.echo(ctx.get_usage(), err=True)
        raise PackageError(f"Missing {command} source.")
    return source


def _approve(ctx: click.Context, approve: bool | None) -> bool | None:
    """``-a`` / ``-na`` after the command's name, else as given before it (``pi -a install -l ...``)."""
    if approve is not None:
        return approve
    options = getattr(ctx.find_root().obj, "options", None)
    return getattr(options, "approve", None)


def _trust_option(command: Any) -> Any:
    return click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
                        help="Trust (or not) the project's .pi files for this command.")(command)


def register_package_commands(group: click.Group) -> None:
    """Add install, remove (alias uninstall), list and update to the ``pi`` sub-command group."""
    passthrough = {"ignore_unknown_options": False, "allow_extra_args": True}

    @group.command("install", context_settings=passthrough)
    @click.argument("source", required=False)
    @click.option("-l", "--local", is_flag=True,
                  help="Install into this project's .pi/packages and record it in .pi/settings.toml.")
    @click.option("-e", "--editable", is_flag=True, help="Install a local path in editable mode.")
    @_trust_option
    @click.pass_context
    def install_command(ctx: click.Context, source: str | None, local: bool, editable: bool,
                        approve: bool | None) -> None:
        """Install a tool pack with pip (name, name==1.2, a path or a git URL); pip options go after --."""
        install(_source(ctx, source, "install"), local=local, editable=editable, pip_args=list(ctx.args),
                approve=_approve(ctx, approve))

    for command_name in ("remove", "uninstall"):
        @group.command(command_name)
        @click.argument("source", required=False)
        @click.option("-l", "--local", is_flag=True,
                      help="Remove it from this project's packages and .pi/settings.toml.")
        @_trust_option
        @click.pass_context
        def remove_command(ctx: click.Context, source: str | None, local: bool, approve: bool | None) -> None:
            """Uninstall a tool pack (its distribution name, or the requirement it was installed with)."""
            remove(_source(ctx, source, ctx.info_name or "remove"), local=local, approve=_approve(ctx, approve))

    @group.command("update", context_settings=passthrough)
    @click.argument("sources", nargs=-1)
    @click.option("--models", "models_only", is_flag=True,
                  help="Refresh the model catalog only (from Pi's model data on the npm registry).")
    @_trust_option
    @click.pass_context
    def update_command(ctx: click.Context, sources: tuple[str, ...], models_only: bool, approve: bool | None) -> None:
        """Upgrade the named packs, or every installed pack and project requirement."""
        if models_only:
            if sources:
                raise PackageError("--models cannot be combined with a positional source")
            from pi_core.models.catalog_build import refresh_cached_catalog

            click.echo(refresh_cached_catalog())
            return
        update(sources, pip_args=list(ctx.args), approve=_approve(ctx, approve))

    @group.command("list")
    @click.option("--json", "json_", is_flag=True, help="Machine-readable output.")
    @_trust_option
    @click.pass_context
    def list_command(ctx: click.Context, json_: bool, approve: bool | None) -> None:
        """Installed packs with the tools, providers, renderers and commands they add."""
        data = list_packages(approve=_approve(ctx, approve))
        if json_:
            import json

            click.echo(json.dumps(data, indent=2))
            return
        if not data["installed"] and not data["project"]:
            click.echo("No packages installed.")
            return
        if data["installed"]:
            click.echo("Installed packages:")
            for line in describe(data["installed"]):
                click.echo(line)
        if data["project"]:
            click.echo("Project packages:")
            for entry in data["project"]:
                click.echo(f"  {entry['requirement']}")
                state = f"installed {entry['installed']}" if entry["installed"] else "not installed"
                click.echo(click.style(f"    {state}", dim=True))
