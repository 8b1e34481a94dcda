"""write: create a file or replace its whole content, making parent directories as needed."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.errors import ToolError
from pi_core.toolkit.builtin import argument, builtin_tool, parameters
from pi_core.tools import Tool, ToolContext

if TYPE_CHECKING:
    from pi_core.toolkit.fileops import WriteOperations

DEFAULT_ACTIVE = True

PARAMETERS = parameters(
    ["path", "content"],
    path=argument("string", "File to write: a path relative to the working directory, or absolute"),
    content=argument("string", "The complete new content of the file"),
)

DESCRIPTION = (
    "Write a file with the given content: a new file is created, an existing one is replaced entirely. "
    "Missing parent directories are created automatically."
)


def utf16_length(text: str) -> int:
    """JavaScript's ``string.length``: the number Pi reports as "bytes"."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def encode_utf8(text: str) -> bytes:
    """UTF-8, with any lone surrogate (possible in JSON input) written as U+FFFD, as Node does."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode("utf-8")


def execute(args: dict[str, Any], ctx: ToolContext, *, operations: WriteOperations | None = None) -> str:
    """Write ``args['content']`` to the file, through ``operations``, holding the file's mutation slot."""
    from pi_core.toolkit.fileops import (  # with the first write, not with pi
        LOCAL,
        node_error_message,
    )
    from pi_core.toolkit.mutation_queue import file_mutation

    ops = operations or LOCAL
    ctx.signal.raise_if_aborted()
    path: str = args["path"]
    content: str = args["content"]
    absolute = str(ctx.resolve(path))
    with file_mutation(absolute, ctx.signal):
        ctx.signal.raise_if_aborted()
        try:
            ops.mkdir(os.path.dirname(absolute))
        except OSError as err:
            raise ToolError(node_error_message(err, "mkdir", err.filename or os.path.dirname(absolute))) from err
        ctx.signal.raise_if_aborted()
        try:
            ops.write_file(absolute, encode_utf8(content))
        except OSError as err:
            raise ToolError(node_error_message(err, "open", absolute)) from err
    return f"Successfully wrote {utf16_length(content)} bytes to {path}"


def create_write_tool(operations: WriteOperations | None = None) -> Tool:
    """A write tool on ``operations`` (the local disk, with atomic replacement, by default)."""
    return builtin_tool("write", DESCRIPTION, PARAMETERS, functools.partial(execute, operations=operations),
                        active_by_default=DEFAULT_ACTIVE, prompt_snippet="Create a file or replace all of its content",
                        prompt_guidelines=["Keep write for new files and complete rewrites."])


TOOL = create_write_tool()


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
