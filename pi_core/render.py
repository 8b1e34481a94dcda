"""Renderers: how a tool call and its result are shown in the terminal (contributed via ``pi_renderers``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Renderer:
    """Draws one tool. ``call`` gets the (possibly partial) arguments, ``result`` the ToolResult.

    Both return a rich renderable or a plain string. ``expanded`` is toggled by Ctrl+O in the UI.
    """

    tool_name: str
    call: Callable[[dict[str, Any]], Any]
    result: Callable[[Any, bool, bool], Any] | None = None  # (result, is_error, expanded)
