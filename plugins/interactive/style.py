"""The theme in force in the terminal UI, as rich and prompt_toolkit styles, and its live reload.

Renderers (built-in and plugins') colour through ``fg(role)`` / ``bg(role)`` with Pi's theme roles
(``accent``, ``toolTitle``, ``mdHeading`` ...), so a theme change recolours everything drawn after it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pi_core.resources.themes import Theme, builtin_themes, load_theme_file

_current: Theme | None = None
_listeners: list[Callable[[Theme], None]] = []
code_block_indent = "  "  # markdown.codeBlockIndent
_syntax_cache: tuple[Theme, Any] | None = None


def current() -> Theme:
    global _current
    if _current is None:
        _current = builtin_themes()["dark"]
    return _current


def set_theme(theme: Theme) -> None:
    global _current
    _current = theme
    for listener in _listeners.copy():
        listener(theme)


def on_change(listener: Callable[[Theme], None]) -> None:
    _listeners.append(listener)


def fg(role: str) -> str:
    """A rich style colouring text with ``role`` (the terminal's default colour for ``""``)."""
    return current().color(role) or "default"


def bg(role: str) -> str:
    value = current().color(role)
    return f"on {value}" if value else ""


def pt(role: str, *, background: bool = False) -> str:
    """The same for prompt_toolkit fragments."""
    value = current().color(role)
    if not value:
        return ""
    return f"bg:{value}" if background else f"fg:{value}"


def rich_theme() -> Any:
    """rich styles for Markdown from the theme's ``md*`` roles."""
    from rich.theme import Theme as RichTheme

    heading = f"bold {fg('mdHeading')}"
    return RichTheme({
        "markdown.h1": f"{heading} underline", "markdown.h2": heading, "markdown.h3": heading,
        "markdown.h4": heading, "markdown.h5": heading, "markdown.h6": heading,
        "markdown.h1.border": fg("mdHeading"), "markdown.link": fg("mdLink"), "markdown.link_url": fg("mdLinkUrl"),
        "markdown.code": fg("mdCode"), "markdown.code_block": fg("mdCodeBlock"),
        "markdown.block_quote": fg("mdQuote"), "markdown.hr": fg("mdHr"), "markdown.item.bullet": fg("mdListBullet"),
        "markdown.item.number": fg("mdListBullet"),
    })


def syntax_theme() -> Any:
    """A rich syntax theme whose token colours are the theme's ``syntax*`` roles."""
    from pygments.style import Style  # type: ignore[import-untyped]
    from pygments.token import (  # type: ignore[import-untyped]
        Comment,
        Keyword,
        Name,
        Number,
        Operator,
        Punctuation,
        String,
        Text,
        Token,
    )
    from rich.syntax import PygmentsSyntaxTheme

    def colour(role: str) -> str:
        return current().color(role)

    token_styles = {
        Token: colour("mdCodeBlock"), Text: colour("mdCodeBlock"), Comment: f"italic {colour('syntaxComment')}",
        Keyword: colour("syntaxKeyword"), Keyword.Type: colour("syntaxType"), Name.Function: colour("syntaxFunction"),
        Name.Class: colour("syntaxType"), Name.Builtin: colour("syntaxFunction"), Name.Variable: colour("syntaxVariable"),
        Name.Attribute: colour("syntaxVariable"), String: colour("syntaxString"), Number: colour("syntaxNumber"),
        Operator: colour("syntaxOperator"), Punctuation: colour("syntaxPunctuation"),
    }

    global _syntax_cache
    if _syntax_cache is None or _syntax_cache[0] is not current():
        chosen = {token: value for token, value in token_styles.items() if value.strip()}

        class ThemeStyle(Style):  # type: ignore[misc]
            background_color = None
            styles: ClassVar[dict[Any, str]] = chosen

        _syntax_cache = (current(), PygmentsSyntaxTheme(ThemeStyle))
    return _syntax_cache[1]


def markdown(text: str, *, reply: bool = False, streaming: bool = False) -> Any:
    """Markdown drawn as Pi draws it, in the theme's colours: headings left-aligned (``###`` kept from level 3
    on), code blocks between their fences (the opening one with its language) and indented by
    ``markdown.codeBlockIndent``. In a model's ``reply`` mermaid blocks are drawn as diagrams (diagrams.py;
    ``streaming``: the reply is still arriving)."""
    from rich.markdown import CodeBlock, Heading, Markdown
    from rich.padding import Padding
    from rich.syntax import Syntax
    from rich.text import Text

    class IndentedCodeBlock(CodeBlock):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            code = str(self.text).rstrip()
            if reply and self.lexer_name.lower() == "mermaid":
                from pi_plugins.interactive.diagrams import diagram

                art = diagram(code, options.max_width, fg, streaming=streaming)
                if art is not None:
                    yield art
                    return
            syntax = Syntax(code, self.lexer_name, theme=syntax_theme(), word_wrap=True, padding=0,
                            background_color="default")
            border = fg("mdCodeBlockBorder")
            language = "" if self.lexer_name == "text" else self.lexer_name  # rich's name for "no language"
            yield Text(f"```{language}", style=border)
            yield Padding(syntax, (0, 0, 0, len(code_block_indent)))
            yield Text("```", style=border)

    class LeftHeading(Heading):
        def __rich_console__(self, console: Any, options: Any) -> Any:
            level = int(self.tag[1:])
            heading = Text(f"{'#' * level} ", style=console.get_style(self.style_name)) if level >= 3 else Text()
            heading.append_text(self.text)
            heading.justify = "left"
            yield heading

    class ThemedMarkdown(Markdown):
        elements: ClassVar[dict[str, Any]] = {**Markdown.elements, "fence": IndentedCodeBlock,
                                               "code_block": IndentedCodeBlock, "heading_open": LeftHeading}

    return ThemedMarkdown(text, code_theme=syntax_theme())


class ThemeWatcher:
    """Reloads the active theme when its file changes (polled: cheap, and works on every filesystem)."""

    def __init__(self, on_reload: Callable[[Theme], None], on_error: Callable[[str], None]) -> None:
        self.on_reload, self.on_error = on_reload, on_error
        self._stamp: tuple[Path, float, int] | None = None

    def _stat(self, path: Path) -> tuple[Path, float, int] | None:
        try:
            info = path.stat()
        except OSError:
            return None
        return path, info.st_mtime, info.st_size

    def watch(self, theme: Theme) -> None:
        self._stamp = self._stat(theme.path) if theme.path is not None else None

    def poll(self) -> None:
        if self._stamp is None:
            return
        path = self._stamp[0]
        stamp = self._stat(path)
        if stamp is None or stamp == self._stamp:
            return
        self._stamp = stamp
        from pi_core.resources.themes import ThemeError

        try:
            theme = load_theme_file(path)
        except ThemeError as err:
            self.on_error(f"Theme not reloaded: {err}")
            return
        self.on_reload(theme)
