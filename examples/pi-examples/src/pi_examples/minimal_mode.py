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


class MinimalMode:
    """A class plugin: the theme the rows are drawn with is this session's UI's (one instance per session)."""

    def __init__(self) -> None:
        self.theme: Any = PlainTheme()

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext, reason: str) -> None:
        self.theme = ctx.ui.theme

    def bold_title(self, name: str) -> str:
        return self.theme.fg("toolTitle", self.theme.bold(name))

    def path_or_dots(self, args: dict[str, Any], default: str = "") -> str:
        path = shorten(str(args.get("path") or default))
        return self.theme.fg("accent", path) if path else self.theme.fg("toolOutput", "...")

    def limit(self, args: dict[str, Any], shown: str = " (limit {})") -> str:
        return self.theme.fg("toolOutput", shown.format(args["limit"])) if args.get("limit") is not None else ""

    def output_lines(self, text: str) -> str:
        return "\n" + "\n".join(self.theme.fg("toolOutput", line) for line in text.split("\n"))

    def read_call(self, args: dict[str, Any]) -> str:
        shown = self.path_or_dots(args)
        offset, limit = args.get("offset"), args.get("limit")
        if offset is not None or limit is not None:
            start = offset or 1
            end = f"-{start + limit - 1}" if limit is not None else ""
            shown += self.theme.fg("warning", f":{start}{end}")
        return f"{self.bold_title('read')} {shown}"

    def expanded_output(self, result: Any, is_error: bool, expanded: bool) -> str:
        """read: the whole text when expanded, nothing otherwise."""
        text = result_text(result)
        return self.output_lines(text) if expanded and text is not None else ""

    def trimmed_output(self, result: Any, is_error: bool, expanded: bool) -> str:
        text = (result_text(result) or "").strip()
        return self.output_lines(text) if expanded and text else ""

    def bash_call(self, args: dict[str, Any]) -> str:
        timeout = args.get("timeout")
        suffix = self.theme.fg("muted", f" (timeout {timeout}s)") if timeout else ""
        return self.bold_title(f"$ {args.get('command') or '...'}") + suffix

    def write_call(self, args: dict[str, Any]) -> str:
        content = str(args.get("content") or "")
        lines = len(content.split("\n")) if content else 0
        counted = self.theme.fg("muted", f" ({lines} lines)") if lines else ""
        return f"{self.bold_title('write')} {self.path_or_dots(args)}{counted}"

    def write_result(self, result: Any, is_error: bool, expanded: bool) -> str:
        text = result_text(result)
        return "\n" + self.theme.fg("error", text) if expanded and text else ""

    def edit_call(self, args: dict[str, Any]) -> str:
        return f"{self.bold_title('edit')} {self.path_or_dots(args)}"

    def edit_result(self, result: Any, is_error: bool, expanded: bool) -> str:
        text = result_text(result)
        if not expanded or text is None:
            return ""
        return "\n" + self.theme.fg("error" if "error" in text.lower() else "toolOutput", text)

    def counted(self, noun: str) -> Any:
        """find/grep/ls: a count while collapsed, the listing when expanded."""

        def draw(result: Any, is_error: bool, expanded: bool) -> str:
            text = (result_text(result) or "").strip()
            if expanded:
                return self.output_lines(text) if text else ""
            count = len([line for line in text.split("\n") if line])
            return self.theme.fg("muted", f" → {count} {noun}") if count else ""

        return draw

    def find_call(self, args: dict[str, Any]) -> str:
        th = self.theme
        text = f"{self.bold_title('find')} {th.fg('accent', str(args.get('pattern') or ''))}"
        text += th.fg("toolOutput", f" in {shorten(str(args.get('path') or '.'))}")
        return text + self.limit(args)

    def grep_call(self, args: dict[str, Any]) -> str:
        th = self.theme
        text = f"{self.bold_title('grep')} {th.fg('accent', '/' + str(args.get('pattern') or '') + '/')}"
        text += th.fg("toolOutput", f" in {shorten(str(args.get('path') or '.'))}")
        if args.get("glob"):
            text += th.fg("toolOutput", f" ({args['glob']})")
        return text + self.limit(args, " limit {}")

    def ls_call(self, args: dict[str, Any]) -> str:
        return f"{self.bold_title('ls')} {self.path_or_dots(args, '.')}" + self.limit(args)

    @hookimpl
    def pi_renderers(self) -> list[Renderer]:
        return [Renderer("read", self.read_call, self.expanded_output),
                Renderer("bash", self.bash_call, self.trimmed_output),
                Renderer("write", self.write_call, self.write_result),
                Renderer("edit", self.edit_call, self.edit_result),
                Renderer("find", self.find_call, self.counted("files")),
                Renderer("grep", self.grep_call, self.counted("matches")),
                Renderer("ls", self.ls_call, self.counted("entries"))]
