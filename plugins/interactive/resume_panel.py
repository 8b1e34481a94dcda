"""/resume: sessions of this project, or of every project (Tab), searched by typing, sorted threaded, by recent
activity or by match (Ctrl+S), with Ctrl+R to rename, Ctrl+D to delete and Ctrl+P to show paths."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import panel, style
from pi_plugins.interactive.panel import Done, PanelKey
from pi_plugins.interactive.pickers import age

from pi_core.tui.fuzzy import fuzzy_filter

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI

SORTS = ("threaded", "recent", "fuzzy")


@dataclass
class Row:
    info: Any  # SessionInfo
    depth: int = 0


def threaded(infos: list[Any]) -> list[Row]:
    """Newest first, each fork listed under the session it came from."""
    by_path = {str(i.path): i for i in infos}
    children: dict[str, list[Any]] = {}
    roots = []
    for info in infos:
        parent = info.parent_session_path
        if parent and parent in by_path and parent != str(info.path):
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    rows: list[Row] = []
    stack = [(info, 0) for info in sorted(roots, key=lambda i: i.modified)]
    seen: set[str] = set()
    while stack:
        info, depth = stack.pop()
        if str(info.path) in seen:
            continue
        seen.add(str(info.path))
        rows.append(Row(info, depth))
        stack.extend((c, depth + 1) for c in sorted(children.get(str(info.path), []), key=lambda i: i.modified))
    return rows


class ResumePanel(panel.SearchCursor):
    def __init__(self, app: CommandUI, current_file: Path | None) -> None:
        self.app = app
        self.current = current_file
        self.scope = "current"
        self.sort = "threaded"
        self.named_only = False
        self.show_path = False
        self.message = ""
        self.error = ""
        self.infos: list[Any] = []
        self.load()

    @property
    def title(self) -> str:
        return "Resume Session (Current Folder)" if self.scope == "current" else "Resume Session (All)"

    def load(self) -> None:
        from pi_core.sessions.store import list_all_sessions, list_sessions

        store = self.app.session.store
        # the current session is listed too (as Pi): with one session, /resume is not empty
        self.infos = list_sessions(store.cwd, store.session_dir) if self.scope == "current" else list_all_sessions()

    def is_current(self, info: Any) -> bool:
        return self.current is not None and Path(info.path).resolve() == Path(self.current).resolve()

    @property
    def items(self) -> list[Row]:
        infos = [i for i in self.infos if i.name] if self.named_only else list(self.infos)
        if self.query.strip():
            key = lambda i: f"{i.name or ''} {i.first_message} {i.cwd} {i.all_messages_text[:2000]}"
            matched = fuzzy_filter(self.query, infos, key=key)
            if self.sort == "recent":
                matched.sort(key=lambda i: i.modified, reverse=True)
            return [Row(i) for i in matched]
        if self.sort == "threaded":
            return threaded(infos)
        return [Row(i) for i in sorted(infos, key=lambda i: i.modified, reverse=True)]

    def selected(self) -> Any:
        rows = self.items
        return rows[self.index].info if rows else None

    def handle(self, key: PanelKey) -> Done | None:
        rows = self.items
        self.message = self.error = ""
        if key.is_("tui.select.cancel"):
            return self.clear_or_close()
        if key.is_("tui.select.confirm"):
            return Done(("open", self.selected())) if rows else None
        if key.is_("tui.input.tab"):
            self.scope = "all" if self.scope == "current" else "current"
            self.index = 0
            self.load()
        elif key.is_("app.session.toggleSort"):
            self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
            self.index = 0
        elif key.is_("app.session.toggleNamedFilter"):
            self.named_only = not self.named_only
            self.index = 0
        elif key.is_("app.session.togglePath"):
            self.show_path = not self.show_path
        elif key.is_("app.session.rename") and rows:
            return Done(("rename", self.selected()))
        elif rows and (key.is_("app.session.delete") or (key.is_("app.session.deleteNoninvasive") and not self.query)):
            if self.is_current(self.selected()):
                self.error = "Cannot delete the currently active session"
                return None
            return Done(("delete", self.selected()))
        else:
            self.move_or_type(key, len(rows))
        return None

    def lines(self, width: int) -> list[tuple[str, str]]:
        muted, accent = style.pt("muted"), style.pt("accent")
        nameflag = "Named" if self.named_only else "All"
        frags: list[tuple[str, str]] = [
            ("bold", self.title), (muted, f"  sort: {self.sort.capitalize()} · names: {nameflag}\n"),
            *panel.query_line(self.query),
        ]
        rows = self.items
        height = max(3, self.app.screen_rows() - 14)
        for position in panel.visible_window(self.index, len(rows), height):
            row = rows[position]
            info = row.info
            selected = position == self.index
            label = (info.name or info.first_message or "(empty)").replace("\n", " ")
            text = ("› " if selected else "  ") + "  " * row.depth + label
            hint = f"  {age(info.modified)} · {info.message_count} msgs"
            if self.scope == "all":
                hint += f" · {info.cwd}"
            room = max(20, width - min(len(hint), width // 2) - 1)  # the name first, then what fits of the hint
            shown = text if len(text) <= room else text[: room - 1] + "…"
            colour = accent if self.is_current(info) else style.pt("warning") if info.name else ""
            frags.append(((f"bold {colour}" if selected else colour).strip(), shown))
            frags.append((muted, hint[: max(0, width - len(shown) - 1)]))
            frags.append(("", "\n"))
            if self.show_path:
                frags.append((style.pt("dim"), f"    {info.path}"[:width] + "\n"))
        if not rows:
            hint = "  No sessions in current folder. Press Tab to view all." if self.scope == "current" \
                else "  No sessions found"
            frags.append((muted, hint + "\n"))
        elif len(rows) > height:
            frags.append((muted, f"  ({self.index + 1}/{len(rows)})\n"))
        frags.extend(panel.notices(self.message, self.error))
        frags.append((muted, "enter open · tab scope · ctrl+s sort · ctrl+n named · ctrl+r rename · ctrl+d delete"
                             + " · ctrl+p paths · esc close"))
        return frags


async def cmd_resume(ui: CommandUI, args: str) -> None:
    from pi_core.sessions.manager import SessionManager
    from pi_core.sessions.outputs import delete_session

    store = ui.session.store
    if store.session_dir is None:
        ui.notify("Sessions are not saved in this run (--no-session)", "yellow")
        return
    resume = ResumePanel(ui, store.session_file)
    while True:
        answer = await ui.open_panel(resume)
        if answer is None:
            return
        action, info = answer
        path = Path(info.path)
        if action == "open":
            break
        if action == "rename":
            name = await ui.ask("Session name", prefill=info.name or "")
            if name is not None and name.strip():
                SessionManager.open(path).append_session_info(name.strip())
                resume.message = f"Renamed to {name.strip()}"
        elif action == "delete" and await ui.confirm("Delete session", f"Delete {path}? This cannot be undone."):
            delete_session(path)  # with the full outputs its commands left beside it
            resume.message = f"Deleted {path.name}"
        resume.load()
        resume.index = min(resume.index, max(0, len(resume.items) - 1))
    if info.cwd and Path(info.cwd) != Path(ui.session.config.cwd):
        ui.notify(f"This session belongs to {info.cwd}; it continues in {ui.session.config.cwd}", "yellow")
    await ui.control.switch_session(str(path))
    ui.redraw_transcript()
    ui.notify(f"Resumed {path}", "green")
