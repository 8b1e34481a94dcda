"""An ACP prompt (text, images, resource links, embedded resources) as the text and images of a pi prompt.

Embedded text resources (a file the user @-mentioned, with the editor's contents) join the text as pi's own
``@file`` arguments do, in ``<file name=...>`` tags; links stay as their URI for the model to read.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

from pi_core.types import ImageContent


def uri_path(uri: str) -> str:
    """A ``file://`` URI as a path; any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_parts(blocks: list[Any]) -> tuple[str, list[ImageContent]]:
    texts: list[str] = []
    files: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif kind == "resource_link":
            texts.append(uri_path(block.uri))
        elif kind == "resource":
            resource = block.resource
            name = uri_path(resource.uri)
            text = getattr(resource, "text", None)
            if text is not None:
                files.append(f'<file name="{name}">\n{text}\n</file>\n')
            elif (getattr(resource, "mime_type", None) or "").startswith("image/"):
                images.append(ImageContent(data=resource.blob, mime_type=resource.mime_type))
                files.append(f'<file name="{name}"></file>\n')
            else:
                files.append(f'<file name="{name}">[binary content omitted]</file>\n')
        elif kind == "audio":
            texts.append("[audio omitted: pi does not take audio]")
    return "".join(files) + "".join(texts), images
