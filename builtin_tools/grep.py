"""grep: search file contents with ripgrep and return matching lines with paths and line numbers."""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.builtin import argument, builtin_tool, parameters

# The helpers (ripgrep, truncation, the listing format) are imported where they are used: pi loads every
# tool plugin on start, and most runs never search.

DEFAULT_ACTIVE = False
DEFAULT_LIMIT = 100

PARAMETERS = parameters(
    ["pattern"],
    pattern=argument("string", "Regular expression (or plain text) to look for"),
    path=argument("string", "Directory or single file to search; the working directory if omitted"),
    glob=argument("string", "Only search files matching this glob, such as '*.py' or '**/test_*.py'"),
    ignoreCase=argument("boolean", "Match regardless of letter case (false unless set)"),
    literal=argument("boolean", "Match the pattern as plain text rather than a regex (false unless set)"),
    context=argument("number", "Lines of context to include before and after each match (0 unless set)"),
    limit=argument("number", "Stop after this many matches (100 unless set)"),
)

DESCRIPTION = (
    "Search the contents of files for a pattern. Each result is a matching line with its file path and line "
    "number. Files excluded by .gitignore are skipped. Results stop at 100 matches or 50KB of output, "
    "whichever comes first, and lines longer than 500 chars are shortened."
)
SNIPPET = "Search file contents for a pattern (skips what .gitignore excludes)"


class GrepOperations(Protocol):
    """File access grep needs for its output; ripgrep itself always runs locally."""

    def is_directory(self, path: str) -> bool:
        """Whether ``path`` is a directory; raises if it does not exist."""

    def read_file(self, path: str) -> str:
        """The file's text (used to show context lines)."""


class LocalGrepOperations:
    def is_directory(self, path: str) -> bool:
        from pi_core.toolkit.sandbox import check_path

        check_path(path, "read")
        mode = os.stat(path).st_mode
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            from pi_core.toolkit.fileops import special_file_error

            raise special_file_error(path)  # rg would wait on a FIFO (or read /dev/zero) until killed
        return stat.S_ISDIR(mode)

    def read_file(self, path: str) -> str:
        from pi_core.toolkit.sandbox import check_path

        check_path(path, "read")
        return Path(path).read_text(encoding="utf-8", errors="replace")


@dataclass(eq=False, repr=False)
class GrepOptions:
    """How grep runs: ``operations`` replaces the local search (a remote machine, a sandbox)."""

    operations: GrepOperations | None = None


@dataclass(eq=False, repr=False)
class _Match:
    """One matching line."""

    path: str
    line_number: int
    text: str


def make_execute(options: GrepOptions) -> Callable[[dict[str, Any], ToolContext], ToolResult]:
    """The ``execute`` function for a grep tool using ``options.operations``."""
    ops: GrepOperations = options.operations or LocalGrepOperations()

    def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        ctx.signal.raise_if_aborted()
        search_path = str(ctx.resolve(args.get("path") or "."))
        try:
            is_dir = ops.is_directory(search_path)
        except OSError as err:
            raise ToolError(f"Path not found: {search_path}") from err
        limit_arg = args.get("limit")
        limit = max(1, DEFAULT_LIMIT if limit_arg is None else limit_arg)
        context = int(args.get("context") or 0)
        matches, limit_reached = _run_rg(_rg_argv(args, search_path), limit, ctx)
        if not matches:
            return ToolResult.text("No matches found")
        return _format(matches, limit, limit_reached, max(0, context), search_path, is_dir, ops)

    return execute


def _rg_argv(args: dict[str, Any], search_path: str) -> list[str]:
    argv = ["--json", "--line-number", "--color=never", "--hidden"]
    if args.get("ignoreCase"):
        argv.append("--ignore-case")
    if args.get("literal"):
        argv.append("--fixed-strings")
    if args.get("glob"):
        argv += ["--glob", args["glob"]]
    return [*argv, "--", args["pattern"], search_path]


