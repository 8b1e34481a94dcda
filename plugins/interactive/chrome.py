"""What plugins put around the editor through ``ctx.ui`` (``PluginChrome``: widgets, statuses, the working row,
their header, footer and editor), and the data a custom footer reads (``FooterData``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.ui import ComponentFactory, WorkingIndicator


@dataclass
class PluginChrome:
    """Set by the plugins' ``ctx.ui`` calls (ext_ui.py), drawn by the screen (layout.py)."""

    working_message: str = "Working…"  # ui.set_working_message
    working_visible: bool = True  # ui.set_working_visible
    working_indicator: WorkingIndicator | None = None  # ui.set_working_indicator (None: pi's spinner)
    statuses: dict[str, str] = field(default_factory=dict)  # ui.set_status texts, shown in the footer
    # ui.set_widget: lines, or a component from the plugin's factory, by key
    widgets: dict[str, dict[str, Any]] = field(default_factory=lambda: {"aboveEditor": {}, "belowEditor": {}})
    header: Any = None  # ui.set_header's component
    footer: Any = None  # ui.set_footer's component
    editor: Any = None  # ui.set_editor_component's component, in place of pi's editor
    editor_factory: ComponentFactory | None = None
    autocomplete: Any = None  # the top of the ui.add_autocomplete_provider stack


def git_branch(cwd: Path) -> str | None:
    """The checked-out branch of the repository around ``cwd`` (None outside git; "detached" at a commit)."""
    for folder in [cwd, *cwd.parents]:
        dot_git = folder / ".git"
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot_git.read_text(errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            target = Path(text.split(":", 1)[1].strip())
            dot_git = target if target.is_absolute() else folder / target
        if dot_git.is_dir():
            try:
                head = (dot_git / "HEAD").read_text(errors="replace").strip()
            except OSError:
                return None
            return head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else "detached"
    return None


class FooterData:
    """``pi_core.ui.FooterData`` for a custom footer: the git branch and the plugins' statuses."""

    def __init__(self, cwd: Path, statuses: Mapping[str, str], on_change: Callable[[], None]) -> None:
        self._cwd, self._statuses, self._on_change = cwd, statuses, on_change
        self._branch = git_branch(cwd)
        self._listeners: list[Callable[[str | None], None]] = []

    def git_branch(self) -> str | None:
        return self._branch

    def extension_statuses(self) -> dict[str, str]:
        return dict(self._statuses)

    def on_branch_change(self, callback: Callable[[str | None], None]) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def poll(self) -> None:
        """Called every half second by the app: tell listeners when the branch changed."""
        branch = git_branch(self._cwd)
        if branch != self._branch:
            self._branch = branch
            for listener in list(self._listeners):
                listener(branch)
            self._on_change()
