"""The result of grep, find and ls: lines cut to the byte limit, then their notices in brackets."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from pi_core.toolkit.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head
from pi_core.tools import ToolResult


@dataclass(frozen=True)
class Notice:
    text: str  # shown to the model inside the trailing [...]
    key: str  # the ``details`` key that records it
    value: Any


def listing_result(lines: list[str], limit: Notice | None = None, after: Notice | None = None) -> ToolResult:
    """Join ``lines`` under the byte limit (no line limit); notices come in Pi's order: the result limit,
    the byte limit, then ``after``."""
    truncation = truncate_head("\n".join(lines), max_lines=sys.maxsize, max_bytes=DEFAULT_MAX_BYTES)
    notices = [limit] if limit is not None else []
    if truncation.truncated:
        notices.append(Notice(f"{format_size(DEFAULT_MAX_BYTES)} limit reached", "truncation", truncation.to_json()))
    if after is not None:
        notices.append(after)
    text = truncation.content
    if notices:
        text += f"\n\n[{'. '.join(n.text for n in notices)}]"
    return ToolResult.text(text, {n.key: n.value for n in notices} or None)
