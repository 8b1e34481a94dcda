"""Moving the leaf, drawing the tree and copying a branch into a new session (docs/sessions.md#tree-and-branches).

``BranchingMixin`` is part of ``SessionManager``; it lives here to keep the manager module short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.sessions import format as fmt
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry
from pi_core.sessions.messages import message_text
from pi_core.sessions.store import write_file_atomically


@dataclass(eq=False, repr=False)
class TreeNode:
    """One entry of the session tree and its children."""

    entry: Entry
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None


@dataclass(eq=False, repr=False)
class ForkResult:
    """Outcome of ``fork``: the user text to put back in the editor and the new file (None in memory)."""

    selected_text: str
    session_file: Path | None


class BranchingMixin:
    """Branch operations over the manager's entry index (see ``SessionManager`` for the attributes)."""

    _by_id: dict[str, Entry]
    _labels: dict[str, str]
    _records: list[Entry]
    _pending: dict[int, str]
    _leaf_id: str | None
    _session_id: str
    _session_file: Path | None
    _persist: bool
    _cwd: str
    _written: int
    _needs_newline: bool
    _has_assistant: bool

    if TYPE_CHECKING:

        def get_entries(self) -> list[Entry]: ...
        def get_entry(self, entry_id: str) -> Entry | None: ...
        def get_branch(self, from_id: str | None = None) -> list[Entry]: ...
        def new_session(self, id: str | None = None, parent_session: str | None = None) -> Path | None: ...
        def _append_entry(self, entry: Entry) -> str: ...
        def _build_index(self) -> None: ...
        def _new_file_path(self, timestamp: str) -> Path: ...

    def get_tree(self) -> list[TreeNode]:
        """Roots of the entry tree; children oldest first; orphans (missing or self parent) are roots."""
        nodes = {e["id"]: TreeNode(e, [], self._labels.get(e["id"])) for e in self.get_entries()}
        roots: list[TreeNode] = []
        for entry_id, node in nodes.items():
            parent_id = node.entry.get("parentId")
            parent = nodes.get(parent_id) if parent_id and parent_id != entry_id else None
            (parent.children if parent else roots).append(node)
        stack = list(roots)
        while stack:
            node = stack.pop()
            node.children.sort(key=lambda n: fmt.ms_from_iso(str(n.entry.get("timestamp", ""))) or 0)
            stack.extend(node.children)
        return roots

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append starts a new branch there."""
        if entry_id not in self._by_id:
            raise SessionError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Leaf before the first entry: the next append becomes a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self, entry_id: str | None, summary: str, details: Any = None, from_hook: bool | None = None  # open: plugin-defined details, stored in the session JSON
    ) -> str:
        """Move the leaf to ``entry_id`` (None = root) and append a ``branch_summary`` there."""
        if entry_id is not None and entry_id not in self._by_id:
            raise SessionError(f"Entry {entry_id} not found")
        self._leaf_id = entry_id
        new_id = fmt.new_entry_id(self._by_id)
        entry = fmt.branch_summary_entry(
            new_id, entry_id, fmt.iso_now(), entry_id or "root", summary, details, from_hook
        )
        return self._append_entry(entry)

    def create_branched_session(self, leaf_id: str) -> Path | None:
        """Make this manager a new session holding only the path root→``leaf_id`` (labels re-created).

        Returns the new file (None in memory). The file is written now only if the path holds an
        assistant message; otherwise with the first assistant reply, like any new session.
        """
        previous_file = self._session_file
        path = self.get_branch(leaf_id)
        if not path:
            raise SessionError(f"Entry {leaf_id} not found")
        kept = [e for e in path if e.get("type") != "label"]
        kept_ids = {e["id"] for e in kept}
        labels = [(target, label) for target, label in self._labels.items() if target in kept_ids]

        session_id = fmt.uuid7()
        timestamp = fmt.iso_now()
        parent_session = str(previous_file) if self._persist and previous_file else None
        header = fmt.make_header(session_id, timestamp, self._cwd, parent_session)
        taken = set(kept_ids)
        parent = kept[-1]["id"] if kept else None
        label_entries: list[Entry] = []
        for target, label in labels:
            entry = fmt.label_entry(fmt.new_entry_id(taken), parent, fmt.iso_now(), target, label)
            taken.add(entry["id"])
            label_entries.append(entry)
            parent = entry["id"]

        self._records = [header, *kept, *label_entries]
        self._pending = {}  # the kept path is fully loaded; stubs that were dropped must not be looked up again
        self._session_id = session_id
        self._build_index()
        self._written = 0
        self._needs_newline = False
        if not self._persist:
            return None
        self._session_file = self._new_file_path(timestamp)
        if self._has_assistant:
            write_file_atomically(self._session_file, self._records)
            self._written = len(self._records)
        return self._session_file

    def fork(self, entry_id: str) -> ForkResult:
        """``/fork``: a new session ending just before the user message ``entry_id``; returns its text."""
        entry = self.get_entry(entry_id)
        message = entry.get("message") if entry and entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "user":
            raise SessionError("Invalid entry ID for forking")
        text = message_text(message, "")
        previous_file = self._session_file
        parent_id = entry.get("parentId") if entry else None
        if parent_id and parent_id in self._by_id:
            new_file = self.create_branched_session(parent_id)
        else:
            new_file = self.new_session(parent_session=str(previous_file) if self._persist and previous_file else None)
            if not self._persist:
                new_file = None
        return ForkResult(text, new_file)

    def clone(self, entry_id: str | None = None) -> Path | None:
        """``/clone``: a new session holding the path root→``entry_id`` (default: the leaf), inclusive."""
        target = entry_id if entry_id is not None else self._leaf_id
        if target is None:
            raise SessionError("Cannot clone session: no current entry selected")
        return self.create_branched_session(target)
