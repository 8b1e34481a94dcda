"""batch: the ``pi batch`` sub-command, many pi sessions at once on this machine or on a Ray cluster."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core import hookimpl

if TYPE_CHECKING:
    import click


@hookimpl
def pi_cli_commands() -> list[click.Command]:
    from pi_plugins.batch.command import batch

    return [batch]
