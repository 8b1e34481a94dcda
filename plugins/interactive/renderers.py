"""Built-in renderers: how read, bash, edit, write, grep, find and ls calls and results are drawn.

Contributed through ``pi_renderers`` with ``trylast`` so a plugin's renderer for the same tool name
wins. ``default_renderer`` draws any tool that has none. Renderers return rich renderables; rich is
imported inside the functions so this module stays cheap to import.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.render import Renderer

if TYPE_CHECKING:
    from pi_core.render import RenderOptions
    from pi_core.tui.tool_render import ToolRenderContext

COLLAPSED_LINES = 10  # result lines shown before Ctrl+O expands a tool's output
BASH_TAIL_LINES = 5  # lines of a running or finished command shown while collapsed


def result_text(result: Any) -> str:
    """The text blocks of a ToolResult (or a partial one, or a dict from JSON), joined by newlines."""
    if result is None:
        return ""
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    if isinstance(content, str):
        return content
    # the plugin module loads on every start; display (and pi_core.tui) only when the UI draws
    from pi_plugins.interactive import display

    parts: list[str] = []
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        if kind == "text":
            parts.append(block["text"] if isinstance(block, dict) else block.text)
        elif kind == "image" and not display.settings.images_inline:  # else drawn below the output
            data = block.get("data") if isinstance(block, dict) else getattr(block, "data", None)
            mime = block.get("mimeType") if isinstance(block, dict) else getattr(block, "mime_type", None)
            parts.append(display.fallback_line(data, str(mime or "image/unknown")) if isinstance(data, str)
                         else "[image]")
    return "\n".join(parts)


def result_details(result: Any) -> Any:
    if result is None:
        return None
    return result.get("details") if isinstance(result, dict) else getattr(result, "details", None)


_ROLE_OF = {"cyan": "accent", "yellow": "warning", "dim": "toolOutput", "red": "error", "green": "success",
            "magenta": "mdCode"}


def themed(spec: str) -> str:
    """A style spec with its colour words ("bold cyan", "dim italic") replaced by the theme's colours."""
    from pi_plugins.interactive import style as theme_style

    words = [theme_style.fg(_ROLE_OF[word]) if word in _ROLE_OF else word for word in spec.split()]
    if words == ["bold"]:
        words.append(theme_style.fg("toolTitle"))
    return " ".join(words)


def _title(name: str, *parts: tuple[str, str], path: str | None = None) -> Any:
    """A tool's title line; the part that is ``path`` links to the file when the terminal shows OSC 8 links."""
    from rich.text import Text

    title = Text(name, style=themed("bold"))
    for text, style in parts:
        title.append(" ")
        title.append(text, style=_linked(themed(style), path) if path is not None and text == path else themed(style))
    return title


def _linked(spec: str, path: str) -> Any:
    from pi_plugins.interactive import display
    from rich.style import Style

    from pi_core.tui import terminal

    if not terminal.capabilities().hyperlinks or path in ("", "…"):
        return spec
    return Style.parse(spec) + Style(link=terminal.file_url(path, display.settings.cwd))


def _lines(text: str, expanded: bool, *, tail: bool = False, limit: int = COLLAPSED_LINES,
           style: str = "dim") -> Any:
    """The output text, cut to ``limit`` lines (head, or tail for commands) unless expanded."""
    from rich.text import Text

    lines = text.rstrip("\n").split("\n") if text.strip() else []
    hidden = 0
    if not expanded and len(lines) > limit:
        hidden = len(lines) - limit
        lines = lines[-limit:] if tail else lines[:limit]
    out = Text()
    if hidden and tail:
        out.append(f"… {hidden} earlier lines (ctrl+o to expand)\n", style=themed("dim italic"))
    out.append("\n".join(lines), style=themed(style))
    if hidden and not tail:
        out.append(f"\n… {hidden} more lines (ctrl+o to expand)", style=themed("dim italic"))
    return out


def _error_or(result: Any, is_error: bool, expanded: bool, ok: Any) -> Any:
    if is_error:
        return _lines(result_text(result), expanded, style=themed("red"))
    return ok()


# --- read -----------------------------------------------------------------------------------------


