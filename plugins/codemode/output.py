"""What a finished script gives the model: the ``Script completed|failed`` header, the text and image items in
order (``==> text N/M <==`` when there are several), the ``<console_output>`` block, the error, long output cut
to ``max_output_tokens`` with the whole text in a temp file, and each image saved to a temp file."""

from __future__ import annotations

import base64
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pi_core.toolkit.tempdir import new_output_file
from pi_core.toolkit.truncate import format_size
from pi_core.types import ImageContent, TextContent

CHARS_PER_TOKEN = 4
DEFAULT_MAX_OUTPUT_TOKENS = 10000
FILE_PREFIX = "pi-codemode"
IMAGE_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

Block = TextContent | ImageContent


@dataclass
class Item:
    """One piece of script output: ``text()`` or ``return`` text, a ``console`` line, or an image."""

    kind: Literal["text", "console", "image"]
    data: str
    mime_type: str = ""


@dataclass
class CallRecord:
    """A tool call the script made, for the result's details and the failure summary."""

    name: str
    args: str
    id: str = ""
    status: Literal["running", "ok", "error", "cancelled"] = "running"
    duration_ms: float | None = None
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.id, "name": self.name, "args": self.args, "status": self.status}
        if self.duration_ms is not None:
            out["durationMs"] = round(self.duration_ms)
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class Rendered:
    blocks: list[Block]
    full_output_path: str | None = None
    notes: list[str] = field(default_factory=list)


def header(ok: bool, wall_seconds: float) -> str:
    return f"{'Script completed' if ok else 'Script failed'}\nWall time {wall_seconds:.1f} seconds\nOutput:\n"


def call_summary(calls: list[CallRecord]) -> str:
    if not calls:
        return "No tool calls were made."
    listed = ", ".join(f"{call.name} ({call.status})" for call in calls)
    return f"Tool calls made before the failure (they are not undone): {listed}"


def _items(output: list[Item]) -> list[Block]:
    total = sum(1 for item in output if item.kind == "text")
    blocks: list[Block] = []
    console: list[str] = []
    index = 0
    for item in output:
        if item.kind == "image":
            blocks.append(ImageContent(data=item.data, mime_type=item.mime_type))
        elif item.kind == "console":
            console.append(item.data)
        else:
            index += 1
            blocks.append(TextContent(text=f"==> text {index}/{total} <==\n{item.data}" if total > 1 else item.data))
    if console:
        blocks.append(TextContent(text="<console_output>\n" + "\n".join(console) + "\n</console_output>"))
    return blocks


def _join_text(blocks: list[Block]) -> list[Block]:
    """Adjacent text blocks as one, each part on its own line."""
    joined: list[Block] = []
    parts: list[str] = []
    last = ""
    for block in blocks:
        if not isinstance(block, TextContent):
            if parts:
                joined.append(TextContent(text="".join(parts)))
            parts, last = [], ""
            joined.append(block)
            continue
        if last and not last.endswith("\n"):
            parts.append("\n")
            last = "\n"
        parts.append(block.text)
        if block.text:
            last = block.text
    if parts:
        joined.append(TextContent(text="".join(parts)))
    return joined


def _write(data: bytes, directory: Path | None, suffix: str) -> str:
    fd, path = new_output_file(FILE_PREFIX, directory, suffix)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    return str(path)


def _truncate(blocks: list[Block], max_tokens: int, directory: Path | None) -> Rendered:
    texts = [b.text for b in blocks if isinstance(b, TextContent)]
    combined = "\n".join(texts)
    budget = max_tokens * CHARS_PER_TOKEN
    if not texts or len(combined) <= budget:
        return Rendered(blocks)
    head_chars = budget // 2
    tail_chars = budget - head_chars
    removed = len(combined) - head_chars - tail_chars
    tail = combined[len(combined) - tail_chars:] if tail_chars else ""
    text = (f"Warning: truncated output (original token count: {math.ceil(len(combined) / CHARS_PER_TOKEN)})\n"
            f"Total output lines: {combined.count(chr(10)) + 1}\n\n"
            f"{combined[:head_chars]}\u2026{math.ceil(removed / CHARS_PER_TOKEN)} tokens truncated\u2026{tail}")
    path: str | None = None
    try:
        path = _write(combined.encode("utf-8", "surrogatepass"), directory, ".txt")
        text += f"\n\n[Full output: {path} (read with offset/limit)]"
    except OSError as err:
        text += f"\n\n[Could not save the full output: {err.strerror or err}]"
    images: list[Block] = [b for b in blocks if isinstance(b, ImageContent)]
    return Rendered([TextContent(text=text), *images], full_output_path=path)


def _save_images(blocks: list[Block], directory: Path | None) -> list[Block]:
    """Each image preceded by the line that names its temp file (an image shown twice is saved once)."""
    labels: dict[str, str] = {}
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, ImageContent):
            if block.data not in labels:
                data = base64.b64decode(block.data)
                kind = f"{block.mime_type}, {format_size(len(data))}"
                try:
                    labels[block.data] = f"[Image saved to {_write(data, directory, IMAGE_EXTENSIONS[block.mime_type])} ({kind})]"
                except OSError as err:
                    labels[block.data] = f"[Image ({kind}) could not be saved: {err.strerror or err}]"
            out.append(TextContent(text=labels[block.data]))
        out.append(block)
    return out


def render(output: list[Item], error: str | None, max_tokens: int, directory: Path | None) -> Rendered:
    """The model's blocks after the header: output items, then ``Script error:`` and the error when it failed."""
    blocks = _items(output)
    if error is not None:
        blocks.append(TextContent(text=f"Script error:\n{error}"))
    rendered = _truncate(_join_text(blocks), max_tokens, directory)
    rendered.blocks = _join_text(_save_images(rendered.blocks, directory))
    return rendered
