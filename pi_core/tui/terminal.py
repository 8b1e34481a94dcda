"""What the terminal can show beyond text: OSC 8 hyperlinks and inline images (kitty or iTerm2 protocol).

Detected from the environment as Pi detects it (``TERM_PROGRAM``, ``KITTY_WINDOW_ID``, ``ITERM_SESSION_ID`` ...);
``PI_HYPERLINKS`` / ``PI_IMAGE_PROTOCOL`` and the ``terminal.hyperlinks`` / ``terminal.images`` settings override
it (``configure``). Renderers ask ``capabilities()`` and use ``hyperlink``/``link_path``; the interactive UI draws
images with ``encode_image``. A terminal that cannot show an image gets ``image_fallback``'s text line.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

__all__ = [
    "Capabilities",
    "EncodedImage",
    "ImageProtocol",
    "capabilities",
    "configure",
    "detect",
    "encode_image",
    "hyperlink",
    "image_cells",
    "image_fallback",
    "link_path",
]

ImageProtocol = Literal["kitty", "iterm2"]
CELL_WIDTH_PX, CELL_HEIGHT_PX = 9, 18  # what a terminal cell is assumed to measure (Pi's default)
KITTY_CHUNK = 4096


@dataclass(frozen=True)
class Capabilities:
    images: ImageProtocol | None = None
    hyperlinks: bool = False


def tmux_forwards_hyperlinks() -> bool:
    """tmux passes OSC 8 on only when its attached client lists the ``hyperlinks`` feature."""
    try:
        done = subprocess.run(["tmux", "display-message", "-p", "#{client_termfeatures}"], capture_output=True,
                              text=True, timeout=0.25, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and "hyperlinks" in {part.strip() for part in done.stdout.split(",")}


def _from_environment(env: Mapping[str, str], tmux_links: Callable[[], bool]) -> Capabilities:
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if env.get("TMUX") or term.startswith("tmux"):
        return Capabilities(None, tmux_links())  # images do not survive tmux reliably
    if term.startswith("screen"):
        return Capabilities(None, False)
    # Multiplexers and terminals that speak kitty graphics; herdr first: an outer kitty's variables leak into it.
    if program in ("herdr", "rex") or (program == "orca" and env.get("ORCA_IMAGE_PROTOCOL") == "kitty"):
        return Capabilities("kitty", True)
    if (env.get("KITTY_WINDOW_ID") or program in ("kitty", "ghostty", "wezterm", "warpterminal")
            or "ghostty" in term or env.get("GHOSTTY_RESOURCES_DIR") or env.get("WEZTERM_PANE")
            or env.get("WARP_SESSION_ID") or env.get("WARP_TERMINAL_SESSION_UUID")):
        return Capabilities("kitty", True)
    if env.get("ITERM_SESSION_ID") or program == "iterm.app":
        return Capabilities("iterm2", True)
    alacritty = program == "alacritty" or term.startswith("alacritty") or env.get("ALACRITTY_WINDOW_ID")
    if env.get("WT_SESSION") or alacritty or program in ("vscode", "zed"):
        return Capabilities(None, True)
    return Capabilities(None, False)  # unknown (JetBrains, a bare console too): a swallowed link loses its text


def detect(env: Mapping[str, str] | None = None, tmux_links: Callable[[], bool] = tmux_forwards_hyperlinks
           ) -> Capabilities:
    """The capabilities of the terminal ``env`` (the process's) describes, with ``PI_*`` overrides applied."""
    env = os.environ if env is None else env
    links = {"1": True, "0": False}.get(env.get("PI_HYPERLINKS", ""))
    found = _from_environment(env, tmux_links if links is None else lambda: bool(links))
    protocol = env.get("PI_IMAGE_PROTOCOL", "").lower()
    if protocol in ("kitty", "iterm2"):
        found = replace(found, images=protocol)  # type: ignore[arg-type]
    elif protocol in ("none", "0"):
        found = replace(found, images=None)
    return found if links is None else replace(found, hyperlinks=links)


_current: Capabilities | None = None
_overrides: dict[str, object] = {}


def configure(*, images: object = "auto", hyperlinks: object = "auto") -> None:
    """The ``terminal.images`` and ``terminal.hyperlinks`` settings: ``"auto"`` keeps what was detected."""
    global _current
    _overrides.clear()
    if images in ("kitty", "iterm2") or images is False:
        _overrides["images"] = images or None
    if isinstance(hyperlinks, bool):
        _overrides["hyperlinks"] = hyperlinks
    _current = None


def capabilities() -> Capabilities:
    """This process's terminal (detected once), with the settings' overrides."""
    global _current
    if _current is None:
        links = _overrides.get("hyperlinks")
        found = detect(tmux_links=tmux_forwards_hyperlinks if links is None else lambda: bool(links))
        _current = replace(found, **_overrides)  # type: ignore[arg-type]
    return _current


def hyperlink(text: str, url: str) -> str:
    """``text`` as an OSC 8 link to ``url`` (terminals without OSC 8 show the text)."""
    return f"\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\"


def file_url(path: str, cwd: str = "") -> str:
    return Path(cwd or ".", os.path.expanduser(path)).absolute().as_uri()


def link_path(text: str, path: str, cwd: str = "") -> str:
    """``text`` linked to the file ``path`` (relative to ``cwd``) when the terminal shows links, else ``text``."""
    return hyperlink(text, file_url(path, cwd)) if capabilities().hyperlinks else text


def image_fallback(mime_type: str, size: tuple[int, int] | None = None) -> str:
    """The text line an image is shown as where it cannot be drawn: ``[Image: [image/png] 800x600]``."""
    return f"[Image: [{mime_type}]{f' {size[0]}x{size[1]}' if size else ''}]"


def image_cells(size: tuple[int, int], max_columns: int, max_rows: int | None = None) -> tuple[int, int]:
    """The columns and rows an image of ``size`` pixels takes at most ``max_columns`` wide, its aspect kept."""
    columns_limit = max(1, max_columns)
    rows_limit = max_rows if max_rows is not None else -(-columns_limit * CELL_WIDTH_PX // CELL_HEIGHT_PX)
    width, height = max(1, size[0]), max(1, size[1])
    scale = min(columns_limit * CELL_WIDTH_PX / width, max(1, rows_limit) * CELL_HEIGHT_PX / height)
    columns = max(1, min(columns_limit, -(-int(width * scale) // CELL_WIDTH_PX)))
    rows = max(1, min(max(1, rows_limit), -(-int(height * scale) // CELL_HEIGHT_PX)))
    return columns, rows


@dataclass(frozen=True)
class EncodedImage:
    protocol: ImageProtocol
    sequence: str  # draws the image at the cursor; the cursor does not move (kitty C=1; iTerm2: see rows)
    columns: int
    rows: int
    image_id: int = 0  # kitty: the id placements refer to
    height_px: int = 0


def _png(data: bytes, mime_type: str) -> bytes | None:
    """kitty takes PNG only: other formats are converted (None when the data does not decode)."""
    if mime_type == "image/png":
        return data
    import io

    try:
        from PIL import Image
        with Image.open(io.BytesIO(data)) as image:
            out = io.BytesIO()
            image.save(out, "PNG")
            return out.getvalue()
    except Exception:  # noqa: BLE001 - any undecodable image is shown as its text line
        return None


def kitty_transmit(payload: str, controls: str) -> str:
    """``payload`` (base64) in kitty's chunked APC form, ``controls`` on the first chunk."""
    if len(payload) <= KITTY_CHUNK:
        return f"\x1b_G{controls};{payload}\x1b\\"
    chunks = [payload[i:i + KITTY_CHUNK] for i in range(0, len(payload), KITTY_CHUNK)]
    out = [f"\x1b_G{controls},m=1;{chunks[0]}\x1b\\"]
    out += [f"\x1b_Gm={0 if i == len(chunks) - 1 else 1};{chunk}\x1b\\" for i, chunk in enumerate(chunks) if i]
    return "".join(out)


def encode_image(data_b64: str, mime_type: str, max_columns: int, protocol: ImageProtocol | None = None,
                 image_id: int = 0) -> EncodedImage | None:
    """The escape sequence that draws an image at most ``max_columns`` wide, or None when it cannot be drawn
    (no image protocol, data that is not an image)."""
    from pi_core.toolkit.images import image_size

    protocol = protocol or capabilities().images
    if protocol is None:
        return None
    try:
        data = base64.b64decode(data_b64, validate=False)
    except (ValueError, TypeError):
        return None
    size = image_size(data)
    if size is None:
        return None
    columns, rows = image_cells(size, max_columns)
    if protocol == "kitty":
        png = _png(data, mime_type)
        if png is None:
            return None
        payload = data_b64 if png is data else base64.b64encode(png).decode()
        ident = f",i={image_id}" if image_id else ""
        sequence = kitty_transmit(payload, f"a=T,f=100,q=2,C=1,c={columns},r={rows}{ident}")
        return EncodedImage("kitty", sequence, columns, rows, image_id, size[1])
    sequence = (f"\x1b]1337;File=inline=1;size={len(data)};width={columns};height=auto;"
                f"preserveAspectRatio=1:{data_b64}\x07")
    return EncodedImage("iterm2", sequence, columns, rows, 0, size[1])
