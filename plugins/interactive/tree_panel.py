"""/tree: the session tree as Pi shows it. It opens at the current leaf with the ``treeFilterMode`` filter;
typing searches, Ctrl+D/T/U/L/A pick a filter (Ctrl+O cycles), Ctrl+←/→ fold and unfold branch segments,
Shift+L sets or clears a label, Enter continues from the selected entry (asking "Summarize branch?").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pi_plugins.interactive import style
from pi_plugins.interactive.panel import Done, PanelKey, visible_window

from pi_core.sessions.describe import (
    SETTINGS_TYPES,
    describe_entry,
    is_hidden_assistant,
    search_text,
    tool_calls_by_id,
)
from pi_core.sessions.format import Entry

if TYPE_CHECKING:
    from pi_plugins.interactive.commands import CommandUI

TREE_SETTINGS = SETTINGS_TYPES | {"session_info"}  # hidden by the default and no-tools filters
FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
FILTER_KEYS = {"app.tree.filter.default": "default", "app.tree.filter.noTools": "no-tools",
               "app.tree.filter.userOnly": "user-only", "app.tree.filter.labeledOnly": "labeled-only",
               "app.tree.filter.all": "all"}


@dataclass
class Node:
    entry: Entry
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None

    @property
    def id(self) -> str:
        return str(self.entry["id"])


@dataclass
class Row:
    node: Node
    prefix: str


def build_nodes(entries: list[Entry]) -> tuple[dict[str, Node], list[Node]]:
    nodes = {str(e["id"]): Node(e) for e in entries if isinstance(e.get("id"), str)}
    roots = []
    for node in nodes.values():
        parent_id = node.entry.get("parentId")
        parent = nodes.get(parent_id) if isinstance(parent_id, str) and parent_id != node.id else None
        if parent is None:
            roots.append(node)
        else:
            node.parent = parent
            parent.children.append(node)
    for node in nodes.values():
        node.children.sort(key=lambda n: str(n.entry.get("timestamp") or ""))
    return nodes, roots


def path_ids(nodes: dict[str, Node], leaf: str | None) -> set[str]:
    ids: set[str] = set()
    node = nodes.get(leaf or "")
    while node is not None and node.id not in ids:
        ids.add(node.id)
        node = node.parent
    return ids


def depth_first(roots: list[Node], active: set[str]) -> list[Node]:
    """Every node, the branch with the current leaf first at each fork (iterative: chains are deep)."""
    holds: dict[str, bool] = {}
    post: list[Node] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        post.append(node)
        stack.extend(node.children)
    for node in reversed(post):
        holds[node.id] = node.id in active or any(holds.get(c.id, False) for c in node.children)

    def first(nodes: list[Node]) -> list[Node]:
        return sorted(nodes, key=lambda n: not holds.get(n.id, False))

    order: list[Node] = []
    seen: set[str] = set()
    stack = list(reversed(first(roots)))
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        order.append(node)
        stack.extend(reversed(first(node.children)))
    return order


def layout(visible: list[Node]) -> tuple[list[Row], dict[str | None, list[Node]]]:
    """Rows with their ``├─``/``└─``/``│`` prefixes; a hidden node's children hang from its nearest visible
    ancestor. Forks indent their branches one step, single-child chains stay at one indent."""
    shown = {n.id for n in visible}
    kids: dict[str | None, list[Node]] = {None: []}
    for node in visible:
        up = node.parent
        while up is not None and up.id not in shown:
            up = up.parent
        kids.setdefault(up.id if up is not None else None, []).append(node)
    top = kids[None]
    many_roots = len(top) > 1
    rows: list[Row] = []
    # (node, indent, branched, connector, last, gutters, virtual)
    stack: list[tuple[Node, int, bool, bool, bool, tuple[tuple[int, bool], ...], bool]] = [
        (node, 1 if many_roots else 0, many_roots, many_roots, i == len(top) - 1, (), many_roots)
        for i, node in reversed(list(enumerate(top)))
    ]
    while stack:
        node, indent, branched, connector, last, gutters, virtual = stack.pop()
        display = max(0, indent - 1) if many_roots else indent
        drawn = connector and not virtual
        prefix = ""
        for level in range(display):
            gutter = next((line for at, line in gutters if at == level), None)
            if gutter is not None:
                prefix += "│  " if gutter else "   "
            elif drawn and level == display - 1:
                prefix += "└─ " if last else "├─ "
            else:
                prefix += "   "
        rows.append(Row(node, prefix))
        children = kids.get(node.id, [])
        fork = len(children) > 1
        child_indent = indent + 1 if fork or (branched and indent > 0) else indent
        child_gutters = (*gutters, (max(0, display - 1), not last)) if drawn else gutters
        for i in reversed(range(len(children))):
            stack.append((children[i], child_indent, fork, fork, i == len(children) - 1, child_gutters, False))
    return rows, kids


class TreePanel:
    title = "Session tree"

    def __init__(self, app: CommandUI, filter_mode: str = "default", selected: str | None = None) -> None:
        self.app = app
        store = app.session.store
        self.entries: list[Entry] = store.get_entries()
        self.nodes, self.roots = build_nodes(self.entries)
        self.leaf = store.leaf_id
        self.active = path_ids(self.nodes, self.leaf)
        self.order = depth_first(self.roots, self.active)
        self.calls = tool_calls_by_id(self.entries)
        self.labels = {n: store.get_label(n) for n in self.nodes if store.get_label(n)}
        self.filter_mode = filter_mode if filter_mode in FILTERS else "default"
        self.query = ""
        self.folded: set[str] = set()
        self.rows: list[Row] = []
        self.kids: dict[str | None, list[Node]] = {}
        self.index = 0
        self.refresh(selected or self.leaf)

    # --- filtering and layout -----------------------------------------------------------------------

    def passes(self, node: Node) -> bool:
        entry = node.entry
        kind = entry.get("type")
        if kind == "usage" or (node.id != self.leaf and is_hidden_assistant(entry)):
            return False
        message = entry.get("message") if kind == "message" else None
        role = message.get("role") if isinstance(message, dict) else None
        mode = self.filter_mode
        if mode == "user-only":
            ok = role == "user"
        elif mode == "no-tools":
            ok = kind not in TREE_SETTINGS and role != "toolResult"
        elif mode == "labeled-only":
            ok = node.id in self.labels
        elif mode == "all":
            ok = True
        else:
            ok = kind not in TREE_SETTINGS
        if not ok:
            return False
        words = self.query.lower().split()
        text = search_text(entry, self.labels.get(node.id), self.calls)
        return all(word in text for word in words)

    def refresh(self, keep: str | None = None) -> None:
        keep = keep or (self.rows[self.index].node.id if self.rows else None)
        visible = [n for n in self.order if self.passes(n)]
        rows, kids = layout(visible)
        hidden: set[str] = set()
        for folded in self.folded:  # a folded segment hides everything below it
            stack = list(kids.get(folded, []))
            while stack:
                node = stack.pop()
                hidden.add(node.id)
                stack.extend(kids.get(node.id, []))
        self.rows = [row for row in rows if row.node.id not in hidden]
        self.kids = kids
        positions = {row.node.id: i for i, row in enumerate(self.rows)}
        anchor: Node | None = self.nodes.get(keep or "")
        while anchor is not None and anchor.id not in positions:  # the nearest shown ancestor
            anchor = anchor.parent
        last = max(0, len(self.rows) - 1)
        self.index = positions.get(anchor.id, last) if anchor is not None else last

    def _parent_of(self, node_id: str) -> str | None:
        return next((parent for parent, children in self.kids.items() if any(c.id == node_id for c in children)), None)

    def foldable(self, node_id: str) -> bool:
        if not self.kids.get(node_id):
            return False
        parent = self._parent_of(node_id)
        return parent is None or len(self.kids.get(parent, [])) > 1

    def segment_start(self, down: bool) -> None:
        positions = {row.node.id: i for i, row in enumerate(self.rows)}
        current = self.rows[self.index].node.id
        if down:
            while True:
                children = [c for c in self.kids.get(current, []) if c.id in positions]
                if not children:
                    break
                if len(children) > 1:
                    current = children[0].id
                    break
                current = children[0].id
        else:
            parent = self._parent_of(current)
            while parent is not None and len(self.kids.get(parent, [])) <= 1:
                current, parent = parent, self._parent_of(parent)
            if parent is not None and current == self.rows[self.index].node.id:
                current = parent  # already at a segment start: go to the fork above
        self.index = positions.get(current, self.index)

    # --- keys and drawing ---------------------------------------------------------------------------

    def selected(self) -> str | None:
        return self.rows[self.index].node.id if self.rows else None

    def handle(self, key: PanelKey) -> Done | None:
        count = len(self.rows)
        for action, mode in FILTER_KEYS.items():
            if key.is_(action):
                self.filter_mode = "default" if mode == self.filter_mode and mode != "default" else mode
                self.folded.clear()
                self.refresh()
                return None
        if key.is_("app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"):
            step = 1 if key.is_("app.tree.filter.cycleForward") else -1
            self.filter_mode = FILTERS[(FILTERS.index(self.filter_mode) + step) % len(FILTERS)]
            self.folded.clear()
            self.refresh()
        elif key.is_("tui.select.confirm"):
            return Done(("select", self.selected())) if self.rows else None
        elif key.is_("tui.select.cancel"):
            if self.query:
                self.query = ""
                self.folded.clear()
                self.refresh()
                return None
            return Done(None)
        elif key.is_("app.tree.editLabel"):
            node = self.selected()
            return Done(("label", node)) if node else None
        elif key.is_("app.tree.foldOrUp") and count:
            node = self.selected()
            if node and self.foldable(node) and node not in self.folded:
                self.folded.add(node)
                self.refresh(node)
            else:
                self.segment_start(down=False)
        elif key.is_("app.tree.unfoldOrDown") and count:
            node = self.selected()
            if node in self.folded:
                self.folded.discard(node)
                self.refresh(node)
            else:
                self.segment_start(down=True)
        elif key.is_("tui.select.up") and count:
            self.index = (self.index - 1) % count
        elif key.is_("tui.select.down") and count:
            self.index = (self.index + 1) % count
        elif key.is_("tui.select.pageUp") or key.name == "left":
            self.index = max(0, self.index - self.page())
        elif key.is_("tui.select.pageDown") or key.name == "right":
            self.index = min(max(0, count - 1), self.index + self.page())
        elif key.backspace:
            if self.query:
                self.query = self.query[:-1]
                self.folded.clear()
                self.refresh()
        elif key.text:
            self.query += key.text
            self.folded.clear()
            self.refresh()
        return None

    def page(self) -> int:
        return max(3, self.app.screen_rows() - 12)

    def lines(self, width: int) -> list[tuple[str, str]]:
        muted = style.pt("muted")
        hint = "  enter continue from here · shift+l label · ctrl+←/→ fold · type to search\n"
        frags: list[tuple[str, str]] = [("bold", "Session tree"), (muted, hint)]
        if not self.rows:
            return [*frags, (muted, "  No entries found\n"), (muted, f"  (0/0){self.status()}")]
        height = self.page()
        for position in visible_window(self.index, len(self.rows), height):
            row = self.rows[position]
            node = row.node
            selected = position == self.index
            line: list[tuple[str, str]] = [(style.pt("accent") if selected else "", "› " if selected else "  "),
                                           (style.pt("dim"), row.prefix)]
            if node.id in self.folded:
                line.append((style.pt("accent"), "⊞ "))
            if node.id in self.active:
                line.append((style.pt("accent"), "• "))
            if node.id in self.labels:
                line.append((style.pt("warning"), f"[{self.labels[node.id]}] "))
            for piece in describe_entry(node.entry, self.calls, limit=None, home=None):
                line.append((style.pt(piece.style) if piece.style != "text" else "", piece.text))
            frags += _clip(line, width, selected)
            frags.append(("", "\n"))
        frags.append((muted, f"  ({self.index + 1}/{len(self.rows)}){self.status()}"))
        return frags

    def status(self) -> str:
        parts = [] if self.filter_mode == "default" else [f" [filter: {self.filter_mode}]"]
        if self.query:
            parts.append(f" [search: {self.query}]")
        return "".join(parts)


def _clip(line: list[tuple[str, str]], width: int, bold: bool) -> list[tuple[str, str]]:
    out, used = [], 0
    for piece_style, text in line:
        text = text.replace("\n", " ").replace("\t", " ")
        room = width - 1 - used
        if room <= 0:
            break
        if len(text) > room:
            text = text[: max(0, room - 1)] + "…"
        out.append(((piece_style + " bold") if bold else piece_style, text))
        used += len(text)
    return out


async def cmd_tree(ui: CommandUI, args: str) -> None:
    store = ui.session.store
    if not store.get_entries():
        ui.notify("No entries in session", "yellow")
        return
    mode, selected = str(ui.setting("treeFilterMode", "default")), None
    while True:
        panel = TreePanel(ui, mode, selected)
        answer = await ui.open_panel(panel)
        if answer is None:
            return
        action, entry_id = answer
        mode, selected = panel.filter_mode, entry_id
        if action == "label":
            current = store.get_label(entry_id) or ""
            text = await ui.ask("Label (empty to remove):", prefill=current)
            if text is not None and text.strip() != current:
                store.append_label_change(entry_id, text.strip() or None)
            continue
        if entry_id == store.leaf_id:
            ui.notify("Already at this point", "dim")
            return
        if await navigate(ui, entry_id):
            return


async def navigate(ui: CommandUI, entry_id: str) -> bool:
    """Continue from ``entry_id``; False when the user backs out to the tree."""
    from pi_plugins.interactive.pickers import PickItem

    from pi_core.compaction.branch_summary import navigate_tree

    summarize, instructions = False, None
    if ui.setting("branchSummary.skipPrompt", False) is not True:
        while True:
            choice = await ui.pick("Summarize branch?", [PickItem("No summary", "no"), PickItem("Summarize", "yes"),
                                                         PickItem("Summarize with custom prompt", "custom")])
            if choice is None:
                return False
            summarize = choice != "no"
            if choice == "custom":
                instructions = await ui.ask("Custom summarization instructions")
                if instructions is None:
                    continue
            break
    session = ui.session
    if session.is_streaming:
        await ui.abort()
    compactor = getattr(session, "compactor", None)
    if summarize:
        ui.set_hint("Summarizing the branch… (esc to cancel)")
    try:
        if compactor is not None:  # through the session: plugins may veto or summarise (pi_session_before_tree)
            result = await session.navigate_tree(entry_id, summarize=summarize,
                                                  custom_instructions=instructions or None)
        else:
            result = await navigate_tree(session.store, entry_id, summarize=False, model=session.model)
    finally:
        ui.set_hint(None)
    if result is None or result.cancelled:
        ui.notify("Branch summarization cancelled" if summarize else "Navigation cancelled", "yellow")
        return False
    session.agent.state.messages = session.store.build_session_context().typed_messages()
    ui.redraw_transcript()
    if result.editor_text and not ui.buffer.text.strip():
        ui.set_editor_text(result.editor_text)
    ui.notify("Navigated to selected point" + (" (branch summarized)" if result.summary_entry else ""), "green")
    return True
