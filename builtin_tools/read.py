"""read: show a text file a page at a time, or an image as an attachment, so the model can look before it acts."""

from __future__ import annotations

import functools
import os
import stat
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.errors import ToolError
from pi_core.toolkit.builtin import argument, builtin_tool, parameters
from pi_core.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from pi_builtin_tools._text_slice import TextSlice

    from pi_core.toolkit.fileops import ReadOperations
    from pi_core.toolkit.truncate import TruncationResult

DEFAULT_ACTIVE = True

PARAMETERS = parameters(
    ["path"],
    path=argument("string", "File to read: a path relative to the working directory, or absolute"),
    offset=argument("number", "First line to show, counting from 1"),
    limit=argument("number", "How many lines to show at most"),
)

DESCRIPTION = (
    "Show what a file contains. Text files and images (jpg, png, gif, webp) are supported; images come back "
    "as attachments. Text output stops at 2000 lines or 50KB, whichever comes first. Page through big files "
    "with offset/limit, and keep raising offset until you have read everything you need."
)

# A text file up to this size is read on the event loop (``Tool.quick``): over in microseconds, while a worker
# thread's hand-off took milliseconds of every turn on a busy machine.
QUICK_READ_BYTES = 256 * 1024

# Bytes that mark a file as binary when they open it (and no NUL byte gave it away already).
_BINARY_SIGNATURES = (b"%PDF-", b"PK\x03\x04", b"\x7fELF", b"\x1f\x8b", b"7z\xbc\xaf\x27\x1c", b"Rar!\x1a\x07",
                      b"\x28\xb5\x2f\xfd", b"\xca\xfe\xba\xbe", b"\xcf\xfa\xed\xfe", b"SQLite format 3\x00")
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\v\x1b\x08")


def _looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head or head.startswith(_BINARY_SIGNATURES):
        return True
    controls = sum(1 for byte in head if byte < 0x20 and byte not in _TEXT_CONTROLS)
    return controls * 10 > len(head)


def _model_accepts_images(ctx: ToolContext) -> bool:
    return ctx.model is None or "image" in ctx.model.input


def execute(args: dict[str, Any], ctx: ToolContext, *, operations: ReadOperations | None = None,
            auto_resize_images: bool = True) -> ToolResult:
    """The file's text or image for the model; as data for scripts, the text, or the image with its note."""
    from pi_core.types import ImageContent, TextContent

    result = _read(args, ctx, operations=operations, auto_resize_images=auto_resize_images)
    text = next((block.text for block in result.content if isinstance(block, TextContent)), "")
    image = next((block for block in result.content if isinstance(block, ImageContent)), None)
    result.structured_content = text if image is None else {"type": "image", "data": image.data,
                                                            "mimeType": image.mime_type, "note": text}
    return result


def _read(args: dict[str, Any], ctx: ToolContext, *, operations: ReadOperations | None,
          auto_resize_images: bool) -> ToolResult:
    """Show a text slice or an image of the file named in ``args``, read through ``operations``."""
    # Imported here: pi loads every tool plugin on start, and a run may never read.
    from pi_builtin_tools._text_slice import OffsetBeyondEnd, read_slice

    from pi_core.toolkit.fileops import LOCAL, node_error_message
    from pi_core.toolkit.images import (
        MAX_IMAGE_FILE_BYTES,
        SNIFF_BYTES,
        detect_image_mime_type,
        too_large_note,
    )
    from pi_core.toolkit.paths import resolve_read_path
    from pi_core.toolkit.procs import js_number

    ops = operations or LOCAL
    ctx.signal.raise_if_aborted()
    path: str = args["path"]
    absolute = resolve_read_path(path, str(ctx.cwd), ops.exists)
    try:
        ops.access(absolute)
    except OSError as err:
        raise ToolError(node_error_message(err, "access", absolute)) from err
    try:
        stream = ops.open_file(absolute)
    except OSError as err:
        raise ToolError(node_error_message(err, "read", absolute)) from err
    with stream:
        try:
            head = stream.read(SNIFF_BYTES)
        except OSError as err:
            raise ToolError(node_error_message(err, "read", absolute)) from err
        mime = detect_image_mime_type(head)
        if mime is not None:
            ctx.signal.raise_if_aborted()
            rest = stream.read(MAX_IMAGE_FILE_BYTES + 1 - len(head))  # bounded: never the whole of a huge file
            if len(head) + len(rest) > MAX_IMAGE_FILE_BYTES:
                return ToolResult.text(f"Read image file [{mime}]\n{too_large_note(_size_of(stream))}")
            return _image_result(head + rest, mime, ctx, auto_resize_images)
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            raise ToolError(
                f"Cannot read {path}: it is UTF-16 text, which read does not decode. Convert a copy with "
                "bash (iconv -f UTF-16 -t UTF-8) and read that.")
        if _looks_binary(head):
            raise ToolError(
                f"Cannot read {path}: it looks like a binary file, not text or a supported image "
                "(jpg, png, gif, webp). Inspect it with bash instead (e.g. file, xxd | head).")
        offset = args.get("offset")
        limit = args.get("limit")
        start = max(0, int(offset) - 1) if offset else 0
        try:
            text_slice = read_slice(stream, head, start, None if limit is None else max(0, int(limit)))
        except OffsetBeyondEnd as err:
            raise ToolError(
                f"Offset {js_number(offset or 0)} is beyond end of file ({err.total_lines} lines total)") from err
    ctx.signal.raise_if_aborted()
    return _text_result(text_slice, path, start, limit)


