"""Terminal components plugins build UIs from (``ctx.ui.custom``, widgets, header, footer, editor)."""

from pi_core.tui.custom_editor import CustomEditor, EditorHost

__all__ = ["CustomEditor", "EditorHost"]
