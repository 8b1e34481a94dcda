"""Terminal components plugins build UIs from (``ctx.ui.custom``, widgets, header, footer, editor).

Pure Python, no terminal library: a component's ``render(width)`` returns ANSI lines no wider than
``width`` and ``handle_input(data)`` takes the terminal data of one key press (``matches_key`` names it).
"""

from pi_core.tui.components import (
    Box,
    Container,
    DynamicBorder,
    Spacer,
    Text,
    TruncatedText,
)
from pi_core.tui.custom_editor import CustomEditor, EditorHost
from pi_core.tui.fuzzy import fuzzy_filter, fuzzy_score
from pi_core.tui.input import Input, LineEditor
from pi_core.tui.keys import (
    Key,
    Keybindings,
    decode_key,
    key_hint,
    key_id,
    key_text,
    matches_key,
    parse_key,
)
from pi_core.tui.lists import (
    SelectItem,
    SelectList,
    SelectListTheme,
    SettingItem,
    SettingsList,
    SettingsListTheme,
)
from pi_core.tui.loader import BorderedLoader, CancellableLoader, Loader
from pi_core.tui.markdown import Markdown
from pi_core.tui.tool_render import ToolRenderContext, draw_call, draw_result
from pi_core.tui.width import (
    CURSOR_MARKER,
    render_fake_cursor,
    slice_by_column,
    strip_ansi,
    truncate_to_width,
    visible_width,
    wrap_ansi,
)

__all__ = [
    "CURSOR_MARKER", "BorderedLoader", "Box", "CancellableLoader", "Container", "CustomEditor",
    "DynamicBorder", "EditorHost", "Input", "Key",
    "Keybindings", "LineEditor", "Loader", "Markdown", "SelectItem", "SelectList", "SelectListTheme", "SettingItem",
    "SettingsList", "SettingsListTheme", "Spacer", "Text", "ToolRenderContext", "TruncatedText", "decode_key",
    "draw_call", "draw_result", "fuzzy_filter",
    "fuzzy_score", "key_hint", "key_id", "key_text", "matches_key", "parse_key", "render_fake_cursor",
    "slice_by_column", "strip_ansi", "truncate_to_width", "visible_width", "wrap_ansi",
]