def is_quick(args: dict[str, Any], ctx: ToolContext, *, operations: ReadOperations | None = None) -> bool:
    """True for a small local text file (an image may need resizing: it goes to a worker thread)."""
    from pi_core.toolkit.fileops import LOCAL
    from pi_core.toolkit.images import SNIFF_BYTES, detect_image_mime_type
    from pi_core.toolkit.paths import resolve_to_cwd

    path = args.get("path") if isinstance(args, dict) else None
    if (operations is not None and operations is not LOCAL) or not isinstance(path, str):
        return False
    try:
        absolute = resolve_to_cwd(path, str(ctx.cwd))  # a macOS name variant of it: a worker thread finds it
        info = os.stat(absolute)
        if not stat.S_ISREG(info.st_mode) or info.st_size > QUICK_READ_BYTES:
            return False
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK)  # no file object: three system calls fewer
        try:
            return detect_image_mime_type(os.read(fd, SNIFF_BYTES)) is None
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return False


# What a call resolves to in a codemode script: the text, or an image block with its note.
OUTPUT_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": "string"},
    {"type": "object", "properties": {"type": {"const": "image"}, "data": {"type": "string"},
                                      "mimeType": {"type": "string"}, "note": {"type": "string"}},
     "required": ["type", "data", "mimeType", "note"]},
]}


def create_read_tool(operations: ReadOperations | None = None, *, auto_resize_images: bool = True) -> Tool:
    """A read tool on ``operations`` (the local disk by default).

    ``ctx.model``'s ``input`` list says whether images can be sent, and ``ctx.settings.auto_resize_images``
    (the ``images.autoResize`` setting), when the session sets it, overrides the argument.
    """
    return builtin_tool(
        "read", DESCRIPTION, PARAMETERS,
        functools.partial(execute, operations=operations, auto_resize_images=auto_resize_images),
        active_by_default=DEFAULT_ACTIVE, prompt_snippet="Show the contents of a file (text or image)",
        prompt_guidelines=["Look at files with read, not with cat or sed."],
        quick=functools.partial(is_quick, operations=operations), output_schema=OUTPUT_SCHEMA)


def _truncation(s: TextSlice) -> TruncationResult:
    from pi_core.toolkit.truncate import (
        DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES,
        TruncationResult,
    )

    return TruncationResult(
        content="\n".join(s.kept), truncated=s.truncated_by is not None, truncated_by=s.truncated_by,  # type: ignore[arg-type]
        total_lines=s.selected_lines, total_bytes=s.selected_bytes,
        output_lines=len(s.kept), output_bytes=s.output_bytes if s.kept else 0,
        last_line_partial=False, first_line_exceeds_limit=s.first_line_exceeds,
        max_lines=DEFAULT_MAX_LINES, max_bytes=DEFAULT_MAX_BYTES)


def _text_result(s: TextSlice, path: str, start: int, limit: Any) -> ToolResult:
    from pi_core.toolkit.truncate import DEFAULT_MAX_BYTES, format_size
    from pi_core.types import TextContent

    first = start + 1
    total = str(s.total_lines) if s.counted_all else f"at least {s.total_lines} (not all counted)"
    truncation = _truncation(s)
    details: dict[str, Any] | None = {"truncation": truncation.to_json()} if truncation.truncated else None
    if s.first_line_exceeds:
        text = (f"[Line {first} is {format_size(s.first_line_bytes)}, exceeds {format_size(DEFAULT_MAX_BYTES)} "
                f"limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]")
    elif s.truncated_by == "lines":
        end = first + len(s.kept) - 1
        text = f"{truncation.content}\n\n[Showing lines {first}-{end} of {total}. Use offset={end + 1} to continue.]"
    elif s.truncated_by == "bytes":
        end = first + len(s.kept) - 1
        text = (f"{truncation.content}\n\n[Showing lines {first}-{end} of {total} "
                f"({format_size(DEFAULT_MAX_BYTES)} limit). Use offset={end + 1} to continue.]")
    elif limit is not None and start + s.selected_lines < s.total_lines:
        remaining = s.total_lines - (start + s.selected_lines)
        more = str(remaining) if s.counted_all else f"At least {remaining}"
        text = f"{truncation.content}\n\n[{more} more lines in file. Use offset={start + s.selected_lines + 1} to continue.]"
    else:
        text = truncation.content
    if s.invalid_utf8:
        text += "\n\n[This file is not valid UTF-8: bytes that could not be decoded are shown as \ufffd.]"
    return ToolResult(content=[TextContent(text=text)], details=details)


def _size_of(stream: Any) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None


def _image_result(data: bytes, mime: str, ctx: ToolContext, auto_resize: bool) -> ToolResult:
    from pi_core.toolkit.images import fit_image
    from pi_core.types import ImageContent, TextContent

    if ctx.settings.auto_resize_images is not None:
        auto_resize = ctx.settings.auto_resize_images
    unsupported = "" if _model_accepts_images(ctx) else (
        "\n[Current model does not support images. The image will be omitted from this request.]")
    if not auto_resize:
        import base64

        encoded = base64.b64encode(data).decode("ascii")
        return ToolResult(content=[TextContent(text=f"Read image file [{mime}]{unsupported}"),
                                   ImageContent(data=encoded, mime_type=mime)])
    fitted = fit_image(data, mime)
    if fitted is None:
        return ToolResult(content=[TextContent(
            text=f"Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size "
                 f"limit.]{unsupported}")])
    text = f"Read image file [{fitted.mime_type}]"
    if fitted.resized:
        text += "\n" + fitted.dimension_note()
    return ToolResult(content=[TextContent(text=text + unsupported),
                               ImageContent(data=fitted.data, mime_type=fitted.mime_type)])


TOOL = create_read_tool()


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


