"""Calling a tool ``Renderer`` (``pi_renderers``) the way Pi calls renderCall / renderResult.

A renderer built with ``with_context=True`` is drawn as ``call(args, theme, context)`` and
``result(result, options, theme, context)``: ``theme`` is the UI's theme (``ctx.ui.theme``), ``options`` a
``pi_core.render.RenderOptions`` (``expanded``, ``is_partial`` while the tool still streams, ``is_error``) and
``context`` a ``ToolRenderContext``. Other renderers keep the short form ``call(args)`` and
``result(result, is_error, expanded)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pi_core.render import Renderer, RenderOptions

if TYPE_CHECKING:
    from pi_core.ui import Theme

__all__ = ["ToolRenderContext", "draw_call", "draw_result"]


@dataclass
class ToolRenderContext:
    """One tool row as its renderer sees it (Pi's render ``context``)."""

    args: dict[str, Any]  # open: the model's tool arguments, JSON
    tool_call_id: str = ""
    cwd: str = ""
    execution_started: bool = False  # the tool runs or ran (False while only the call is known)
    is_partial: bool = False  # the result shown is a streamed partial one; the tool has not finished
    expanded: bool = False  # Ctrl+O
    is_error: bool = False
    state: dict[str, Any] = field(default_factory=dict)  # open: a renderer's own state, plugin-defined; shared by the row's call and result drawings
    duration_ms: int | None = None  # how long the tool ran, once finished (Pi's durationMs); None while it runs
    output_pad: int = 1  # the ``outputPad`` setting: a ``render_shell="self"`` renderer pads its own rows
    show_images: bool = True  # ``terminal.showImages``

    @property
    def options(self) -> RenderOptions:
        return RenderOptions(expanded=self.expanded, is_partial=self.is_partial, is_error=self.is_error)


def draw_call(renderer: Renderer, theme: Theme, context: ToolRenderContext) -> object:
    """The call slot: what the renderer returns (a str, a rich renderable or a component)."""
    if renderer.with_context:
        return renderer.call(context.args, theme, context)
    return renderer.call(context.args)


def draw_result(renderer: Renderer, result: object, theme: Theme, context: ToolRenderContext) -> object:
    """The result slot for ``result`` (final or partial); None when the renderer draws no result."""
    if renderer.result is None:
        return None
    if renderer.with_context:
        return renderer.result(result, context.options, theme, context)
    return renderer.result(result, context.is_error, context.expanded)
