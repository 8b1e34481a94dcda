"""grep over the guest file system: ripgrep runs on the host only, so the VM's files are walked and matched here."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from pi_core.errors import ToolError
from pi_core.signals import AbortSignal
from pi_core.toolkit.fileops import node_error_message
from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    format_size,
    truncate_head,
    truncate_line,
)
from pi_core.tools import ToolResult

from .bridge import VmClient
from .ops import to_guest_path, tool_glob, walk_files

DEFAULT_GREP_LIMIT = 100
_NO_LINE_LIMIT = 2**53 - 1


def line_matcher(pattern: str, literal: bool, ignore_case: bool) -> Callable[[str], bool]:
    if literal:
        needle = pattern.lower() if ignore_case else pattern
        return lambda line: needle in (line.lower() if ignore_case else line)
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as err:
        raise ToolError(f"Invalid regular expression: /{pattern}/: {err}") from err
    return lambda line: regex.search(line) is not None


def _split_lines(content: str) -> list[str]:
    return content.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def vm_grep(vm: VmClient, host_cwd: str, args: dict[str, Any], signal: AbortSignal | None = None) -> ToolResult:
    """The grep tool's answer for ``args`` (pattern, path, glob, ignoreCase, literal, context, limit) in the VM."""
    root = to_guest_path(host_cwd, args.get("path") or ".")
    try:
        root_is_dir = vm.stat(root).is_dir()
    except OSError as err:
        raise ToolError(node_error_message(err, "stat", root)) from err
    matches = line_matcher(args["pattern"], bool(args.get("literal")), bool(args.get("ignoreCase")))
    wanted = tool_glob(args["glob"]) if args.get("glob") else None
    context = max(0, int(args.get("context") or 0))
    limit_arg = args.get("limit")
    limit = max(1, DEFAULT_GREP_LIMIT if limit_arg is None else int(limit_arg))
    out: list[str] = []
    count = 0
    limit_reached = lines_truncated = False
    for guest, relative in walk_files(vm, root, signal):
        if wanted is not None and not wanted(relative):
            continue
        try:
            lines = _split_lines(vm.read_file(guest).decode("utf-8", "replace"))
        except OSError:
            continue
        label = relative if root_is_dir else posixpath.basename(guest)
        for index, line in enumerate(lines):
            if not matches(line):
                continue
            count += 1
            for shown in range(max(0, index - context), min(len(lines) - 1, index + context) + 1):
                text, cut = truncate_line(lines[shown].replace("\r", ""))
                lines_truncated = lines_truncated or cut
                sep = ":" if shown == index else "-"
                out.append(f"{label}{sep}{shown + 1}{sep} {text}")
            if count >= limit:
                limit_reached = True
                break
        if limit_reached:
            break
    if count == 0:
        return ToolResult.text("No matches found")
    truncation = truncate_head("\n".join(out), max_lines=_NO_LINE_LIMIT)
    details: dict[str, Any] = {}
    notices: list[str] = []
    if limit_reached:
        details["matchLimitReached"] = limit
        notices.append(f"{limit} matches limit reached")
    if lines_truncated:
        details["linesTruncated"] = True
        notices.append("long lines truncated")
    if truncation.truncated:
        details["truncation"] = truncation.to_json()
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
    text = truncation.content + (f"\n\n[{'. '.join(notices)}]" if notices else "")
    return ToolResult.text(text, details or None)
