"""The ``pi`` command (placeholder until the full CLI lands)."""

from __future__ import annotations

import click

from pi_core import __version__


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-v", "--version", message="%(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """pi: a minimal, hackable coding agent."""
