"""What a run is asked, from the command line: piped stdin, ``@file`` arguments (text inlined in <file> tags,
images attached) and the messages (docs/cli.md#file-arguments-and-stdin)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pi_core.errors import PiError
from pi_core.types import ImageContent

if TYPE_CHECKING:
    from pi_core.app.args import Args
    from pi_core.mode import Mode

NO_PROMPT_TEXT = ("No prompt given. Pass one as a message (pi -p \"...\"), as @file arguments or on stdin; "
                  "run pi in a terminal without -p for the interactive UI.")


def gather_prompts(args: Args, cwd: Path, mode: Mode) -> tuple[list[str], list[ImageContent]]:
    """The messages to send in order, piped stdin and @files joined to the first, and the images attached.
    A stdio mode (RPC, ACP) owns stdin and takes no @files; print and JSON modes need a prompt."""
    stdin_text = "" if mode.stdio else read_piped_stdin()
    file_text, images = read_file_args(args.file_args, cwd)
    prompts = list(args.messages)
    first = stdin_text + file_text + (prompts.pop(0) if prompts else "")
    messages = ([first] if first or images else []) + prompts
    if not messages and mode.name in ("text", "json"):
        raise PiError(NO_PROMPT_TEXT)
    return messages, images


def read_file_args(paths: list[str], cwd: Path) -> tuple[str, list[ImageContent]]:
    """``@file`` arguments (docs/cli.md#file-arguments-and-stdin): text inlined in <file> tags, images attached."""
    if not paths:
        return "", []
    from pi_core.toolkit.images import (
        MAX_IMAGE_FILE_BYTES,
        SNIFF_BYTES,
        detect_image_mime_type,
        fit_image,
        too_large_note,
    )
    from pi_core.toolkit.paths import resolve_to_cwd

    text: list[str] = []
    images: list[ImageContent] = []
    for raw in paths:
        path = Path(resolve_to_cwd(raw, str(cwd)))
        if not path.is_file():
            raise PiError(f"File not found: {path}")
        try:
            with open(path, "rb") as handle:
                head = handle.read(SNIFF_BYTES)
                mime = detect_image_mime_type(head)
                size = os.fstat(handle.fileno()).st_size
                if mime is not None and size > MAX_IMAGE_FILE_BYTES:
                    text.append(f'<file name="{path}">{too_large_note(size)}</file>\n')
                    continue
                data = head + handle.read()
        except OSError as err:
            raise PiError(f"Could not read file {path}: {err.strerror or err}") from err
        if not data:
            continue
        if mime is not None:
            fitted = fit_image(data, mime)
            if fitted is None:
                text.append(f'<file name="{path}">[Image omitted: could not be resized below the inline image '
                            'size limit.]</file>\n')
                continue
            images.append(ImageContent(data=fitted.data, mime_type=fitted.mime_type))
            text.append(f'<file name="{path}">{fitted.dimension_note() if fitted.resized else ""}</file>\n')
            continue
        text.append(f'<file name="{path}">\n{data.decode("utf-8", errors="replace")}\n</file>\n')
    return "".join(text), images


def read_piped_stdin() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    try:
        return sys.stdin.read().strip()
    except (OSError, ValueError):
        return ""
