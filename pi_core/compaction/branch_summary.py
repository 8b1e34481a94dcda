"""``/tree`` navigation inside one session file, with an optional branch summary (docs/sessions.md#tree-navigation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_core.compaction.plan import FileOperations, extract_file_ops
from pi_core.compaction.summarize import (
    Summarize,
    _call,
    format_file_operations,
    serialize_conversation,
)
from pi_core.compaction.tokens import estimate_tokens
from pi_core.sessions.context import entry_message
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry
from pi_core.sessions.messages import (
    Message,
    branch_summary_message,
    compaction_summary_message,
    message_text,
)

if TYPE_CHECKING:
    from pi_core.sessions.manager import SessionManager
    from pi_core.signals import AbortSignal
    from pi_core.types import Model

BRANCH_SUMMARY_PREAMBLE = (
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
)

BRANCH_SUMMARY_PROMPT = """Write a structured summary of this conversation branch, to be read when the user comes back to this work later.

Use exactly this format:

## Goal
[What the user wanted to achieve in this branch]

## Constraints & Preferences
- [Requirements, constraints and preferences stated, or "(none)"]

## Progress
### Done
- [x] [Finished tasks and changes]

### In Progress
- [ ] [Work started but not finished]

### Blocked
- [What prevented progress, if anything]

## Key Decisions
- **[Decision]**: [Short rationale]

## Next Steps
1. [What should happen next to carry this work on]

