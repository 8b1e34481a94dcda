"""SessionManager: an append-only tree of entries kept in memory and in one JSONL file (docs/sessions.md)."""

from __future__ import annotations

import builtins
import os
import shutil
from pathlib import Path
from typing import Any

from pi_core.sessions import format as fmt
from pi_core.sessions.branching import BranchingMixin, ForkResult, TreeNode
from pi_core.sessions.context import SessionContext, build_session_context, path_to
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry
from pi_core.sessions.migrate import migrate_records
from pi_core.sessions.store import (
    LoadedFile,
    SessionInfo,
    default_session_dir,
    find_most_recent_session,
    list_all_sessions,
    list_sessions,
    load_file,
    materialize,
    materialize_many,
    write_file_atomically,
)

__all__ = ["ForkResult", "SessionManager", "TreeNode"]

_SUMMARY_ROLES = frozenset({"compactionSummary", "branchSummary"})


class SessionManager(BranchingMixin):
    """The entries of one session, the current leaf, labels and the file they are written to.

    Build one with ``create``, ``open``, ``continue_recent``, ``in_memory`` or ``fork_from``.
    Nothing reaches the disk before the first assistant message; after that every entry is appended
    as one flushed line. Files are never rewritten in place (migration writes a new file and renames
    it over the old one).
    """

    def __init__(
        self,
        cwd: str | Path,
        session_dir: Path | None,
        session_file: Path | None,
        persist: bool,
        _loaded: LoadedFile | None = None,
    ) -> None:
        self._cwd = str(cwd)
        self._session_dir = session_dir
        self._persist = persist
        self._session_file: Path | None = None
        self._session_id = ""
        self._records: builtins.list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._labels: dict[str, str] = {}
        self._leaf_id: str | None = None
        self._written = 0  # how many of _records are on disk
        self._needs_newline = False  # the file ends in a torn line: start our first line on a new one
        self._has_assistant = False
        self._pending: dict[int, str] = {}  # lazily loaded message entries: id(stub) -> line
        self.warnings: builtins.list[str] = []
        if session_file is not None:
            self.set_session_file(session_file, _loaded)
        else:
            self.new_session()

    # --- construction -----------------------------------------------------------------------------

    @classmethod
    def create(cls, cwd: str | Path, session_dir: str | Path | None = None, *,
               session_id: str | None = None) -> SessionManager:
        """A new session for ``cwd`` in ``session_dir`` (default: the cwd's dir under the agent dir),
        with ``session_id`` when given (``--session-id``)."""
        directory = Path(session_dir) if session_dir else default_session_dir(str(cwd))
        manager = cls(cwd, directory, None, True)
        if session_id is not None:
            manager.new_session(id=session_id)
        return manager

    @classmethod
    def open(cls, path: str | Path, session_dir: str | Path | None = None) -> SessionManager:
        """Open a session file (migrating it if old). A missing path becomes a new session at that path."""
        path = Path(path).expanduser().resolve()
        loaded = load_file(path, lazy=True)
        cwd = loaded.records[0].get("cwd") if loaded.records else None
        directory = Path(session_dir) if session_dir else path.parent
        return cls(cwd if isinstance(cwd, str) else os.getcwd(), directory, path, True, loaded)

    @classmethod
    def continue_recent(cls, cwd: str | Path, session_dir: str | Path | None = None) -> SessionManager:
        """The newest valid session in the dir, or a new one."""
        directory = Path(session_dir) if session_dir else default_session_dir(str(cwd))
        recent = find_most_recent_session(directory)
        return cls(cwd, directory, recent, True)

    @classmethod
    def in_memory(cls, cwd: str | Path | None = None, *, session_id: str | None = None) -> SessionManager:
        """A session that behaves the same but never writes anything (``--no-session``)."""
        manager = cls(cwd if cwd is not None else os.getcwd(), None, None, False)
        if session_id is not None:
            manager.new_session(id=session_id)
        return manager

    @classmethod
    def fork_from(
        cls, source_path: str | Path, target_cwd: str | Path, session_dir: str | Path | None = None, *,
        session_id: str | None = None,
    ) -> SessionManager:
        """Copy a whole session (every entry, any project) into a new file for ``target_cwd``."""
        source_path = Path(source_path).expanduser().resolve()
        loaded = load_file(source_path)
        if not loaded.records:
            raise SessionError(f"Cannot fork: source session file is empty or invalid: {source_path}")
        records = loaded.records
        migrate_records(records)  # in memory only: the source file is left as it is
        directory = Path(session_dir) if session_dir else default_session_dir(str(target_cwd))
        session_id = session_id or fmt.uuid7()
        timestamp = fmt.iso_now()
        new_file = directory / f"{fmt.file_timestamp(timestamp)}_{session_id}.jsonl"
        header = fmt.make_header(session_id, timestamp, str(target_cwd), str(source_path))
        write_file_atomically(new_file, [header, *records[1:]])
        manager = cls(target_cwd, directory, new_file, True)
        manager.warnings[:0] = loaded.warnings
        return manager

    @staticmethod
    def list(cwd: str | Path, session_dir: str | Path | None = None) -> list[SessionInfo]:
        return list_sessions(cwd, session_dir)

    @staticmethod
    def list_all() -> builtins.list[SessionInfo]:
        return list_all_sessions()

    # --- file handling ----------------------------------------------------------------------------

    def set_session_file(self, session_file: str | Path, _loaded: LoadedFile | None = None) -> None:
        """Switch to ``session_file``: load (and migrate) it, or start fresh at that exact path."""
        path = Path(session_file).expanduser().resolve()
        loaded = _loaded if _loaded is not None else load_file(path, lazy=True)
        self.warnings.extend(loaded.warnings)
        self._pending = loaded.pending
        if not loaded.exists:
            self.new_session()
            self._session_file = path
            return
        if not loaded.records:
            self._start_over_broken_file(path)
            return
        self._records = loaded.records
        self._session_id = str(self._records[0]["id"])
        self._session_file = path
        version = self._records[0].get("version", 1)
        if migrate_records(self._records):
            # The rewrite drops lines that could not be read: keep the original bytes beside it first.
            backup = path.with_name(f"{path.name}.v{version}-{fmt.file_timestamp(fmt.iso_now())}.bak")
            shutil.copy2(path, backup)
            write_file_atomically(path, self._records)
            self.warnings.append(f"Migrated {path} from session version {version}; the original is kept as {backup}")
            loaded.ends_with_newline = True
        self._needs_newline = not loaded.ends_with_newline
        self._written = len(self._records)
        self._build_index()

    def _start_over_broken_file(self, path: Path) -> None:
        """An empty or header-less file: keep any bytes as a backup, then start a session at that path."""
        if path.stat().st_size > 0:
            backup = path.with_name(path.name + f".corrupt-{fmt.file_timestamp(fmt.iso_now())}")
            os.replace(path, backup)
            self.warnings.append(f"{path} had no valid session header; its content was moved to {backup}")
        self.new_session()
        self._session_file = path
        if self._persist:
            write_file_atomically(path, self._records)
            self._written = len(self._records)

    def new_session(self, id: str | None = None, parent_session: str | None = None) -> Path | None:
        """Start an empty session (new header); returns the new file path (None in memory)."""
        self._session_id = id or fmt.uuid7()
        timestamp = fmt.iso_now()
        self._records = [fmt.make_header(self._session_id, timestamp, self._cwd, parent_session)]
        self._pending = {}
        self._by_id = {}
        self._labels = {}
        self._leaf_id = None
        self._written = 0
        self._needs_newline = False
        self._has_assistant = False
        if self._persist:
            self._session_file = self._new_file_path(timestamp)
        return self._session_file

    def _new_file_path(self, timestamp: str) -> Path:
        directory = self._session_dir if self._session_dir is not None else Path(self._cwd)
        return directory / f"{fmt.file_timestamp(timestamp)}_{self._session_id}.jsonl"

    def _build_index(self) -> None:
        self._by_id = {}
        self._labels = {}
        self._leaf_id = None
        self._has_assistant = False
        for entry in self._records[1:]:
            entry_id = entry.get("id")
            if not isinstance(entry_id, str):
                continue
            self._by_id[entry_id] = entry
            self._leaf_id = entry_id
            kind = entry.get("type")
            if kind == "label":
                self._apply_label(entry.get("targetId"), entry.get("label"))
            elif kind == "message" and not self._has_assistant:
                message = entry.get("message")
                self._has_assistant = isinstance(message, dict) and message.get("role") == "assistant"

    def _apply_label(self, target: Any, label: Any) -> None:
        if not isinstance(target, str):
            return
        if label:
            self._labels[target] = str(label)
        else:
            self._labels.pop(target, None)

    def _flush_pending(self) -> None:
        if not self._persist or self._session_file is None or not self._has_assistant:
            return
        pending = self._records[self._written :]
        if not pending:
            return
        data = "".join(fmt.serialize_line(r) for r in pending)
        if self._needs_newline:
            data = "\n" + data
        self._session_file.parent.mkdir(parents=True, exist_ok=True)
        with open(self._session_file, "a", encoding="utf-8", newline="") as fh:
            fh.write(data)
            fh.flush()
        self._needs_newline = False
        self._written = len(self._records)

    def _append_entry(self, entry: Entry) -> str:
        self._records.append(entry)
        self._by_id[entry["id"]] = entry
        self._leaf_id = entry["id"]
        self._flush_pending()
        return str(entry["id"])

    def _next(self) -> tuple[str, str | None, str]:
        return fmt.new_entry_id(self._by_id), self._leaf_id, fmt.iso_now()

    # --- properties -------------------------------------------------------------------------------

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def session_dir(self) -> Path | None:
        """Where new sessions (``/new``, forks) of this manager go; None for an in-memory session."""
        return self._session_dir

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def session_file(self) -> Path | None:
        return self._session_file

    @property
    def is_persisted(self) -> bool:
        return self._persist

    @property
    def leaf_id(self) -> str | None:
        return self._leaf_id

    @property
    def header(self) -> Entry:
        return self._records[0]

    @property
    def session_name(self) -> str | None:
        """The latest non-empty ``session_info`` name, in file order."""
        for entry in reversed(self._records):
            if entry.get("type") == "session_info" and entry.get("name"):
                return str(entry["name"])
        return None

    def _load(self, entry: Entry) -> Entry:
        return materialize(entry, self._pending) if self._pending else entry

    def _load_many(self, entries: builtins.list[Entry]) -> None:
        if self._pending:
            materialize_many(entries, self._pending)

    def _load_all(self) -> None:
        self._load_many(self._records)

    def leaf_entry(self) -> Entry | None:
        return self.get_entry(self._leaf_id) if self._leaf_id else None

    def get_entry(self, entry_id: str) -> Entry | None:
        entry = self._by_id.get(entry_id)
        return self._load(entry) if entry is not None else None

    def get_entries(self) -> builtins.list[Entry]:
        """Every entry (no header), in file order. The dicts are the session's own: do not modify them."""
        self._load_all()
        return [e for e in self._records[1:] if "id" in e]

    def get_children(self, parent_id: str) -> builtins.list[Entry]:
        return [self._load(e) for e in self._by_id.values() if e.get("parentId") == parent_id]

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def get_branch(self, from_id: str | None = None) -> builtins.list[Entry]:
        """Entries root→``from_id`` (default: the leaf), all types included."""
        start = from_id if from_id is not None else self._leaf_id
        entry = self._by_id.get(start) if start else None
        if entry is None:
            return []
        path = path_to(entry, self._by_id)
        if self._pending:
            materialize_many(path, self._pending)
        return path

    def branch_has_thinking_level(self) -> bool:
        """Whether the current branch records a thinking level (if not, the runtime appends the default)."""
        leaf = self._by_id.get(self._leaf_id) if self._leaf_id else None
        return leaf is not None and any(e.get("type") == "thinking_level_change" for e in path_to(leaf, self._by_id))

    def latest_compaction(self) -> Entry | None:
        """The newest ``compaction`` entry on the current branch (cheap: messages are not parsed)."""
        leaf = self._by_id.get(self._leaf_id) if self._leaf_id else None
        if leaf is None:
            return None
        for entry in reversed(path_to(leaf, self._by_id)):
            if entry.get("type") == "compaction":
                return entry
        return None

    def build_session_context(self) -> SessionContext:
        """The context at the current leaf (only the messages it uses are parsed)."""
        last = [self._records[-1]] if len(self._records) > 1 else []
        return build_session_context(last, self._leaf_id, self._by_id, self._load_many)

    # --- appending --------------------------------------------------------------------------------

    def append_message(self, message: fmt.MessageLike) -> str:
        """Append a user/assistant/toolResult/bashExecution/custom message (dict or pi_core.types model)."""
        data = fmt.message_to_dict(message)
        role = data.get("role")
        if role in _SUMMARY_ROLES:
            raise SessionError(f"{role} messages are stored as their own entries, not as message entries")
        entry_id, parent, now = self._next()
        if role == "assistant":
            self._has_assistant = True
        return self._append_entry(fmt.message_entry(entry_id, parent, now, data))

    def append_thinking_level_change(self, level: str) -> str:
        return self._append_entry(fmt.thinking_level_entry(*self._next(), level))

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append_entry(fmt.model_change_entry(*self._next(), provider, model_id))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,  # open: plugin-defined details, stored in the session JSON
        from_hook: bool | None = None,
        usage: dict[str, Any] | None = None,  # open: the provider's usage numbers, JSON
    ) -> str:
        """``usage``: what generating the summary cost (Usage JSON), counted in the session's totals."""
        entry = fmt.compaction_entry(*self._next(), summary, first_kept_entry_id, tokens_before, details, from_hook,
                                     usage)
        return self._append_entry(entry)

    def append_usage(self, kind: str, provider: str, model: str, usage: dict[str, Any], note: str | None = None,  # open: the provider's usage numbers, JSON
                     ) -> str:
        """Usage that is no message of the context (a cache refresh); it counts in the session's totals."""
        return self._append_entry(fmt.usage_entry(*self._next(), kind, provider, model, usage, note))

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:  # open: plugin-defined data, stored in the session JSON
        return self._append_entry(fmt.custom_entry(*self._next(), custom_type, data))

    def append_custom_message_entry(
        self, custom_type: str, content: str | builtins.list[dict[str, Any]], display: bool, details: Any = None  # open: content blocks and plugin-defined details, stored in the session JSON
    ) -> str:
        entry = fmt.custom_message_entry(*self._next(), custom_type, content, display, details)
        return self._append_entry(entry)

    def append_session_info(self, name: str) -> str:
        return self._append_entry(fmt.session_info_entry(*self._next(), name))

    def append_label_change(self, target_id: str, label: str | None) -> str:
        """Set (or with None/"" clear) the label of an entry."""
        if target_id not in self._by_id:
            raise SessionError(f"Entry {target_id} not found")
        entry_id = self._append_entry(fmt.label_entry(*self._next(), target_id, label or None))
        self._apply_label(target_id, label)
        return entry_id
