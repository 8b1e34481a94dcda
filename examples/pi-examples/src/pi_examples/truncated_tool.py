"""truncated_tool: an ``rg`` tool that keeps its output within pi's limits and saves the rest to a temp file."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.render import Renderer
from pi_core.toolkit.mutation_queue import with_file_mutation_queue
from pi_core.toolkit.ripgrep import RgProcess
from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
)
from pi_core.types import TextContent

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex)"},
        "path": {"type": "string", "description": "Directory to search (default: current directory)"},
        "glob": {"type": "string", "description": "File glob pattern, e.g. '*.ts'"},
    },
    "required": ["pattern"],
}
NO_MATCHES = "No matches found"
EXPANDED_LINES = 20


def run_rg(args: dict[str, Any], ctx: ToolContext) -> str:
    argv = ["--line-number", "--color=never"]
    if args.get("glob"):
        argv += ["--glob", args["glob"]]
    argv += ["--", args["pattern"], args.get("path") or "."]
    rg = RgProcess(argv, ctx.signal, cwd=str(ctx.cwd))
    try:
        output = rg.stdout.read().decode("utf-8", "replace")
    finally:
        code = rg.close()
    if code > 1 and not ctx.signal.aborted:
        raise ToolError(f"ripgrep failed: {rg.failure(code)}")
    return output


def save_full_output(output: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="pi-rg-")) / "output.txt"
    with_file_mutation_queue(path, lambda: path.write_text(output, encoding="utf-8"))
    return path


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    details: dict[str, Any] = {"pattern": args["pattern"], "path": args.get("path"), "glob": args.get("glob"),
                               "matchCount": 0}
    output = run_rg(args, ctx)
    if not output.strip():
        return ToolResult(content=[TextContent(text=NO_MATCHES)], details=details)
    details["matchCount"] = sum(1 for line in output.split("\n") if line.strip())
    cut = truncate_head(output, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    text = cut.content
    if cut.truncated:
        full = save_full_output(output)
        details["truncation"], details["fullOutputPath"] = cut.to_json(), str(full)
        text += (f"\n\n[Output truncated: showing {cut.output_lines} of {cut.total_lines} lines"
                 f" ({format_size(cut.output_bytes)} of {format_size(cut.total_bytes)})."
                 f" {cut.total_lines - cut.output_lines} lines"
                 f" ({format_size(cut.total_bytes - cut.output_bytes)}) omitted. Full output saved to: {full}]")
    return ToolResult(content=[TextContent(text=text)], details=details)


TOOL = Tool(
    name="rg",
    label="ripgrep",
    description=f"Search file contents using ripgrep. Output is truncated to {DEFAULT_MAX_LINES} lines or "
                f"{format_size(DEFAULT_MAX_BYTES)} (whichever is hit first). If truncated, full output is saved "
                "to a temp file.",
    parameters=PARAMETERS,
    execute=execute,
)


def render_call(args: dict[str, Any]) -> Any:
    from rich.text import Text

    text = Text.assemble(("rg ", "bold"), (f'"{args.get("pattern", "")}"', "cyan"))
    if args.get("path"):
        text.append(f" in {args['path']}", style="dim")
    if args.get("glob"):
        text.append(f" --glob {args['glob']}", style="dim")
    return text


def render_result(result: Any, is_error: bool, expanded: bool) -> Any:
    """"N matches" (flagged when truncated); expanded, the first 20 lines and where the full output is."""
    from rich.text import Text

    details = getattr(result, "details", None) if not isinstance(result, dict) else result.get("details")
    content = getattr(result, "content", None) if not isinstance(result, dict) else result.get("content")
    first = (content or [None])[0]
    body = (first.get("text") if isinstance(first, dict) else getattr(first, "text", None)) or ""
    if is_error:
        return Text(body, style="red")
    if not isinstance(details, dict) or not details.get("matchCount"):
        return Text(NO_MATCHES, style="dim")
    text = Text(f"{details['matchCount']} matches", style="green")
    if details.get("truncation"):
        text.append(" (truncated)", style="yellow")
    if expanded:
        lines = body.split("\n")
        for line in lines[:EXPANDED_LINES]:
            text.append(f"\n{line}", style="dim")
        if len(lines) > EXPANDED_LINES:
            text.append("\n... (use read tool to see full output)", style="dim")
        if details.get("fullOutputPath"):
            text.append(f"\nFull output: {details['fullOutputPath']}", style="dim")
    return text


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


@hookimpl
def pi_renderers() -> list[Renderer]:
    return [Renderer("rg", render_call, render_result)]