def _run_rg(argv: list[str], limit: float, ctx: ToolContext) -> tuple[list[_Match], bool]:
    """Collect ``match`` events until rg ends or ``limit`` is reached (then rg is killed)."""
    from pi_core.toolkit.ripgrep import RgProcess

    rg = RgProcess(argv, ctx.signal)
    matches: list[_Match] = []
    limit_reached = False
    try:
        for raw in rg.stdout:
            if not raw.startswith(b'{"type":"match"'):
                continue
            data = json.loads(raw)["data"]
            matches.append(_Match(_text_of(data["path"]), data["line_number"], _text_of(data["lines"])))
            if len(matches) >= limit:
                limit_reached = True
                rg.kill()
                break
    finally:
        code = rg.close()
    ctx.signal.raise_if_aborted()
    if not limit_reached and code not in (0, 1):
        raise rg.failure(code)
    return matches, limit_reached


def _text_of(field: dict[str, str]) -> str:
    """rg's JSON gives ``{"text": ...}`` for UTF-8 data and ``{"bytes": base64}`` otherwise."""
    if "text" in field:
        return field["text"]
    return base64.b64decode(field["bytes"]).decode("utf-8", "replace")


def _format(matches: list[_Match], limit: float, limit_reached: bool, context: int, search_path: str,
            is_dir: bool, ops: GrepOperations) -> ToolResult:
    from pi_builtin_tools._listing import Notice, listing_result

    from pi_core.toolkit.procs import js_number
    from pi_core.toolkit.truncate import GREP_MAX_LINE_LENGTH, truncate_line

    files: dict[str, list[str] | None] = {}
    lines_truncated = False
    out: list[str] = []

    def shown(text: str) -> str:
        nonlocal lines_truncated
        text, cut = truncate_line(text.replace("\r", ""), GREP_MAX_LINE_LENGTH)
        lines_truncated = lines_truncated or cut
        return text

    for match in matches:
        label = _display_path(match.path, search_path, is_dir)
        if context == 0:
            text = match.text.replace("\r\n", "\n").replace("\r", "")
            out.append(f"{label}:{match.line_number}: {shown(text.removesuffix(chr(10)))}")
            continue
        if match.path not in files:
            files[match.path] = _file_lines(match.path, ops)
        lines = files[match.path]
        if not lines:
            out.append(f"{label}:{match.line_number}: (unable to read file)")
            continue
        first = max(1, match.line_number - context)
        last = min(len(lines), match.line_number + context)
        for number in range(first, last + 1):
            sep = ":" if number == match.line_number else "-"
            out.append(f"{label}{sep}{number}{sep} {shown(lines[number - 1])}")

    limit_notice = Notice(f"{js_number(limit)} matches limit reached. Use limit={js_number(limit * 2)} for more, "
                          "or refine pattern", "matchLimitReached", limit)
    lines_notice = Notice(f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",
                          "linesTruncated", True)
    return listing_result(out, limit_notice if limit_reached else None, lines_notice if lines_truncated else None)


def _display_path(path: str, search_path: str, is_dir: bool) -> str:
    if is_dir:
        relative = os.path.relpath(path, search_path).replace(os.sep, "/")
        if not relative.startswith(".."):
            return relative
    return os.path.basename(path)


def _file_lines(path: str, ops: GrepOperations) -> list[str] | None:
    try:
        content = ops.read_file(path)
    except OSError:
        return None
    if not content:
        return None
    return content.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def create_grep_tool(options: GrepOptions | None = None) -> Tool:
    """A grep tool with its own file operations; the plugin registers the default one."""
    return builtin_tool("grep", DESCRIPTION, PARAMETERS, make_execute(options or GrepOptions()),
                        active_by_default=DEFAULT_ACTIVE, prompt_snippet=SNIPPET)


TOOL = create_grep_tool()
execute = TOOL.execute


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