def read_call(args: dict[str, Any]) -> Any:
    path = str(args.get("path") or args.get("file_path") or "…")
    offset, limit = args.get("offset"), args.get("limit")
    span = ""
    if offset is not None or limit is not None:
        start = int(offset) if isinstance(offset, int) else 1
        span = f":{start}-{start + int(limit) - 1}" if isinstance(limit, int) else f":{start}-"
    title = _title("read", (path, "cyan"), path=path)
    title.append(span, style=themed("yellow"))
    return title


def read_result(result: Any, is_error: bool, expanded: bool) -> Any:
    def ok() -> Any:
        text = result_text(result)
        if not expanded:
            from rich.text import Text

            count = len(text.rstrip("\n").split("\n")) if text.strip() else 0
            return Text(f"{count} lines (ctrl+o to show)", style=themed("dim"))
        return _lines(text, True)

    return _error_or(result, is_error, expanded, ok)


# --- bash -----------------------------------------------------------------------------------------


def bash_call(args: dict[str, Any]) -> Any:
    command = str(args.get("command") or "…")
    timeout = args.get("timeout")
    return _title("$", (command, "bold cyan"), (f"(timeout {timeout}s)" if timeout else "", "dim"))


def bash_result(result: Any, is_error: bool, expanded: bool) -> Any:
    """Also used for partial results: the live tail of a running command."""
    text = result_text(result)
    body = _lines(text, expanded, tail=True, limit=BASH_TAIL_LINES, style=themed("red") if is_error else "dim")
    details = result_details(result)
    full = details.get("fullOutputPath") if isinstance(details, dict) else None
    if full:
        from rich.console import Group
        from rich.text import Text

        return Group(body, Text(f"Full output: {full}", style=themed("yellow")))
    return body


def format_duration(ms: float) -> str:
    """Pi's tool durations: ``4.2s`` below a minute, then ``1m 30s`` and ``2h 3m 4s``."""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m {rest}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60}m {rest}s"


def timer_text(context: ToolRenderContext) -> str | None:
    """A command row's timing line, as Pi: ``Elapsed 4.2s`` while it runs, ``Took 4.2s`` once finished (the
    recorded duration; the row's own clock for a result without one). None before it started."""
    import time

    state = context.state
    if context.execution_started and "started_at" not in state:
        state["started_at"] = time.monotonic()
    if not context.is_partial and context.duration_ms is not None:
        return f"Took {format_duration(context.duration_ms)}"
    if "started_at" not in state:
        return None
    if context.is_partial:
        return f"Elapsed {format_duration((time.monotonic() - state['started_at']) * 1000)}"
    state.setdefault("ended_at", time.monotonic())
    return f"Took {format_duration((state['ended_at'] - state['started_at']) * 1000)}"


def bash_row_call(args: dict[str, Any], theme: Any, context: ToolRenderContext) -> Any:
    timer_text(context)  # the clock starts with the command
    return bash_call(args)


def bash_row_result(result: Any, options: RenderOptions, theme: Any, context: ToolRenderContext) -> Any:
    body = bash_result(result, options.is_error, options.expanded)
    timing = timer_text(context)
    if timing is None:
        return body
    from rich.console import Group
    from rich.text import Text

    return Group(body, Text("\n" + timing, style=themed("dim")))


# --- edit -----------------------------------------------------------------------------------------


def edit_call(args: dict[str, Any]) -> Any:
    edits = args.get("edits")
    count = len(edits) if isinstance(edits, list) else 1
    suffix = f"({count} edits)" if count > 1 else ""
    path = str(args.get("path") or "…")
    return _title("edit", (path, "cyan"), (suffix, "dim"), path=path)


def render_diff(diff: str, expanded: bool) -> Any:
    """Colour a display diff (``-12 old``, ``+12 new``, `` 12 context``) line by line."""
    from pi_plugins.interactive import style as theme_style
    from rich.text import Text

    lines = diff.split("\n")
    hidden = 0
    if not expanded and len(lines) > COLLAPSED_LINES * 3:
        hidden = len(lines) - COLLAPSED_LINES * 3
        lines = lines[: COLLAPSED_LINES * 3]
    out = Text()
    for index, line in enumerate(lines):
        role = "toolDiffAdded" if line.startswith("+") else "toolDiffRemoved" if line.startswith("-") else "toolDiffContext"
        out.append(line, style=theme_style.fg(role))
        if index < len(lines) - 1:
            out.append("\n")
    if hidden:
        out.append(f"\n… {hidden} more diff lines (ctrl+o to expand)", style=themed("dim italic"))
    return out


