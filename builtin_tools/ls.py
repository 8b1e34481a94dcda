"""ls: list a directory's entries, dotfiles included, directories marked with a trailing "/"."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.errors import ToolError
from pi_core.toolkit.builtin import argument, builtin_tool, parameters
from pi_core.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from pi_core.toolkit.fileops import LsOperations

DEFAULT_ACTIVE = False
DEFAULT_LIMIT = 500

PARAMETERS = parameters(
    path=argument("string", "Directory to list; the working directory when left out"),
    limit=argument("number", "Most entries to return (500 when left out)"),
)

DESCRIPTION = (
    "List the entries of a directory in alphabetical order, dotfiles included; directories end with '/'. "
    "Output stops at 500 entries or 50KB, whichever comes first."
)


def _sort_key(name: str) -> tuple[str, str]:
    # Case-insensitive, like Pi's lower-cased locale comparison; the raw name breaks ties stably.
    return name.casefold(), name


def execute(args: dict[str, Any], ctx: ToolContext, *, operations: LsOperations | None = None) -> ToolResult | str:
    """List the directory named in ``args`` through ``operations``."""
    from pi_builtin_tools._listing import (  # with the first listing, not with pi
        Notice,
        listing_result,
    )

    from pi_core.toolkit.fileops import LOCAL, node_error_message
    from pi_core.toolkit.procs import js_number

    ops = operations or LOCAL
    ctx.signal.raise_if_aborted()
    directory = str(ctx.resolve(args.get("path") or "."))
    limit = args.get("limit")
    effective: float = DEFAULT_LIMIT if limit is None else limit
    if not ops.exists(directory):
        raise ToolError(f"Path not found: {directory}")
    try:
        is_dir = ops.is_dir(directory)
    except OSError as err:
        raise ToolError(f"Path not found: {directory}") from err
    if not is_dir:
        raise ToolError(f"Not a directory: {directory}")
    try:
        names = ops.list_dir(directory)
    except OSError as err:
        raise ToolError(f"Cannot read directory: {node_error_message(err, 'scandir', directory)}") from err
    names.sort(key=_sort_key)
    entries: list[str] = []
    limit_reached = False
    for name in names:
        if len(entries) >= effective:
            limit_reached = True
            break
        ctx.signal.raise_if_aborted()
        try:
            suffix = "/" if ops.is_dir(f"{directory.rstrip('/')}/{name}") else ""
        except OSError:
            continue  # a dangling symlink or an entry that vanished: Pi skips what it cannot stat
        entries.append(name + suffix)
    if not entries:
        return "(empty directory)"
    notice = Notice(f"{js_number(effective)} entries limit reached. Use limit={js_number(effective * 2)} for more",
                    "entryLimitReached", effective)
    return listing_result(entries, notice if limit_reached else None)


def create_ls_tool(operations: LsOperations | None = None) -> Tool:
    """An ls tool on ``operations`` (the local disk by default)."""
    return builtin_tool("ls", DESCRIPTION, PARAMETERS, functools.partial(execute, operations=operations),
                        active_by_default=DEFAULT_ACTIVE, prompt_snippet="List the entries of a directory")


TOOL = create_ls_tool()


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
