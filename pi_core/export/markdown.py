"""Markdown and source code to HTML that is safe to open: markdown-it-py with raw HTML off and a URL allow-list,
Pygments for code, mermaid blocks drawn as diagrams (their source kept under them).

Raw HTML in a message is shown as text (as the terminal shows it), and links or images whose scheme is not
http(s), mailto, tel or ftp lose their URL, so a hostile session cannot smuggle markup or script into the page.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from markdown_it import MarkdownIt
from pygments import highlight as pygments_highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SAFE_SCHEMES = frozenset({"http", "https", "mailto", "tel", "ftp"})
_DATA_IMAGE = re.compile(r"^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$", re.IGNORECASE)
# Larger blocks are shown plain: highlighting a 2 MB tool output would make exporting slow for nothing.
MAX_HIGHLIGHT_CHARS = 200_000


def safe_url(url: str) -> bool:
    """True when ``url`` may become an ``href`` or ``src``: relative, a fragment, or an allowed scheme."""
    # Browsers drop control characters inside a scheme ("java\tscript:"), so judge the URL without them.
    cleaned = _CONTROL.sub("", url).strip()
    scheme = _SCHEME.match(cleaned)
    if scheme is None:
        return True
    return scheme.group(1).lower() in _SAFE_SCHEMES or bool(_DATA_IMAGE.match(cleaned))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": True, "highlight": _highlight_fence})
    md.enable(["table", "strikethrough"])
    md.validateLink = safe_url  # type: ignore[method-assign]
    return md


def render_markdown(text: str) -> str:
    """``text`` as sanitised HTML (paragraphs, headings, lists, tables, highlighted code blocks)."""
    rendered: str = _markdown().render(text)
    return rendered


@lru_cache(maxsize=256)
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=256)
def _lexer_for_path(path: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


_FORMATTER = HtmlFormatter(nowrap=True)


def highlight_code(code: str, language: str | None = None, path: str | None = None) -> str:
    """Escaped ``code`` with Pygments token spans for ``language`` (or the language of ``path``).

    Unknown languages and oversized inputs come back escaped but unhighlighted. Guessing a language from
    the text is not attempted: it is slow and often wrong for short snippets.
    """
    lexer = _lexer_by_name(language.strip().lower()) if language and language.strip() else None
    if lexer is None and path:
        lexer = _lexer_for_path(path.rsplit("/", 1)[-1])
    if lexer is None or len(code) > MAX_HIGHLIGHT_CHARS:
        return html.escape(code, quote=False)
    rendered: str = pygments_highlight(code, lexer, _FORMATTER)
    # Pygments adds a final newline when the input lacks one; keep line counts exact.
    if not code.endswith("\n") and rendered.endswith("\n"):
        rendered = rendered[:-1]
    return rendered


def _highlight_fence(code: str, language: str, _attrs: str) -> str:
    name = language.split()[0] if language.strip() else None
    # Starting with "<pre" tells markdown-it to use this block as it is.
    block = f'<pre class="hl"><code>{highlight_code(code, name)}</code></pre>\n'
    if name is not None and name.lower() == "mermaid":
        diagram = _mermaid_html(code)
        if diagram is not None:
            return f'{diagram}<details class="mermaid-source"><summary>Mermaid source</summary>{block}</details>\n'
    return block


def _mermaid_html(code: str) -> str | None:
    """A mermaid block drawn as the terminal draws it (pi_core.tui.mermaid), each run coloured by its theme role;
    None when it draws nothing (the code block stays)."""
    from pi_core.tui.mermaid import draw

    art = draw(code.rstrip())
    if art is None:
        return None
    rows = ("".join(f'<span class="mm-{role}">{html.escape(text)}</span>' if role else html.escape(text)
                    for text, role in row) for row in art.rows)
    return f'<pre class="mermaid-diagram" data-kind="{art.kind}">' + "\n".join(rows) + "</pre>"



# Pygments short token classes grouped by the theme's syntax colour roles.
SYNTAX_CLASSES: dict[str, tuple[str, ...]] = {
    "syntaxComment": ("c", "ch", "cm", "cp", "cpf", "c1", "cs"),
    "syntaxKeyword": ("k", "kc", "kd", "kn", "kp", "kr", "ow", "nt"),
    "syntaxFunction": ("nf", "fm", "nb", "bp", "nd"),
    "syntaxVariable": ("nv", "vc", "vg", "vi", "vm", "na", "no"),
    "syntaxString": ("s", "sa", "sb", "sc", "dl", "sd", "s2", "se", "sh", "si", "sx", "sr", "s1", "ss"),
    "syntaxNumber": ("m", "mb", "mf", "mh", "mi", "mo", "il"),
    "syntaxType": ("kt", "nc", "nn", "ne"),
    "syntaxOperator": ("o",),
    "syntaxPunctuation": ("p",),
}


def syntax_css(scope: str = ".hl") -> str:
    """CSS giving each token class the colour of its theme role (``var(--syntaxKeyword)`` ...)."""
    rules = []
    for role, classes in SYNTAX_CLASSES.items():
        selectors = ",".join(f"{scope} .{cls}" for cls in classes)
        rules.append(f"{selectors}{{color:var(--{role})}}")
    rules.append(f"{scope} .gd{{color:var(--toolDiffRemoved)}}{scope} .gi{{color:var(--toolDiffAdded)}}")
    rules.append(f"{scope} .err{{color:var(--error)}}")
    return "\n".join(rules)
