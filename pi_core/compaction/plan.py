"""Compaction planning: where to cut the branch, what to summarise, which files were touched
(docs/sessions.md#preparation).

Pure functions over the entries of the current branch (root→leaf). ``summarize.py`` turns a
``CompactionPreparation`` into a summary; ``auto.py`` decides when and applies the result.
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_core.compaction.tokens import estimate_context_tokens, estimate_tokens
from pi_core.hookspecs.results import CompactionPreparation, CompactionResult
from pi_core.sessions.context import entry_message
from pi_core.sessions.format import Entry
from pi_core.sessions.messages import Message, compaction_summary_message, to_typed
from pi_core.types import CompactionSettings, FileOperations

__all__ = ["CompactionPreparation", "CompactionResult", "CompactionSettings", "CutPoint", "FileOperations",
           "extract_file_ops", "find_cut_point", "latest_compaction", "prepare_compaction"]

_CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})


@dataclass
class CutPoint:
    first_kept_entry_index: int
    turn_start_index: int  # -1 unless the cut splits a turn
    is_split_turn: bool


def _summary_aware_message(entry: Entry) -> Message | None:
    """Like ``entry_message`` but a compaction entry counts as its summary message."""
    if entry.get("type") == "compaction":
        return compaction_summary_message(
            entry.get("summary", ""), entry.get("tokensBefore", 0), entry.get("timestamp", "")
        )
    if entry.get("type") == "branch_summary":
        from pi_core.sessions.messages import branch_summary_message

        return branch_summary_message(entry.get("summary", ""), entry.get("fromId", ""), entry.get("timestamp", ""))
    return entry_message(entry)


def _role(entry: Entry) -> str | None:
    message = entry.get("message") if entry.get("type") == "message" else None
    return message.get("role") if isinstance(message, dict) else None


def find_valid_cut_points(entries: list[Entry], start: int, end: int) -> list[int]:
    """Indices where the kept part may begin: never a tool result, so it stays with its call."""
    points = []
    for index in range(start, end):
        entry = entries[index]
        if entry.get("type") in ("branch_summary", "custom_message") or _role(entry) in _CUT_ROLES:
            points.append(index)
    return points


def find_turn_start_index(entries: list[Entry], index: int, start: int) -> int:
    """The user/bashExecution message (or custom_message/branch_summary) opening the turn at ``index``; -1 if none."""
    for i in range(index, start - 1, -1):
        entry = entries[i]
        if entry.get("type") in ("branch_summary", "custom_message") or _role(entry) in ("user", "bashExecution"):
            return i
    return -1


def find_cut_point(entries: list[Entry], start: int, end: int, keep_recent_tokens: int) -> CutPoint:
    """Keep roughly ``keep_recent_tokens`` of the newest messages in ``entries[start:end]``."""
    points = find_valid_cut_points(entries, start, end)
    if not points:
        return CutPoint(start, -1, False)
    cut = points[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":
            continue
        accumulated += estimate_tokens(entry.get("message") or {})
        if accumulated >= keep_recent_tokens:
            cut = next((p for p in points if p >= i), cut)
            break
    # Settings changes and other non-message entries just before the cut stay with the kept part.
    while cut > start:
        previous = entries[cut - 1]
        if previous.get("type") in ("compaction", "message"):
            break
        cut -= 1
    is_user = _role(entries[cut]) == "user"
    turn_start = -1 if is_user else find_turn_start_index(entries, cut, start)
    return CutPoint(cut, turn_start, not is_user and turn_start != -1)


def extract_file_ops(message: Message, ops: FileOperations) -> None:
    """Record read/write/edit tool calls (string ``path`` argument) of an assistant message."""
    if message.get("role") != "assistant":
        return
    for block in message.get("content") or []:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        arguments = block.get("arguments")
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            continue
        name = block.get("name")
        if name == "read":
            ops.read.add(path)
        elif name == "write":
            ops.written.add(path)
        elif name == "edit":
            ops.edited.add(path)


def _messages(entries: list[Entry], start: int, end: int) -> list[Message]:
    out = []
    for entry in entries[start:end]:
        message = _summary_aware_message(entry)
        if message is not None:
            out.append(message)
    return out


def prepare_compaction(path: list[Entry], settings: CompactionSettings) -> CompactionPreparation | None:
    """Plan a compaction of the branch ``path``; None when there is nothing to do."""
    if not path or path[-1].get("type") == "compaction":
        return None
    previous = next((i for i in range(len(path) - 1, -1, -1) if path[i].get("type") == "compaction"), -1)
    start, end = previous + 1, len(path)
    tokens_before = estimate_context_tokens(_messages(path, max(previous, 0), end)).tokens

    cut = find_cut_point(path, start, end, settings.keep_recent_tokens)
    first_kept = path[cut.first_kept_entry_index] if cut.first_kept_entry_index < len(path) else None
    if first_kept is None or not first_kept.get("id"):
        return None
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages(path, start, history_end)
    prefix = _messages(path, cut.turn_start_index, cut.first_kept_entry_index) if cut.is_split_turn else []

    ops = FileOperations()
    previous_summary: str | None = None
    if previous >= 0:
        compaction = path[previous]
        previous_summary = compaction.get("summary")
        details = compaction.get("details")
        if not compaction.get("fromHook") and isinstance(details, dict):
            if isinstance(details.get("readFiles"), list):
                ops.read.update(f for f in details["readFiles"] if isinstance(f, str))
            if isinstance(details.get("modifiedFiles"), list):
                ops.edited.update(f for f in details["modifiedFiles"] if isinstance(f, str))
    for message in [*to_summarize, *prefix]:
        extract_file_ops(message, ops)

    return CompactionPreparation(
        first_kept_entry_id=first_kept["id"],
        messages_to_summarize=to_typed(to_summarize),  # typed at the boundary: plugins see these
        turn_prefix_messages=to_typed(prefix),
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=ops,
        settings=settings,
    )


def latest_compaction(entries: list[Entry]) -> Entry | None:
    for entry in reversed(entries):
        if entry.get("type") == "compaction":
            return entry
    return None
