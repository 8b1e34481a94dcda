"""Where session files live, how they are read, and how the newest/matching ones are found."""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_core.config_paths import agent_dir, sessions_dir
from pi_core.sessions.format import Entry, ms_from_iso, serialize_line
from pi_core.sessions.jsonfmt import js_loads
from pi_core.sessions.messages import message_text

log = logging.getLogger("pi.sessions")

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


def encode_cwd(cwd: str) -> str:
    """``/home/u/my-proj`` → ``--home-u-my-proj--``; ``C:\\work\\app`` → ``--C--work-app--``."""
    stripped = re.sub(r"^[/\\]", "", cwd)
    return "--" + re.sub(r"[/\\:]", "-", stripped) + "--"


def default_session_dir(cwd: str | Path) -> Path:
    return sessions_dir() / encode_cwd(str(cwd))


def resolve_session_dir(cwd: str | Path, cli_dir: str | None = None, setting: str | None = None) -> Path:
    """Effective session dir: ``--session-dir``, then ``PI_CODING_AGENT_SESSION_DIR``, then setting
    ``sessionDir`` (``~`` expanded in both), else ``<agentDir>/sessions/<encoded cwd>``."""
    if cli_dir:
        return Path(cli_dir).expanduser().resolve()
    env = os.environ.get(SESSION_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    if setting:
        path = Path(setting).expanduser()
        return (path if path.is_absolute() else Path(cwd) / path).resolve()
    return default_session_dir(str(cwd))


# The fixed prefix Pi (and pi) writes for message entries. Such lines can wait to be parsed until
# their message is needed: a long session only needs the messages after its latest compaction. Compiled
# when a file is first read (a new session never needs it).
_MESSAGE_PREFIX = (
    r'\{"type":"message","id":"([^"\\]+)","parentId":(?:null|"([^"\\]+)"),"timestamp":"([^"\\]*)",'
    r'"message":\{"role":"([^"\\]+)"'
)


@dataclass(eq=False, repr=False)
class LoadedFile:
    """Records parsed from a session file: ``records[0]`` is the header when the file is valid.

    With lazy loading, message entries may be stubs ``{type, id, parentId, timestamp, message: {role}}``
    whose full line is in ``pending`` (keyed by ``id(stub)``) until ``materialize`` is called.
    """

    records: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ends_with_newline: bool = True
    exists: bool = False
    pending: dict[int, str] = field(default_factory=dict)


def materialize(entry: Entry, pending: dict[int, str]) -> Entry:
    """Replace a stub's content by its fully parsed line, in place (the dict keeps its identity)."""
    line = pending.pop(id(entry), None)
    if line is not None:
        try:
            full = js_loads(line)
        except (json.JSONDecodeError, ValueError):
            log.warning("Skipped an unreadable session entry %s", entry.get("id"))
            entry.pop("message", None)
            return entry
        _fill(entry, full)
    return entry


def _fill(entry: Entry, full: Entry) -> None:
    """A stub's links may have been repaired at load (``relink``): they win over the line's own."""
    links: dict[str, Any] = {key: entry[key] for key in ("id", "parentId") if key in entry}
    entry.clear()
    entry.update(full)
    entry.update(links)


def materialize_many(entries: list[Entry], pending: dict[int, str]) -> None:
    """``materialize`` for many entries, parsing their lines in one pass (much faster than one by one)."""
    stubs = [e for e in entries if id(e) in pending]
    if len(stubs) < 2:
        for entry in stubs:
            materialize(entry, pending)
        return
    try:
        parsed = js_loads("[" + ",".join(pending[id(e)] for e in stubs) + "]")
    except (json.JSONDecodeError, ValueError):
        for entry in stubs:  # one bad line: find it the slow way
            materialize(entry, pending)
        return
    for entry, full in zip(stubs, parsed, strict=True):
        del pending[id(entry)]
        _fill(entry, full)


def _parse_lines(
    text: str, path: Path, warnings: list[str], pending: dict[int, str] | None = None,
    numbers: dict[int, int] | None = None,
) -> list[Entry]:
    """The records of ``text``; ``numbers`` gets ``id(record) -> line number`` (1-based)."""
    numbers = {} if numbers is None else numbers
    records: list[Entry] = []
    lines = text.split("\n")
    last_content = len(lines) - 1
    while last_content >= 0 and not lines[last_content].strip():
        last_content -= 1
    prefix = re.compile(_MESSAGE_PREFIX)
    for index, line in enumerate(lines):
        if pending is not None and index and index != last_content:
            match = prefix.match(line)
            if match and line.endswith("}"):
                entry_id, parent_id, timestamp, role = match.groups()
                stub = {"type": "message", "id": entry_id, "parentId": parent_id, "timestamp": timestamp,
                        "message": {"role": role}}
                pending[id(stub)] = line
                numbers[id(stub)] = index + 1
                records.append(stub)
                continue
        if not line.strip():
            continue
        try:
            record = js_loads(line)
        except (json.JSONDecodeError, ValueError):
            if index == last_content and not text.endswith("\n"):
                warnings.append(
                    f"Skipped a truncated last line in {path} (line {index + 1}); the session continues without it"
                )
            else:
                warnings.append(f"Skipped an unreadable line in {path} (line {index + 1})")
            continue
        if isinstance(record, dict):
            numbers[id(record)] = index + 1
            records.append(record)
        else:
            warnings.append(f"Skipped a line that is not a JSON object in {path} (line {index + 1})")
    return records


def load_file(path: str | Path, lazy: bool = False) -> LoadedFile:
    """Parse a session file. Missing, empty or header-less files give no records.

    ``lazy`` leaves message entries of current-version files as stubs (see ``LoadedFile``).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LoadedFile()
    text = data.decode("utf-8", errors="replace")
    loaded = LoadedFile(exists=True, ends_with_newline=(not data or data.endswith(b"\n")))
    if lazy and not _is_current_version(text):
        lazy = False  # migration rewrites messages, so they must all be parsed
    numbers: dict[int, int] = {}
    records = _parse_lines(text, path, loaded.warnings, loaded.pending if lazy else None, numbers)
    if records and is_header(records[0]):
        relink(records, numbers, path, loaded.warnings)
        loaded.records = records
    elif records:
        loaded.warnings.append(f"{path} does not start with a session header; treating it as empty")
    for warning in loaded.warnings:
        log.debug(warning)  # the caller shows them (once); a log warning would print them a second time
    return loaded


def _explain_skip(warnings: list[str], path: Path, after: int, before: int, where: str) -> bool:
    """A parent lost with a skipped line: say so in that line's warning instead of adding a second one."""
    for index, text in enumerate(warnings):
        prefix = f"Skipped an unreadable line in {path} (line "
        if text.startswith(prefix) and text.endswith(")"):
            skipped = int(text[len(prefix):-1])
            if after < skipped < before:
                warnings[index] = f"{text}; the entries after it now follow the one before it ({where})"
                return True
    return False


def relink(records: list[Entry], numbers: dict[int, int], path: Path, warnings: list[str]) -> None:
    """Rebuild the best tree a damaged file allows (docs/sessions.md#damaged-files), in file order: an entry
    whose id repeats an earlier one gets ``{id}-L{line}`` (later references follow the newest), and an
    entry whose parent is not in the file (a skipped line, a hand edit) is re-linked to the entry before
    it. One warning per problem, naming the file and line."""
    current: dict[str, str] = {}  # id as written -> the id it now stands for (the newest entry with it)
    known: set[str] = set()
    previous: Entry | None = None
    for record in records[1:]:
        entry_id = record.get("id")
        if not isinstance(entry_id, str):
            continue
        line = numbers.get(id(record), 0)
        if entry_id in known:
            renamed = f"{entry_id}-L{line}"
            warnings.append(f"Entry id {entry_id} in {path} (line {line}) repeats an earlier entry's; "
                            f"both are kept, this one as {renamed}")
            record["id"] = renamed
            current[entry_id] = renamed
            entry_id = renamed
        parent = record.get("parentId")
        if isinstance(parent, str):
            target = current.get(parent, parent)
            if target not in known:
                before = previous.get("id") if previous is not None else None
                after_line = numbers.get(id(previous), 0) if previous is not None else 0
                where = f"line {after_line}" if previous is not None else "the start"
                if not _explain_skip(warnings, path, after_line, line, where):
                    warnings.append(f"Entry {entry_id} in {path} (line {line}) names a parent that is not in the "
                                    f"file ({parent}); it now follows the entry before it ({where})")
                target = before  # type: ignore[assignment]
            record["parentId"] = target
        known.add(entry_id)
        current[entry_id] = entry_id
        previous = record


def write_file_atomically(path: Path, records: list[Entry]) -> None:
    """Write a whole file through a temporary sibling and an atomic rename: never half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write("".join(serialize_line(r) for r in records))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _is_current_version(text: str) -> bool:
    from pi_core.sessions.format import CURRENT_SESSION_VERSION

    try:
        header = js_loads(text.split("\n", 1)[0])
    except (json.JSONDecodeError, ValueError):
        return False
    version = header.get("version") if isinstance(header, dict) else None
    return isinstance(version, int) and version >= CURRENT_SESSION_VERSION


def load_entries_from_file(path: str | Path) -> list[Entry]:
    """Header plus entries of a file, or ``[]`` when it is missing, empty or has no valid header."""
    return load_file(path).records


def is_header(record: object) -> bool:
    return isinstance(record, dict) and record.get("type") == "session" and isinstance(record.get("id"), str)


def read_header(path: str | Path) -> Entry | None:
    """The header from the first 512 bytes of a file, or None if it is not a valid session file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return None
    first = head.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    try:
        record = js_loads(first)
    except (json.JSONDecodeError, ValueError):
        return None
    return record if is_header(record) else None


def find_most_recent_session(session_dir: str | Path) -> Path | None:
    """Newest (by mtime) ``*.jsonl`` in the dir with a valid header, or None."""
    best: tuple[float, Path] | None = None
    try:
        candidates = list(Path(session_dir).iterdir())
    except OSError:
        return None
    for path in candidates:
        if path.suffix != ".jsonl" or not path.is_file() or read_header(path) is None:
            continue
        mtime = path.stat().st_mtime
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return best[1] if best else None


@dataclass(eq=False, repr=False)
class SessionInfo:
    """One session for a picker or ``list``. Times are Unix ms."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: int
    modified: int
    message_count: int
    first_message: str
    all_messages_text: str


def session_info(path: str | Path) -> SessionInfo | None:
    """Summary of one file, or None when it is not a session file."""
    path = Path(path)
    records = _parse_lines(path.read_text(encoding="utf-8", errors="replace"), path, []) if path.is_file() else []
    if not records or records[0].get("type") != "session":
        return None
    header = records[0]
    name: str | None = None
    count = 0
    first = ""
    texts: list[str] = []
    last_activity = 0
    for entry in records[1:]:
        kind = entry.get("type")
        if kind == "session_info" and entry.get("name"):
            name = str(entry["name"]).strip()
        if kind != "message":
            continue
        count += 1
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant") or "content" not in message:
            continue
        stamp = message.get("timestamp")
        if not isinstance(stamp, (int, float)):
            stamp = ms_from_iso(str(entry.get("timestamp", ""))) or 0
        last_activity = max(last_activity, int(stamp))
        text = message_text(message, " ")
        if not text:
            continue
        texts.append(text)
        if not first and message.get("role") == "user":
            first = text
    created = ms_from_iso(str(header.get("timestamp", ""))) or 0
    modified = last_activity or created or int(path.stat().st_mtime * 1000)
    return SessionInfo(
        path=path,
        id=str(header.get("id", "")),
        cwd=header["cwd"] if isinstance(header.get("cwd"), str) else "",
        name=name,
        parent_session_path=header.get("parentSession"),
        created=created,
        modified=modified,
        message_count=count,
        first_message=first or "(no messages)",
        all_messages_text=" ".join(texts),
    )


def _list_dir(directory: Path) -> list[SessionInfo]:
    try:
        files = [p for p in directory.iterdir() if p.suffix == ".jsonl"]
    except OSError:
        return []
    infos = []
    for path in files:
        try:
            info = session_info(path)
        except OSError as err:
            log.warning("Could not read session %s: %s", path, err)
            continue
        if info is not None:
            infos.append(info)
    return infos


def list_sessions(cwd: str | Path, session_dir: str | Path | None = None) -> list[SessionInfo]:
    """Sessions of one project (or of ``session_dir``), newest activity first."""
    directory = Path(session_dir) if session_dir else default_session_dir(str(cwd))
    infos = _list_dir(directory)
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def list_all_sessions() -> list[SessionInfo]:
    """Sessions of every project under ``<agentDir>/sessions``, newest activity first."""
    root = sessions_dir()
    infos: list[SessionInfo] = []
    try:
        dirs = [d for d in root.iterdir() if d.is_dir()]
    except OSError:
        return []
    for directory in dirs:
        infos.extend(_list_dir(directory))
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def migrate_stray_sessions(directory: Path | None = None) -> list[Path]:
    """Startup migration: ``*.jsonl`` session files lying directly in the agent dir move to
    ``sessions/<encoded cwd>/`` (by their header's cwd). Existing targets are left alone."""
    base = directory or agent_dir()
    moved: list[Path] = []
    try:
        candidates = [p for p in base.iterdir() if p.suffix == ".jsonl" and p.is_file()]
    except OSError:
        return moved
    for path in candidates:
        header = read_header(path)
        cwd = header.get("cwd") if header else None
        if not isinstance(cwd, str):
            continue
        target = base / "sessions" / encode_cwd(cwd) / path.name
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        moved.append(target)
    return moved
