"""MCP results as pi tool results: text and images for the model; ``details`` name the server and tool (and the
file with the full output), never the payload, so session files stay small.

Model-facing text over 20 KB keeps its start and end around a ``…N chars truncated…`` marker, and the whole text
is saved to a file the result names. Binary resources are saved to files too; audio is described, not sent.
"""

from __future__ import annotations

import base64
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pi_core.toolkit.tempdir import new_output_file
from pi_core.toolkit.truncate import format_size
from pi_core.tools import ToolResult
from pi_core.types import ImageContent, TextContent

MAX_OUTPUT_BYTES = 20 * 1024
READ_RESOURCE_TOOL = "read_mcp_resource"
Content = TextContent | ImageContent


def save_output(data: bytes, suffix: str, directory: Path | None = None) -> Path:
    """Write a full result or a binary resource to a fresh 0600 file that outlives pi, as bash's full outputs
    do: in ``directory`` (the session's ``<session>.outputs/``), or in the system temp dir without one."""
    fd, path = new_output_file("pi-mcp", directory, suffix)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(value, "model_dump") else value


def _is_text_mime(mime: str | None) -> bool:
    kind = (mime or "").split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))


def _suffix_of(uri: str) -> str:
    match = re.search(r"\.[A-Za-z0-9]{1,8}$", urlparse(uri).path or uri)
    return match.group(0) if match else ".bin"


def _resource_contents(resource: dict[str, Any], output_dir: Path | None) -> list[Content]:
    uri, mime = resource.get("uri", ""), resource.get("mimeType")
    if "text" in resource:
        return [TextContent(text=str(resource["text"]))]
    blob = resource.get("blob", "")
    if (mime or "").startswith("image/"):
        return [ImageContent(data=blob, mime_type=str(mime))]
    try:
        data = base64.b64decode(blob, validate=False)
    except ValueError:
        data = b""
    if _is_text_mime(mime):
        return [TextContent(text=data.decode("utf-8", errors="replace"))]
    kind = f"{mime or 'unknown type'}, {format_size(len(data))}"
    try:
        path = save_output(data, _suffix_of(uri), output_dir)
    except OSError as err:
        return [TextContent(text=f"[Binary resource {uri} ({kind}) could not be saved: {err.strerror or err}]")]
    return [TextContent(text=f"[Binary resource {uri} ({kind}) saved to {path}]")]


def block_contents(server: str, block: dict[str, Any], *, readable_resources: bool = False,
                   output_dir: Path | None = None) -> list[Content]:
    """One MCP content block as what the model reads; binary resources are saved in ``output_dir``."""
    kind = block.get("type")
    if kind == "text":
        return [TextContent(text=str(block.get("text", "")))]
    if kind == "image":
        return [ImageContent(data=str(block.get("data", "")), mime_type=str(block.get("mimeType", "image/png")))]
    if kind == "audio":
        return [TextContent(text=f"[audio {block.get('mimeType', '')} omitted]")]
    if kind == "resource_link":
        details = [d for d in (block.get("mimeType"), format_size(block["size"]) if isinstance(block.get("size"), int)
                               else None) if d]
        read = f'. Read it with {READ_RESOURCE_TOOL} (server "{server}")' if readable_resources else ""
        about = f": {block['description']}" if block.get("description") else ""
        label = block.get("title") or block.get("name", "")
        shown = f" ({', '.join(details)})" if details else ""
        return [TextContent(text=f'[Resource {block.get("uri", "")} "{label}"{shown}{about}{read}]')]
    if kind == "resource" and isinstance(block.get("resource"), dict):
        return _resource_contents(block["resource"], output_dir)
    return [TextContent(text=f"[unsupported MCP content {kind}]")]


@dataclass
class Limited:
    content: list[Content]
    full_output_path: str | None = None

    def result(self, server: str, tool: str) -> ToolResult:
        """The tool result: this content, and details naming the server, the tool and the full-output file."""
        details: dict[str, Any] = {"server": server, "tool": tool}
        if self.full_output_path:
            details["fullOutputPath"] = self.full_output_path
        return ToolResult(content=list(self.content) or [TextContent(text="")], details=details)


def _cut_middle(text: str, max_bytes: int) -> tuple[str, int] | None:
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return None
    head_end = max_bytes // 2
    while head_end > 0 and (data[head_end] & 0xC0) == 0x80:
        head_end -= 1
    tail_start = len(data) - (max_bytes - max_bytes // 2)
    while tail_start < len(data) and (data[tail_start] & 0xC0) == 0x80:
        tail_start += 1
    removed = len(data[head_end:tail_start].decode("utf-8", errors="replace"))
    head = data[:head_end].decode("utf-8", errors="replace")
    tail = data[tail_start:].decode("utf-8", errors="replace")
    return f"{head}…{removed} chars truncated…{tail}", len(data)


def limit_content(content: list[Content], output_dir: Path | None = None) -> Limited:
    """Keep the model-facing text within 20 KB; the full text goes to a file (in ``output_dir``) the result
    names."""
    combined = "\n".join(c.text for c in content if isinstance(c, TextContent))
    cut = _cut_middle(combined, MAX_OUTPUT_BYTES)
    if cut is None:
        return Limited(content)
    shortened, total_bytes = cut
    lines = combined.count("\n") + 1 - (1 if combined.endswith("\n") else 0)
    where, path = "", None
    try:
        path = str(save_output(combined.encode("utf-8", errors="replace"), ".txt", output_dir))
        where = f"\n\n[Full output: {path} (read it with offset/limit)]"
    except OSError as err:
        where = f"\n\n[Could not save the full output: {err.strerror or err}]"
    tokens = -(-total_bytes // 4)
    text = (f"Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n"
            f"{shortened}{where}")
    return Limited([TextContent(text=text), *(c for c in content if isinstance(c, ImageContent))], path)


def convert_result(server: str, tool: str, result: Any, *, readable_resources: bool = False,
                   output_dir: Path | None = None) -> tuple[ToolResult, bool]:
    """A ``CallToolResult`` as (ToolResult, is_error). A result without content shows its structured content;
    files (full text, binary resources) go to ``output_dir``."""
    raw = _dump(result)
    blocks = raw.get("content") or []
    content: list[Content] = []
    for block in blocks:
        content.extend(block_contents(server, block, readable_resources=readable_resources, output_dir=output_dir))
    structured = raw.get("structuredContent")
    if not blocks and structured is not None:
        content.append(TextContent(text=json.dumps(structured, indent=2, ensure_ascii=False)))
    is_error = bool(raw.get("isError"))
    if is_error and not "".join(c.text for c in content if isinstance(c, TextContent)):
        content.append(TextContent(text=f"MCP tool {server}/{tool} returned an error"))
    return limit_content(content, output_dir).result(server, tool), is_error
