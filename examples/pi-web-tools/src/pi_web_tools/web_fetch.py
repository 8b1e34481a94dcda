"""web_fetch: download a web page over http(s) and hand the model its text, truncated like pi's own tools."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any, ClassVar
from urllib.parse import urlsplit

from pi_core import Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
)

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024  # stop reading after this much; the model only sees 50KB anyway
_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml+xml", "application/javascript",
               "application/ld+json", "application/rss+xml", "application/atom+xml")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "The http:// or https:// address to fetch"},
        "timeout": {"type": "number", "description": f"Seconds to wait for the server (default {DEFAULT_TIMEOUT:g}, "
                                                    f"at most {MAX_TIMEOUT:g})"},
        "raw": {"type": "boolean", "description": "Return HTML as-is instead of converting it to plain text"},
    },
    "required": ["url"],
}

DESCRIPTION = (
    "Fetch a web page or text document over http(s) and return its text. HTML is turned into plain text "
    f"unless raw is true. Output stops at {DEFAULT_MAX_LINES} lines or {format_size(DEFAULT_MAX_BYTES)}; "
    "binary content (images, archives, PDFs) is refused."
)


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: scripts and styles dropped, block elements on their own lines."""

    _SKIP: ClassVar[frozenset[str]] = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BLOCKS: ClassVar[frozenset[str]] = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "article",
               "header", "footer", "blockquote", "table", "ul", "ol", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP and tag != "head":
            self._skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and tag != "head":
            self._skipping = max(0, self._skipping - 1)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)

    def text(self) -> str:
        joined = "".join(self.parts)
        lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in joined.split("\n"))
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(markup: str) -> str:
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    return html.unescape(parser.text())


def _check_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"Unsupported URL {url!r}: only http:// and https:// addresses can be fetched")
    if not parts.netloc:
        raise ToolError(f"Invalid URL {url!r}: it names no host")
    return url.strip()


def _timeout(args: dict[str, Any]) -> float:
    value = args.get("timeout", DEFAULT_TIMEOUT)
    if value <= 0:
        raise ToolError(f"timeout must be a positive number of seconds, got {value:g}")
    return min(float(value), MAX_TIMEOUT)


def _download(url: str, timeout: float, ctx: ToolContext) -> tuple[Any, bytes, bool]:
    import httpx2

    try:
        with httpx2.Client(follow_redirects=True, timeout=timeout,
                           headers={"user-agent": "pi-web-tools/0.1 (+web_fetch)"}) as client, \
                client.stream("GET", url) as response:
            if response.status_code >= 400:
                raise ToolError(f"HTTP {response.status_code} {response.reason_phrase} fetching {url}")
            kind = response.headers.get("content-type", "text/plain").split(";")[0].strip().lower()
            if not kind.startswith(_TEXT_TYPES):
                raise ToolError(f"{url} returned {kind}, not text; web_fetch only returns text content")
            body = bytearray()
            clipped = False
            for chunk in response.iter_bytes():
                ctx.signal.raise_if_aborted()
                body.extend(chunk)
                if len(body) > MAX_DOWNLOAD_BYTES:
                    del body[MAX_DOWNLOAD_BYTES:]
                    clipped = True
                    break
            return response, bytes(body), clipped
    except httpx2.TimeoutException as err:
        raise ToolError(f"Timed out after {timeout:g}s fetching {url}; retry, or pass a larger timeout") from err
    except httpx2.ConnectError as err:
        raise ToolError(f"Could not connect to {urlsplit(url).netloc}: {err}") from err
    except httpx2.TooManyRedirects as err:
        raise ToolError(f"Too many redirects fetching {url}") from err
    except httpx2.HTTPError as err:
        raise ToolError(f"Fetching {url} failed: {err}") from err


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    ctx.signal.raise_if_aborted()
    url = _check_url(args["url"])
    response, body, clipped = _download(url, _timeout(args), ctx)
    kind = response.headers.get("content-type", "text/plain").split(";")[0].strip().lower()
    text = body.decode(response.encoding or "utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml") and not args.get("raw"):
        text = html_to_text(text)
    cut = truncate_head(text)
    output = cut.content or "(empty response)"
    if cut.truncated or clipped:
        total = f"{cut.total_lines} lines, {format_size(cut.total_bytes)}" + (" (download stopped at "
                                                                               f"{format_size(MAX_DOWNLOAD_BYTES)})" if clipped else "")
        output += (f"\n\n[Showing the first {cut.output_lines} lines ({format_size(cut.output_bytes)}) of {total}. "
                   "The rest of the page was cut off.]")
    details = {"url": str(response.url), "status": response.status_code, "contentType": kind,
               "truncation": cut.to_json() if cut.truncated else None}
    return ToolResult.text(output, details)


TOOL = Tool(name="web_fetch", label="web fetch", description=DESCRIPTION, parameters=PARAMETERS, execute=execute,
            prompt_snippet="Fetch a web page (http/https) and read it as text",
            prompt_guidelines=["Use web_fetch for documentation or pages the user links to; it cannot run JavaScript."])


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
