"""What plugins may replace around the editor: the editor itself (a ``CustomEditor``), and the footer's data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pi_plugins.interactive import style

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


def _sgr(role: str, reverse: bool = False) -> tuple[str, str]:
    from pi_core.resources.ansi_theme import _rgb

    rgb = _rgb(style.current().color(role))
    start = f"\x1b[38;2;{rgb[0]};{rgb[1]};{rgb[2]}m" if rgb else ""
    return start, "\x1b[39m" if rgb else ""


class EditorHost:
    """pi's editor behind a plugin's ``CustomEditor``: keys go on to prompt_toolkit, lines drawn like pi's."""

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app

    def default_input(self, data: str) -> None:
        self.app.router.pass_on(data)

    def get_text(self) -> str:
        return self.app.buffer.text

    def set_text(self, text: str) -> None:
        self.app.set_editor_text(text)

    def default_render(self, width: int, border: Callable[[str], str] | None = None) -> list[str]:
        """A rule, the text wrapped at ``width`` with the cursor in reverse video, a rule."""
        from prompt_toolkit.utils import get_cwidth

        if border is None:
            start, end = _sgr("borderMuted")

            def border(text: str) -> str:
                return f"{start}{text}{end}"

        document = self.app.buffer.document
        row, col = document.cursor_position_row, document.cursor_position_col
        body: list[str] = []
        for index, line in enumerate(document.lines):
            chars = list(line)
            if index == row:
                under = chars[col] if col < len(chars) else " "
                chars = chars[:col] + [f"\x1b[7m{under}\x1b[27m"] + chars[col + 1:]
            current, used = "", 0
            for char in chars:
                cells = get_cwidth(char) if not char.startswith("\x1b") else 1
                if used + cells > width:
                    body.append(current)
                    current, used = "", 0
                current += char
                used += cells
            body.append(current)
        return [border("─" * width), *body, border("─" * width)]


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

    def __init__(self, app: InteractiveApp) -> None:
        self.app = app
        self._branch = git_branch(Path(app.session.config.cwd))
        self._listeners: list[Callable[[str | None], None]] = []

    def git_branch(self) -> str | None:
        return self._branch

    def extension_statuses(self) -> dict[str, str]:
        return dict(self.app.statuses)

    def on_branch_change(self, callback: Callable[[str | None], None]) -> Callable[[], None]:
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def poll(self) -> None:
        """Called every half second by the app: tell listeners when the branch changed."""
        branch = git_branch(Path(self.app.session.config.cwd))
        if branch != self._branch:
            self._branch = branch
            for listener in list(self._listeners):
                listener(branch)
            self.app.invalidate()
