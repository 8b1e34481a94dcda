"""Images in the editor: Ctrl+V / Alt+V reads one from the clipboard (wl-paste, xclip or pbpaste), and a pasted
or dropped image path becomes one too. Each waits above the editor as a chip and goes with the next message
as an image block.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from pi_plugins.interactive.host import Attachment

from pi_core.toolkit.images import detect_image_mime_type, fit_image
from pi_core.types import ImageContent

if TYPE_CHECKING:
    from pi_plugins.interactive.host import AppHost

NO_CLIPBOARD_TOOL = (
    "No clipboard tool found: install wl-clipboard (Wayland), xclip (X11) or use pbpaste (macOS) to paste images"
)
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def clipboard_commands() -> list[tuple[str, list[str]]]:
    """(tool, command listing the clipboard's types) for each clipboard tool on PATH, Wayland first."""
    found = []
    if shutil.which("wl-paste") and (os.environ.get("WAYLAND_DISPLAY") or not shutil.which("xclip")):
        found.append(("wl-paste", ["wl-paste", "--list-types"]))
    if shutil.which("xclip"):
        found.append(("xclip", ["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]))
    if shutil.which("pbpaste"):
        found.append(("pbpaste", ["pbpaste", "-Prefer", "png"]))
    return found


async def _run(command: list[str]) -> bytes:
    proc = await asyncio.create_subprocess_exec(*command, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.DEVNULL, stdin=asyncio.subprocess.DEVNULL)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 5)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return b""
    return out if proc.returncode == 0 else b""


async def read_clipboard_image() -> tuple[bytes, str] | None:
    """The clipboard's image bytes and type; None when it holds no image. Raises LookupError with no tool."""
    tools = clipboard_commands()
    if not tools:
        raise LookupError(NO_CLIPBOARD_TOOL)
    for tool, list_types in tools:
        if tool == "pbpaste":
            data = await _run(list_types)
        else:
            types = (await _run(list_types)).decode(errors="replace").split()
            wanted = next((t for t in IMAGE_TYPES if t in types), None)
            if wanted is None:
                continue
            fetch = ["wl-paste", "--type", wanted] if tool == "wl-paste" else \
                ["xclip", "-selection", "clipboard", "-t", wanted, "-o"]
            data = await _run(fetch)
        mime = detect_image_mime_type(data[:64]) if data else None
        if mime:
            return data, mime
    return None


def attach(app: AppHost, data: bytes, mime: str, label: str | None = None) -> bool:
    fitted = fit_image(data, mime)
    if fitted is None:
        app.notify("The image is too large to send, even resized", "red")
        return False
    number = len(app.attachments) + 1
    app.attachments.append(Attachment(label or f"[Image #{number}]", ImageContent(data=fitted.data,
                                                                                 mime_type=fitted.mime_type)))
    app.invalidate()
    return True


async def paste_from_clipboard(app: AppHost) -> None:
    try:
        found = await read_clipboard_image()
    except LookupError as err:
        app.notify(str(err), "yellow")
        return
    if found is None:
        app.set_hint("The clipboard holds no image")
        return
    attach(app, *found)


def image_path(text: str, cwd: Path) -> Path | None:
    """The image file a pasted or dropped text names (quoted, escaped, or a file:// URL), else None."""
    candidate = text.strip()
    if not candidate or "\n" in candidate or len(candidate) > 4096:
        return None
    if candidate.startswith("file://"):
        candidate = unquote(urlparse(candidate).path)
    else:
        try:
            parts = shlex.split(candidate)  # 'My Pic.png' or My\ Pic.png as terminals drop them
        except ValueError:
            return None
        if len(parts) != 1:
            return None
        candidate = parts[0]
    path = Path(candidate).expanduser()
    path = path if path.is_absolute() else cwd / path
    try:
        if not path.is_file() or path.stat().st_size > 50 * 1024 * 1024:
            return None
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError:
        return None
    return path if detect_image_mime_type(head) else None


def paste_text(app: AppHost, data: str) -> None:
    """A bracketed paste: an image path becomes an attachment, anything else is typed."""
    path = image_path(data, Path(app.session.config.cwd))
    if path is not None:
        raw = path.read_bytes()
        mime = detect_image_mime_type(raw[:64]) or "image/png"
        if attach(app, raw, mime, f"[{path.name}]"):
            return
    app.buffer.insert_text(data.replace("\r\n", "\n").replace("\r", "\n"))


def take(app: AppHost) -> list[ImageContent]:
    """The images to send with the message being submitted (the chips are cleared)."""
    images = [a.image for a in app.attachments]
    for attachment in app.attachments:  # the transcript names each image of the message: [image: red.png]
        app.view.image_names[attachment.image.data] = attachment.label.strip("[]")
    app.attachments.clear()
    return images
