"""find: list files and directories matching a glob, relative to the search directory, honouring .gitignore."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.builtin import argument, builtin_tool, parameters

# The helpers (globs, ripgrep, the listing format) are imported where they are used: pi loads every tool
# plugin on start, and most runs never search.

DEFAULT_ACTIVE = False
DEFAULT_LIMIT = 1000

PARAMETERS = parameters(
    ["pattern"],
    pattern=argument("string", "Glob to match, such as '*.py', '**/*.toml' or 'src/**/test_*.py'"),
    path=argument("string", "Directory to search; the working directory if omitted"),
    limit=argument("number", "Return at most this many paths (1000 unless set)"),
)

DESCRIPTION = (
    "Find files by glob pattern. Returns the matching paths relative to the search directory, skipping "
    "what .gitignore excludes. Results stop at 1000 paths or 50KB of output, whichever comes first."
)
SNIPPET = "Find files by glob pattern (skips what .gitignore excludes)"


class FindOperations(Protocol):
    """A replacement file system for find (remote host, container)."""

    def exists(self, path: str) -> bool: ...

    def glob(self, pattern: str, cwd: str, ignore: list[str], limit: float) -> list[str]:
        """Paths (absolute or relative to ``cwd``) matching ``pattern`` under ``cwd``."""


@dataclass(eq=False, repr=False)
class FindOptions:
    """``operations`` replaces the local ripgrep listing entirely."""

    operations: FindOperations | None = None


def make_execute(options: FindOptions) -> Callable[[dict[str, Any], ToolContext], ToolResult]:
    """The ``execute`` function for a find tool configured by ``options``."""

    def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ctx.signal.raise_if_aborted()
        pattern: str = args["pattern"]
        search_path = str(ctx.resolve(args.get("path") or "."))
        limit = args.get("limit")
        limit = DEFAULT_LIMIT if limit is None else limit
        if options.operations is not None:
            return _find_with_operations(options.operations, pattern, search_path, limit)
        from pi_core.toolkit.sandbox import check_path

        check_path(search_path, "read")  # a protected folder is refused, not listed as empty
        if not os.path.isdir(search_path):
            raise ToolError(f"Not a directory: {search_path}" if os.path.lexists(search_path)
                            else f"Path not found: {search_path}")
        paths = _local_find(pattern, search_path, limit, ctx)
        from pi_core.toolkit.procs import js_number

        notice = f"{js_number(limit)} results limit reached. Use limit={js_number(limit * 2)} for more, or refine pattern"
        return _result(paths, limit, notice)

    return execute


def _local_find(pattern: str, search_path: str, limit: float, ctx: ToolContext) -> list[str]:
    """fd's matching on top of ``rg --files``: basename match, or full-path match when the glob has a ``/``."""
    from pi_core.toolkit.globs import compile_glob

    full_path = "/" in pattern
    if full_path and not (pattern.startswith(("/", "**/")) or pattern == "**"):
        pattern = "**/" + pattern
    # fd's smart case: a pattern without capitals matches regardless of case.
    regex = compile_glob(pattern, ignore_case=pattern == pattern.lower())
    root = search_path.replace(os.sep, "/").rstrip("/")

    def matches(relative: str) -> bool:
        subject = f"{root}/{relative}" if full_path else relative.rsplit("/", 1)[-1]
        return regex.match(subject) is not None

    found: set[str] = set()
    seen_dirs: set[str] = set()
    for relative in _listed_files(search_path, ctx):
        if matches(relative):
            found.add(relative)
        # rg lists files only; fd also reports the (non-ignored) directories on the way to them.
        parent = relative.rpartition("/")[0]
        while parent and parent not in seen_dirs:
            seen_dirs.add(parent)
            if matches(parent):
                found.add(parent + "/")
            parent = parent.rpartition("/")[0]
    ordered = sorted(found)
    return ordered[: int(limit)] if limit > 0 else ordered


def _listed_files(search_path: str, ctx: ToolContext) -> Iterable[str]:
    """Every file ripgrep would search under ``search_path`` (hidden included, ignore files honoured)."""
    from pi_core.toolkit.ripgrep import RgProcess

    rg = RgProcess(["--files", "--hidden", "--no-require-git", "--color=never", "--glob", "!.git"], ctx.signal,
                   cwd=search_path)
    listed = 0
    try:
        for raw in rg.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if line:
                listed += 1
                yield line.replace("\\", "/") if sys.platform == "win32" else line
    finally:
        code = rg.close()
    ctx.signal.raise_if_aborted()
    # Like fd: a failure with some output still counts as output (e.g. one unreadable directory).
    if code not in (0, 1) and listed == 0:
        raise rg.failure(code)


def _find_with_operations(ops: FindOperations, pattern: str, search_path: str, limit: float) -> ToolResult:
    from pi_core.toolkit.procs import js_number

    if not ops.exists(search_path):
        raise ToolError(f"Path not found: {search_path}")
    found = ops.glob(pattern, search_path, ["**/node_modules/**", "**/.git/**"], limit)
    relative = [os.path.relpath(p, search_path).replace(os.sep, "/") if os.path.isabs(p) else p for p in found]
    return _result(relative, limit, f"{js_number(limit)} results limit reached")


def _result(paths: list[str], limit: float, limit_notice: str) -> ToolResult:
    from pi_builtin_tools._listing import Notice, listing_result

    if not paths:
        return ToolResult.text("No files found matching pattern")
    return listing_result(paths, Notice(limit_notice, "resultLimitReached", limit) if len(paths) >= limit else None)


def create_find_tool(options: FindOptions | None = None) -> Tool:
    """A find tool with its own operations; the plugin registers the default one."""
    return builtin_tool("find", DESCRIPTION, PARAMETERS, make_execute(options or FindOptions()),
                        active_by_default=DEFAULT_ACTIVE, prompt_snippet=SNIPPET)


TOOL = create_find_tool()
execute = TOOL.execute


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
