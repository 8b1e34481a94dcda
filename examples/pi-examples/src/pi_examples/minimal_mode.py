"""minimal_mode: pi's seven built-in tools drawn as their call line only; the output shows when expanded (Ctrl+O).

Collapsed, find, grep and ls add a count (" → 3 files", " → 2 matches", " → 4 entries"). Only renderers are
contributed: the tools stay pi's.
"""

from __future__ import annotations

import os
from typing import Any

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.render import Renderer
from pi_core.ui import PlainTheme

theme: Any = PlainTheme()


@hookimpl
def pi_session_start(ctx: ExtensionContext, reason: str) -> None:
    global theme
    theme = ctx.ui.theme


def shorten(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home != "/" and path.startswith(home) else path


def result_text(result: Any) -> str | None:
    content = result.get("content") if isinstance(result, dict) else getattr(result, "content", None)
    for block in content or []:
        kind = block.get("type") if isinstance(block, dict) else getattr(block, "type", None)
        if kind == "text":
            return str(block.get("text") if isinstance(block, dict) else block.text)
    return None


def bold_title(name: str) -> str:
    return theme.fg("toolTitle", theme.bold(name))


def path_or_dots(args: dict[str, Any], default: str = "") -> str:
    path = shorten(str(args.get("path") or default))
    return theme.fg("accent", path) if path else theme.fg("toolOutput", "...")


def output_lines(text: str) -> str:
    return "\n" + "\n".join(theme.fg("toolOutput", line) for line in text.split("\n"))


def read_call(args: dict[str, Any]) -> str:
    shown = path_or_dots(args)
    offset, limit = args.get("offset"), args.get("limit")
    if offset is not None or limit is not None:
        start = offset or 1
        end = f"-{start + limit - 1}" if limit is not None else ""
        shown += theme.fg("warning", f":{start}{end}")
    return f"{bold_title('read')} {shown}"


def expanded_output(result: Any, is_error: bool, expanded: bool) -> str:
    """read: the whole text when expanded, nothing otherwise."""
    text = result_text(result)
    return output_lines(text) if expanded and text is not None else ""


def trimmed_output(result: Any, is_error: bool, expanded: bool) -> str:
    text = (result_text(result) or "").strip()
    return output_lines(text) if expanded and text else ""


def bash_call(args: dict[str, Any]) -> str:
    timeout = args.get("timeout")
    suffix = theme.fg("muted", f" (timeout {timeout}s)") if timeout else ""
    return bold_title(f"$ {args.get('command') or '...'}") + suffix


def write_call(args: dict[str, Any]) -> str:
    content = str(args.get("content") or "")
    lines = len(content.split("\n")) if content else 0
    return f"{bold_title('write')} {path_or_dots(args)}" + (theme.fg("muted", f" ({lines} lines)") if lines else "")


def write_result(result: Any, is_error: bool, expanded: bool) -> str:
    text = result_text(result)
    return "\n" + theme.fg("error", text) if expanded and text else ""


def edit_call(args: dict[str, Any]) -> str:
    return f"{bold_title('edit')} {path_or_dots(args)}"


def edit_result(result: Any, is_error: bool, expanded: bool) -> str:
    text = result_text(result)
    if not expanded or text is None:
        return ""
    return "\n" + theme.fg("error" if "error" in text.lower() else "toolOutput", text)


def counted(noun: str) -> Any:
    """find/grep/ls: a count while collapsed, the listing when expanded."""
    def draw(result: Any, is_error: bool, expanded: bool) -> str:
        text = (result_text(result) or "").strip()
        if expanded:
            return output_lines(text) if text else ""
        count = len([line for line in text.split("\n") if line])
        return theme.fg("muted", f" → {count} {noun}") if count else ""

    return draw


def find_call(args: dict[str, Any]) -> str:
    text = f"{bold_title('find')} {theme.fg('accent', str(args.get('pattern') or ''))}"
    text += theme.fg("toolOutput", f" in {shorten(str(args.get('path') or '.'))}")
    return text + (theme.fg("toolOutput", f" (limit {args['limit']})") if args.get("limit") is not None else "")


def grep_call(args: dict[str, Any]) -> str:
    text = f"{bold_title('grep')} {theme.fg('accent', '/' + str(args.get('pattern') or '') + '/')}"
    text += theme.fg("toolOutput", f" in {shorten(str(args.get('path') or '.'))}")
    if args.get("glob"):
        text += theme.fg("toolOutput", f" ({args['glob']})")
    return text + (theme.fg("toolOutput", f" limit {args['limit']}") if args.get("limit") is not None else "")


def ls_call(args: dict[str, Any]) -> str:
    text = f"{bold_title('ls')} {path_or_dots(args, '.')}"
    return text + (theme.fg("toolOutput", f" (limit {args['limit']})") if args.get("limit") is not None else "")


@hookimpl
def pi_renderers() -> list[Renderer]:
    return [Renderer("read", read_call, expanded_output), Renderer("bash", bash_call, trimmed_output),
            Renderer("write", write_call, write_result), Renderer("edit", edit_call, edit_result),
            Renderer("find", find_call, counted("files")), Renderer("grep", grep_call, counted("matches")),
            Renderer("ls", ls_call, counted("entries"))]
