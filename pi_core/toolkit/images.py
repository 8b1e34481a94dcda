"""Recognise images by their first bytes and fit them under the inline-image limits (read tool, ``@file``)."""

from __future__ import annotations

import base64
import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

SNIFF_BYTES = 4100
# A file past this is never loaded to be decoded: a 1.5 GB file that starts like a PNG took 6.9 GB of
# memory. 50 MiB holds any photo a camera makes; a 2000x2000 RGBA bitmap is 16 MB.
MAX_IMAGE_FILE_BYTES = 50 * 1024 * 1024
MAX_DIMENSION = 2000
MAX_BASE64_LENGTH = 4_718_592  # 4.5 MiB of base64 text
_JPEG_QUALITIES = (80, 85, 70, 55, 40)


def detect_image_mime_type(head: bytes) -> str | None:
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp`` from the leading bytes, else None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height read from the header of a PNG, GIF, JPEG or WebP, or None if it cannot be told."""
    try:
        if data.startswith(b"\x89PNG") and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if data.startswith(b"GIF8"):
            return struct.unpack("<HH", data[6:10])
        if data.startswith(b"\xff\xd8"):
            return _jpeg_size(data)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
    except struct.error:
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 9 < len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        length = struct.unpack(">H", data[pos + 2 : pos + 4])[0]
        # SOF markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[pos + 5 : pos + 9])
            return width, height
        pos += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


@dataclass
class FittedImage:
    """An image ready to send: base64 data, its type, and the sizes before and after any resize."""

    data: str
    mime_type: str
    original_width: int
    original_height: int
    width: int
    height: int

    @property
    def resized(self) -> bool:
        return (self.width, self.height) != (self.original_width, self.original_height)

    def dimension_note(self) -> str:
        scale = self.original_width / self.width
        return (f"[Image: original {self.original_width}x{self.original_height}, displayed at "
                f"{self.width}x{self.height}. Multiply coordinates by {scale:.2f} to map to original image.]")


def fit_image(data: bytes, mime_type: str) -> FittedImage | None:
    """The image itself when it is within 2000x2000 and 4.5 MiB of base64, else a smaller re-encoding.

    Returns None when it cannot be brought under the limits: undecodable data, no imaging library
    (Pillow) for an image that needs resizing, or nothing small enough down to 1x1.
    """
    encoded = base64.b64encode(data).decode("ascii")
    size = image_size(data)
    if size is not None and _fits(size, encoded):
        return FittedImage(encoded, mime_type, size[0], size[1], size[0], size[1])
    try:
        from PIL import Image, ImageOps
    except ImportError:
        return None
    try:
        image = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
        image.load()
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    width, height = image.size
    if _fits((width, height), encoded):
        return FittedImage(encoded, mime_type, width, height, width, height)
    scale = min(1.0, MAX_DIMENSION / width, MAX_DIMENSION / height)
    target_w, target_h = max(1, round(width * scale)), max(1, round(height * scale))
    while True:
        resized = image.resize((target_w, target_h), Image.Resampling.LANCZOS)
        for candidate, candidate_mime in _encodings(resized):
            text = base64.b64encode(candidate).decode("ascii")
            if len(text) < MAX_BASE64_LENGTH:
                return FittedImage(text, candidate_mime, width, height, target_w, target_h)
        if (target_w, target_h) == (1, 1):
            return None
        target_w, target_h = max(1, int(target_w * 0.75)), max(1, int(target_h * 0.75))


def _fits(size: tuple[int, int], encoded: str) -> bool:
    return size[0] <= MAX_DIMENSION and size[1] <= MAX_DIMENSION and len(encoded) < MAX_BASE64_LENGTH


def _encodings(image: PILImage) -> Iterator[tuple[bytes, str]]:
    """PNG first, then JPEG at falling qualities."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    yield buffer.getvalue(), "image/png"
    rgb = image.convert("RGB")
    for quality in _JPEG_QUALITIES:
        buffer = io.BytesIO()
        rgb.save(buffer, format="JPEG", quality=quality)
        yield buffer.getvalue(), "image/jpeg"


def too_large_note(size: int | None) -> str:
    """``[Image omitted: ...]`` for an image file over ``MAX_IMAGE_FILE_BYTES`` (``size`` when known)."""
    limit = MAX_IMAGE_FILE_BYTES // (1024 * 1024)
    actual = f"{size / (1024 * 1024):.0f} MB" if size is not None else f"more than {limit} MB"
    return (f"[Image omitted: the file is {actual}; pi decodes images up to {limit} MB. Make a smaller copy "
            "with bash (for example: convert IN -resize 2000x2000 OUT.png) and read that.]")
