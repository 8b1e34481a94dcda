"""Renderers: how tool calls, custom messages and custom session entries are drawn in the interactive UI.

Contributed via ``pi_renderers`` (keyed by tool name), ``pi_message_renderers`` and ``pi_entry_renderers``
(keyed by ``custom_type``). A render function returns a rich renderable, a str (ANSI allowed) or a
``pi_core.ui.Component``. Other modes draw nothing, so these are never called there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pi_core.hookspecs.entries import CustomEntry
    from pi_core.types import CustomMessage
    from pi_core.ui import Theme


@dataclass(eq=False, repr=False)
class RenderOptions:
    """How to draw: ``expanded`` follows Ctrl+O, ``is_partial`` while a result still streams."""

    expanded: bool = False
    is_partial: bool = False
    is_error: bool = False


@dataclass(eq=False, repr=False)
class Renderer:
    """Draws one tool. ``call`` gets the (possibly partial) arguments, ``result`` the ToolResult (or, while the
    tool streams, its partial result).

    Both return a rich renderable, a plain string or a component. ``expanded`` is toggled by Ctrl+O in the UI.
    ``render_shell="self"`` means the renderer draws its own frame instead of pi's box around call and result.
    ``with_context=True`` calls them as Pi's renderCall / renderResult: ``call(args, theme, context)`` and
    ``result(result, options, theme, context)`` (``RenderOptions``; ``pi_core.tui.ToolRenderContext``).
    """

    tool_name: str
    call: Callable[..., object]  # (args) or, with_context, (args, theme, context)
    result: Callable[..., object] | None = None  # (result, is_error, expanded) or (result, options, theme, context)
    render_shell: Literal["default", "self"] = "default"
    with_context: bool = False


@dataclass(eq=False, repr=False)
class MessageRenderer:
    """Draws custom messages of one type: ``render(message, options, theme)`` (message: ``CustomMessage``)."""

    custom_type: str
    render: Callable[[CustomMessage, RenderOptions, Theme], object]


@dataclass(eq=False, repr=False)
class EntryRenderer:
    """Draws custom session entries of one type: ``render(entry, options, theme)`` (entry: the typed
    ``pi_core.hookspecs.entries.CustomEntry``, its plugin's data in ``entry.data``)."""

    custom_type: str
    render: Callable[[CustomEntry, RenderOptions, Theme], object]
