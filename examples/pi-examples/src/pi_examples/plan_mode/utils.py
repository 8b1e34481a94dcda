"""plan_mode's pure helpers: the bash allow-list, plan-step extraction and completion markers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_NOCASE = re.IGNORECASE | re.ASCII  # ASCII: \b and \d as in JavaScript


def _patterns(flags: int, *sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(source, flags) for source in sources)


# Anything that changes something: one of these anywhere in the command line blocks it.
_WRITERS = ("rm", "rmdir", "mv", "cp", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "tee", "truncate", "dd",
            "shred", "sudo", "su", "kill", "pkill", "killall", "reboot", "shutdown")
_DESTRUCTIVE = (
    *_patterns(0, r"(^|[^<])>(?!>)", r">>"),  # redirecting output into a file (">", not "<>")
    *_patterns(
        _NOCASE,
        rf"\b(?:{'|'.join(_WRITERS)})\b",
        r"\bnpm\s+(install|uninstall|update|ci|link|publish)",
        r"\byarn\s+(add|remove|install|publish)",
        r"\bpnpm\s+(add|remove|install|publish)",
        r"\bpip\s+(install|uninstall)",
        r"\bapt(-get)?\s+(install|remove|purge|update|upgrade)",
        r"\bbrew\s+(install|uninstall|upgrade)",
        r"\bgit\s+(add|commit|push|pull|merge|rebase|reset|checkout|branch\s+-[dD]|stash|cherry-pick|revert|tag|init"
        r"|clone)",
        r"\bsystemctl\s+(start|stop|restart|enable|disable)",
        r"\bservice\s+\S+\s+(start|stop|restart)",
        r"\b(vim?|nano|emacs|code|subl)\b",
    ),
)

# Read-only programs a command line may start with (matched case-sensitively, as typed in a shell).
_READERS = ("cat", "head", "tail", "less", "more", "grep", "find", "ls", "pwd", "echo", "printf", "wc", "sort",
            "uniq", "diff", "file", "stat", "du", "df", "tree", "which", "whereis", "type", "env", "printenv",
            "uname", "whoami", "id", "date", "cal", "uptime", "ps", "top", "htop", "free", "jq", "awk", "rg", "fd",
            "bat", "eza")
_SAFE = (
    *_patterns(re.ASCII, rf"^\s*(?:{'|'.join(_READERS)})\b"),
    *_patterns(
        _NOCASE,
        r"^\s*git\s+(status|log|diff|show|branch|remote|config\s+--get)",
        r"^\s*git\s+ls-",
        r"^\s*npm\s+(list|ls|view|info|search|outdated|audit)",
        r"^\s*yarn\s+(list|info|why|audit)",
        r"^\s*(node|python)\s+--version",
        r"^\s*curl\s",
        r"^\s*wget\s+-O\s*-",
        r"^\s*sed\s+-n",
    ),
)


def is_safe_command(command: str) -> bool:
    """Whether plan mode lets bash run ``command``: it starts with a read-only program and contains nothing
    that writes (a redirection, rm, git commit, an editor...)."""
    if any(pattern.search(command) for pattern in _DESTRUCTIVE):
        return False
    return any(pattern.search(command) for pattern in _SAFE)


@dataclass
class TodoItem:
    """One step of the plan, numbered from 1 in the order found."""

    step: int
    text: str
    completed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "text": self.text, "completed": self.completed}

    @classmethod
    def from_json(cls, data: Any) -> TodoItem | None:
        """A saved step, or None when ``data`` is not one (a damaged or foreign entry)."""
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            return None
        step = data.get("step")
        if not isinstance(step, int) or isinstance(step, bool):
            return None
        return cls(step, data["text"], data.get("completed") is True)


_EMPHASIS = re.compile(r"\*{1,2}([^*]+)\*{1,2}")
_CODE = re.compile(r"`([^`]+)`")
_LEADING_VERB = re.compile(r"^(Use|Run|Execute|Create|Write|Read|Check|Verify|Update|Modify|Add|Remove|Delete"
                           r"|Install)\s+(the\s+)?", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def clean_step_text(text: str) -> str:
    """A step as the widget shows it: markdown emphasis and code marks dropped, a leading imperative ("Run
    the", "Check") removed, whitespace collapsed, first letter upper-cased. Never shortened."""
    cleaned = _EMPHASIS.sub(r"\1", text)
    cleaned = _CODE.sub(r"\1", cleaned)
    cleaned = _LEADING_VERB.sub("", cleaned, count=1)
    cleaned = _SPACES.sub(" ", cleaned).strip()
    return cleaned[:1].upper() + cleaned[1:]


_PLAN_HEADER = re.compile(r"\*{0,2}Plan:\*{0,2}\s*\n", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.+)$", re.MULTILINE | re.ASCII)
_TRAILING_STARS = re.compile(r"\*{1,2}\Z")


def extract_todo_items(message: str) -> list[TodoItem]:
    """The numbered steps under the last "Plan:" header of ``message`` (a draft in the thinking text comes
    before the final plan). Steps of five characters or fewer, and ones starting with "/" or "-", are skipped."""
    headers = list(_PLAN_HEADER.finditer(message))
    if not headers:
        return []
    section = message[headers[-1].end():]
    items: list[TodoItem] = []
    for match in _NUMBERED.finditer(section):
        text = _TRAILING_STARS.sub("", match.group(2).strip()).strip()
        if len(text) <= 5 or text.startswith(("/", "-")):
            continue
        cleaned = clean_step_text(text)
        if len(cleaned) > 3:
            items.append(TodoItem(len(items) + 1, cleaned))
    return items


_DONE_MARKERS = _patterns(
    _NOCASE,
    r"\[DONE\s*:?\s*(\d+)\]",  # [DONE:1], [DONE: 1], [DONE 1], [Done:1]
    r"\bDone\s*:\s*(\d+)\b",  # Done: 1
    # "Step 2 done", "Step 3 is complete": the words must follow the number, so "Step 4 is not done" is no match
    r"\bStep\s*(\d+)\s+(?:is\s+)?(?:done|complete|completed|finished)\b",
)


def extract_done_steps(message: str) -> list[int]:
    """The step numbers ``message`` reports as done, each once, in the order the marker kinds are searched."""
    steps: dict[int, None] = {}
    for pattern in _DONE_MARKERS:
        for match in pattern.finditer(message):
            steps.setdefault(int(match.group(1)), None)
    return list(steps)


def mark_completed_steps(text: str, items: list[TodoItem]) -> int:
    """Mark the steps ``text`` reports as done; returns how many were newly marked."""
    marked = 0
    for step in extract_done_steps(text):
        item = next((t for t in items if t.step == step and not t.completed), None)
        if item is not None:
            item.completed = True
            marked += 1
    return marked


_WHOLE_PLAN_DONE = (
    re.compile(r"(?:all|every)\s+steps?\s+(?:are|is\s+)?(?:done|complete|completed|finished)", re.IGNORECASE),
    re.compile(r"\b(?:the\s+)?plan\s+(?:is\s+)?(?:complete|completed|done)\b", re.IGNORECASE | re.ASCII),
)


def all_steps_complete(message: str) -> bool:
    """Whether the run's last reply says the whole plan is finished without per-step markers ("All steps
    complete", "The plan is done")."""
    return any(pattern.search(message) for pattern in _WHOLE_PLAN_DONE)