Keep every section short. Quote file paths, function names and error messages exactly."""

BRANCH_SUMMARY_MAX_TOKENS = 2048


@dataclass
class NavigationResult:
    """``editor_text``: the user text to put back in the editor (target was a user/custom message)."""

    old_leaf_id: str | None
    new_leaf_id: str | None
    editor_text: str | None = None
    summary_entry: Entry | None = None
    cancelled: bool = False


def collect_entries_for_branch_summary(
    manager: SessionManager, old_leaf_id: str | None, target_id: str
) -> tuple[list[Entry], str | None]:
    """Entries from the old leaf back to (not including) the deepest common ancestor, oldest first."""
    if not old_leaf_id:
        return [], None
    old_path = {e["id"] for e in manager.get_branch(old_leaf_id)}
    ancestor = next((e["id"] for e in reversed(manager.get_branch(target_id)) if e["id"] in old_path), None)
    entries: list[Entry] = []
    current: str | None = old_leaf_id
    while current and current != ancestor:
        entry = manager.get_entry(current)
        if entry is None:
            break
        entries.append(entry)
        current = entry.get("parentId")
    entries.reverse()
    return entries, ancestor


def _branch_message(entry: Entry) -> Message | None:
    kind = entry.get("type")
    if kind == "message" and (entry.get("message") or {}).get("role") == "toolResult":
        return None  # the assistant's tool call already says what was done
    if kind == "compaction":
        return compaction_summary_message(entry.get("summary", ""), entry.get("tokensBefore", 0), entry.get("timestamp", ""))
    if kind == "branch_summary":
        return branch_summary_message(entry.get("summary", ""), entry.get("fromId", ""), entry.get("timestamp", ""))
    return entry_message(entry)


def prepare_branch_entries(entries: list[Entry], token_budget: int = 0) -> tuple[list[Message], FileOperations]:
    """Newest-first within ``token_budget`` (0 = no limit); file operations from all entries."""
    ops = FileOperations()
    for entry in entries:
        details = entry.get("details")
        if entry.get("type") == "branch_summary" and not entry.get("fromHook") and isinstance(details, dict):
            ops.read.update(f for f in details.get("readFiles") or [] if isinstance(f, str))
            ops.edited.update(f for f in details.get("modifiedFiles") or [] if isinstance(f, str))
    messages: list[Message] = []
    total = 0
    for entry in reversed(entries):
        message = _branch_message(entry)
        if message is None:
            continue
        extract_file_ops(message, ops)
        tokens = estimate_tokens(message)
        if token_budget > 0 and total + tokens > token_budget:
            if entry.get("type") in ("compaction", "branch_summary") and total < token_budget * 0.9:
                messages.insert(0, message)
            break
        messages.insert(0, message)
        total += tokens
    return messages, ops


async def generate_branch_summary(
    entries: list[Entry],
    model: Model,
    summarize: Summarize,
    *,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    signal: AbortSignal | None = None,
) -> tuple[str, dict[str, list[str]]]:
    """Summary text (preamble + reply + file tags) and its ``details`` for a ``branch_summary`` entry."""
    budget = (getattr(model, "context_window", 0) or 128_000) - reserve_tokens
    messages, ops = prepare_branch_entries(entries, budget)
    if not messages:
        return "No content to summarize", {"readFiles": [], "modifiedFiles": []}
    from pi_core.sessions.messages import convert_to_llm

    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    elif custom_instructions:
        instructions = f"{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: {custom_instructions}"
    else:
        instructions = BRANCH_SUMMARY_PROMPT
    prompt = f"<conversation>\n{serialize_conversation(convert_to_llm(messages))}\n</conversation>\n\n{instructions}"
    reply, _usage = await _call(summarize, model, prompt, BRANCH_SUMMARY_MAX_TOKENS, None, signal,
                                "Summarization failed")
    read_files, modified_files = ops.file_lists()
    summary = BRANCH_SUMMARY_PREAMBLE + reply + format_file_operations(read_files, modified_files)
    return summary, {"readFiles": read_files, "modifiedFiles": modified_files}


async def navigate_tree(
    manager: SessionManager,
    target_id: str,
    *,
    summarize: bool = False,
    model: Model | None = None,
    summarizer: Summarize | None = None,
    reserve_tokens: int = 16384,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    label: str | None = None,
    signal: AbortSignal | None = None,
    summary: tuple[str, Any] | None = None,  # open: a plugin's text and its details, stored in the session JSON
) -> NavigationResult:
    """Move to ``target_id`` in the same file, optionally leaving a summary of the abandoned branch.

    A user (or custom) message target moves the leaf to its parent and returns its text for the
    editor; any other target becomes the leaf. The caller rebuilds the agent's messages afterwards.
    An aborted summary returns ``cancelled=True`` and changes nothing. ``summary`` (text, details) is a
    plugin's branch summary, used instead of generating one.
    """
    from pi_core.errors import AbortedError

    old_leaf = manager.leaf_id
    if target_id == old_leaf:
        return NavigationResult(old_leaf, old_leaf)
    if summarize and summary is None and (model is None or summarizer is None):
        raise SessionError("No model available for summarization")
    target = manager.get_entry(target_id)
    if target is None:
        raise SessionError(f"Entry {target_id} not found")
    entries, _ = collect_entries_for_branch_summary(manager, old_leaf, target_id)

    text: str | None = summary[0] if summary is not None and summarize else None
    details: Any = summary[1] if summary is not None else None
    if summarize and entries and text is None:
        assert model is not None and summarizer is not None
        try:
            text, details = await generate_branch_summary(
                entries, model, summarizer, reserve_tokens=reserve_tokens, custom_instructions=custom_instructions,
                replace_instructions=replace_instructions, signal=signal,
            )
        except AbortedError:
            return NavigationResult(old_leaf, old_leaf, cancelled=True)

    editor_text: str | None = None
    message = target.get("message") if target.get("type") == "message" else None
    if isinstance(message, dict) and message.get("role") == "user":
        new_leaf, editor_text = target.get("parentId"), message_text(message, "")
    elif target.get("type") == "custom_message":
        new_leaf, editor_text = target.get("parentId"), message_text(target, "")
    else:
        new_leaf = target_id

    summary_entry: Entry | None = None
    if text:
        summary_id = manager.branch_with_summary(new_leaf, text, details, summary is not None)
        summary_entry = manager.get_entry(summary_id)
        if label:
            manager.append_label_change(summary_id, label)
    elif new_leaf is None:
        manager.reset_leaf()
    else:
        manager.branch(new_leaf)
    if label and not text:
        manager.append_label_change(target_id, label)
    return NavigationResult(old_leaf, manager.leaf_id, editor_text, summary_entry)
