"""built_in_tool_renderer: compact drawings of read, bash, edit and write; the tools themselves are pi's.

read shows "N lines" (the first 15 when expanded with Ctrl+O), bash "done (N lines)" or "exit N", edit
"+A / -R" (the diff when expanded), write "Written"; while a tool still streams, "Reading...", "Running...",
"Editing..." or "Writing...". pi keeps tools and renderers apart, so only renderers are contributed here: they
win over the built-in ones by tool name. They are drawn as Pi's renderCall / renderResult (``with_context``):
the UI's theme and the partial flag come with every call.
"""

from __future__ import annotations

import re
from typing import Any

from pi_core import hookimpl
from pi_core.render import Renderer, RenderOptions
from pi_core.tui import ToolRenderContext

EXIT = re.compile(r"exit(?:ed with)? code:? (\d+)")


def _content(result: Any) -> list[Any]:
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    return list(content or [])


def _details(result: Any) -> dict[str, Any]:
    details = result.get("details") if isinstance(result, dict) else getattr(result, "details", None)
    return details if isinstance(details, dict) else {}


def _first(result: Any) -> tuple[str, str]:
    """The first content block's type and text."""
    blocks = _content(result)
    if not blocks:
        return "", ""
    block = blocks[0]
    kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", "")
    text = block.get("text") if isinstance(block, dict) else getattr(block, "text", "")
    return str(kind or ""), str(text or "")


def title(theme: Any, name: str, path: str) -> str:
    return theme.fg("toolTitle", theme.bold(name)) + theme.fg("accent", path)


def read_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> str:
    text = title(theme, "read ", str(args.get("path", "")))
    parts = [f"{key}={args[key]}" for key in ("offset", "limit") if args.get(key)]
    return text + (theme.fg("dim", f" ({', '.join(parts)})") if parts else "")


def read_result(result: Any, options: RenderOptions, theme: Any, context: ToolRenderContext) -> str:
    if options.is_partial:
        return theme.fg("warning", "Reading...")
    kind, text = _first(result)
    if kind == "image":
        return theme.fg("success", "Image loaded")
    if kind != "text":
        return theme.fg("error", "No content")
    lines = text.split("\n")
    shown = theme.fg("success", f"{len(lines)} lines")
    truncation = _details(result).get("truncation") or {}
    if truncation.get("truncated"):
        shown += theme.fg("warning", f" (truncated from {truncation.get('totalLines')})")
    if options.expanded:
        shown += "".join("\n" + theme.fg("dim", line) for line in lines[:15])
        if len(lines) > 15:
            shown += "\n" + theme.fg("muted", f"... {len(lines) - 15} more lines")
    return shown


def bash_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> str:
    command = str(args.get("command", ""))
    text = theme.fg("toolTitle", theme.bold("$ ")) + theme.fg("accent", command[:77] + "..." if len(command) > 80
                                                              else command)
    return text + (theme.fg("dim", f" (timeout: {args['timeout']}s)") if args.get("timeout") else "")


def bash_result(result: Any, options: RenderOptions, theme: Any, context: ToolRenderContext) -> str:
    if options.is_partial:
        return theme.fg("warning", "Running...")
    _, output = _first(result)
    found = EXIT.search(output)
    code = int(found.group(1)) if found else (1 if options.is_error else None)
    count = len([line for line in output.split("\n") if line.strip()])
    shown = theme.fg("success", "done") if code in (0, None) else theme.fg("error", f"exit {code}")
    shown += theme.fg("dim", f" ({count} lines)")
    if (_details(result).get("truncation") or {}).get("truncated"):
        shown += theme.fg("warning", " [truncated]")
    if options.expanded:
        lines = output.split("\n")
        shown += "".join("\n" + theme.fg("dim", line) for line in lines[:20])
        if len(lines) > 20:
            shown += "\n" + theme.fg("muted", "... more output")
    return shown


def edit_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> str:
    return title(theme, "edit ", str(args.get("path", "")))


def edit_result(result: Any, options: RenderOptions, theme: Any, context: ToolRenderContext) -> str:
    if options.is_partial:
        return theme.fg("warning", "Editing...")
    _, text = _first(result)
    if options.is_error or text.startswith("Error"):
        return theme.fg("error", text.split("\n")[0])
    diff = _details(result).get("diff")
    if not diff:
        return theme.fg("success", "Applied")
    lines = str(diff).split("\n")
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    shown = theme.fg("success", f"+{added}") + theme.fg("dim", " / ") + theme.fg("error", f"-{removed}")
    if options.expanded:
        for line in lines[:30]:
            role = "success" if line.startswith("+") and not line.startswith("+++") else (
                "error" if line.startswith("-") and not line.startswith("---") else "dim")
            shown += "\n" + theme.fg(role, line)
        if len(lines) > 30:
            shown += "\n" + theme.fg("muted", f"... {len(lines) - 30} more diff lines")
    return shown


def write_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> str:
    lines = str(args.get("content", "")).split("\n")
    return title(theme, "write ", str(args.get("path", ""))) + theme.fg("dim", f" ({len(lines)} lines)")


def write_result(result: Any, options: RenderOptions, theme: Any, context: ToolRenderContext) -> str:
    if options.is_partial:
        return theme.fg("warning", "Writing...")
    _, text = _first(result)
    if options.is_error or text.startswith("Error"):
        return theme.fg("error", text.split("\n")[0])
    return theme.fg("success", "Written")


@hookimpl
def pi_renderers() -> list[Renderer]:
    return [Renderer(name, call, result, render_shell="self", with_context=True) for name, call, result in (
        ("read", read_call, read_result), ("bash", bash_call, bash_result), ("edit", edit_call, edit_result),
        ("write", write_call, write_result))]