def edit_result(result: Any, is_error: bool, expanded: bool) -> Any:
    def ok() -> Any:
        details = result_details(result)
        diff = details.get("diff") if isinstance(details, dict) else None
        if isinstance(diff, str) and diff:
            return render_diff(diff, expanded)
        return _lines(result_text(result), expanded)

    return _error_or(result, is_error, expanded, ok)


# --- write ----------------------------------------------------------------------------------------


def write_call(args: dict[str, Any]) -> Any:
    """The path and a preview of the content (highlighted by the file's extension)."""
    from pi_plugins.interactive import style as theme_style
    from rich.console import Group
    from rich.syntax import Syntax

    path = str(args.get("path") or "…")
    content = args.get("content")
    title = _title("write", (path, "cyan"), path=path)
    if not isinstance(content, str) or not content:
        return title
    lines = content.split("\n")
    preview = "\n".join(lines[:COLLAPSED_LINES])
    lexer = Syntax.guess_lexer(path, code=preview) if "." in path else "text"
    parts: list[Any] = [title, Syntax(preview, lexer, theme=theme_style.syntax_theme(), background_color="default")]
    if len(lines) > COLLAPSED_LINES:
        from rich.text import Text

        parts.append(Text(f"… {len(lines) - COLLAPSED_LINES} more lines", style=themed("dim italic")))
    return Group(*parts)


def write_result(result: Any, is_error: bool, expanded: bool) -> Any:
    if is_error:
        return _lines(result_text(result), expanded, style=themed("red"))
    return None  # the call already shows what was written


# --- grep / find / ls -----------------------------------------------------------------------------


def grep_call(args: dict[str, Any]) -> Any:
    where = str(args.get("path") or ".")
    glob = f"--glob {args['glob']}" if args.get("glob") else ""
    return _title("grep", (f"/{args.get('pattern', '')}/", "magenta"), (where, "cyan"), (glob, "dim"), path=where)


def find_call(args: dict[str, Any]) -> Any:
    where = str(args.get("path") or ".")
    return _title("find", (str(args.get("pattern") or "…"), "magenta"), (where, "cyan"), path=where)


def ls_call(args: dict[str, Any]) -> Any:
    where = str(args.get("path") or ".")
    return _title("ls", (where, "cyan"), path=where)


def listing_result(result: Any, is_error: bool, expanded: bool) -> Any:
    return _lines(result_text(result), expanded, style=themed("red") if is_error else "dim")


# --- fallback -------------------------------------------------------------------------------------


def default_call(name: str) -> Any:
    def call(args: dict[str, Any]) -> Any:
        from rich.text import Text

        shown = json.dumps(args, ensure_ascii=False) if args else ""
        if len(shown) > 200:
            shown = shown[:200] + "…"
        title = Text(name, style=themed("bold"))
        if shown:
            title.append(" ")
            title.append(shown, style=themed("dim"))
        return title

    return call


def default_renderer(name: str) -> Renderer:
    """What a tool without its own renderer looks like: name, JSON arguments, the result text."""
    return Renderer(name, default_call(name), listing_result)


BUILTIN_RENDERERS: list[Renderer] = [
    Renderer("read", read_call, read_result),
    Renderer("bash", bash_row_call, bash_row_result, with_context=True),
    Renderer("edit", edit_call, edit_result),
    Renderer("write", write_call, write_result),
    Renderer("grep", grep_call, listing_result),
    Renderer("find", find_call, listing_result),
    Renderer("ls", ls_call, listing_result),
]


@hookimpl(trylast=True)
def pi_renderers() -> list[Renderer]:
    return list(BUILTIN_RENDERERS)


def resolve_renderers(plugin_renderers: dict[str, Renderer]) -> dict[str, Renderer]:
    """Built-ins first, then every plugin's renderer replacing ours by tool name."""
    table = {r.tool_name: r for r in BUILTIN_RENDERERS}
    table.update(plugin_renderers)
    return table
