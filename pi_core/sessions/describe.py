"""One-line descriptions of session entries, as the session tree shows them (``/tree`` and the HTML export).

``describe_entry`` returns styled pieces; each front end maps the style names to its own colours.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from pi_core.sessions.format import Entry

# Style names: the theme colour roles the terminal tree uses for each piece.
USER, ASSISTANT, TOOL, DIM, MUTED, ERROR = "accent", "success", "muted", "dim", "muted", "error"
CUSTOM_LABEL, COMPACTION, BRANCH_SUMMARY, TEXT = "customMessageLabel", "borderAccent", "warning", "text"

_HOME = re.compile(r"^(/Users/[^/]+|/home/[^/]+)(?=/|$)")
SETTINGS_TYPES = frozenset({"label", "custom", "context_edit", "model_change", "thinking_level_change", "usage"})


def as_dict(value: Any) -> dict[str, Any]:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """``value`` when it is a JSON object, else an empty one (session files may hold anything)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    return value if isinstance(value, list) else []


@dataclass(frozen=True, repr=False)
class Piece:
    """One styled piece of a description line."""

    style: str
    text: str


def shorten_home(path: str, home: str | None = None) -> str:
    """``path`` with the home directory written ``~`` (``home`` when given, else any /home/x or /Users/x)."""
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    if home is None:
        return _HOME.sub("~", path, count=1)
    return path


def _line_number(value: Any) -> int | None:
    if isinstance(value, str) and value.strip():
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        return None
    return int(value)


def read_line_range(offset: Any, limit: Any) -> str:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """``:start-end`` for a read call's offset/limit, ``""`` when neither is given or they do not parse."""
    if offset is None and limit is None:
        return ""
    start = 1 if offset is None else _line_number(offset)
    if start is None:
        return ""
    if limit is None:
        return f":{start}"
    count = _line_number(limit)
    if count is None:
        return ""
    end = start + count - 1
    return f":{start}-{end}" if end else f":{start}"


def _js_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_call_summary(name: str, args: Any, home: str | None = None) -> str:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """``[read: ~/src/a.py:1-20]``, ``[bash: make test]``: a tool call in a few words."""
    args = args if isinstance(args, dict) else {}

    def path_of(default: str = "") -> str:
        return shorten_home(str(args.get("path") or args.get("file_path") or default), home)

    if name == "read":
        return f"[read: {path_of()}{read_line_range(args.get('offset'), args.get('limit'))}]"
    if name in ("write", "edit"):
        return f"[{name}: {path_of()}]"
    if name == "bash":
        raw = str(args.get("command") or "")
        command = re.sub(r"[\n\t]", " ", raw).strip()[:50]
        return f"[bash: {command}{'...' if len(raw) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{args.get('pattern') or ''}/ in {path_of('.')}]"
    if name == "find":
        return f"[find: {args.get('pattern') or ''} in {path_of('.')}]"
    if name == "ls":
        return f"[ls: {path_of('.')}]"
    encoded = _js_json(args)
    return f"[{name}: {encoded[:40]}{'...' if len(encoded) > 40 else ''}]"


def content_text(content: Any, joiner: str = "") -> str:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """The text blocks of a message content joined by ``joiner`` (a string is returned as is; anything that is
    not a content list, from a hand-edited file, has no text)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return joiner.join(str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def has_text(content: Any) -> bool:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "text" and str(b.get("text") or "").strip() for b in content
    )


def one_line(text: str) -> str:
    return re.sub(r"[\n\t]", " ", text).strip()


def _clip(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + "..."


SKILL_BLOCK = re.compile(r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$')


def tool_calls_by_id(entries: list[Entry]) -> dict[str, tuple[str, Any]]:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """toolCallId -> (tool name, arguments) over every assistant message of ``entries``."""
    calls: dict[str, tuple[str, Any]] = {}
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    calls[str(block.get("id"))] = (str(block.get("name") or ""), block.get("arguments"))
    return calls


def describe_entry(
    entry: Entry, tool_calls: dict[str, tuple[str, Any]], limit: int | None = 100, home: str | None = None  # open: session JSON: entries, content and tool arguments as Pi wrote them
) -> list[Piece]:
    """The tree line of ``entry`` (without its label), text clipped to ``limit`` characters plus ``...``."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _describe_message(entry["message"], tool_calls, limit, home)
    if kind == "custom_message":
        text = _clip(one_line(content_text(entry.get("content"))), limit)
        return [Piece(CUSTOM_LABEL, f"[{entry.get('customType', '')}]: "), Piece(TEXT, text)]
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        count = round(tokens / 1000) if isinstance(tokens, (int, float)) else 0
        return [Piece(COMPACTION, f"[compaction: {count}k tokens]")]
    if kind == "branch_summary":
        text = _clip(one_line(str(entry.get("summary") or "")), limit)
        return [Piece(BRANCH_SUMMARY, "[branch summary]: "), Piece(TEXT, text)]
    if kind == "model_change":
        return [Piece(DIM, f"[model: {entry.get('modelId', '')}]")]
    if kind == "thinking_level_change":
        return [Piece(DIM, f"[thinking: {entry.get('thinkingLevel', '')}]")]
    if kind == "custom":
        return [Piece(DIM, f"[custom: {entry.get('customType', '')}]")]
    if kind == "context_edit":
        action = "omit" if entry.get("replacement") is None else "replace"
        return [Piece(DIM, f"[context {action}: {entry.get('targetId', '')}]")]
    if kind == "label":
        return [Piece(DIM, f"[label: {entry.get('label') or '(cleared)'}]")]
    if kind == "session_info":
        return [Piece(DIM, f"[title: {entry.get('name') or 'empty'}]")]
    return [Piece(DIM, f"[{kind}]")]


def _describe_message(
    message: dict[str, Any], tool_calls: dict[str, tuple[str, Any]], limit: int | None, home: str | None
) -> list[Piece]:
    role = message.get("role")
    if role == "user":
        raw = content_text(message.get("content"))
        skill = SKILL_BLOCK.match(raw)
        if skill:
            pieces = [Piece(USER, "skill: "), Piece(TEXT, skill.group(1))]
            if skill.group(4) and skill.group(4).strip():
                pieces += [Piece(TEXT, " · "), Piece(USER, "user: "), Piece(TEXT, _clip(one_line(skill.group(4)), limit))]
            return pieces
        return [Piece(USER, "user: "), Piece(TEXT, _clip(one_line(raw), limit))]
    if role == "assistant":
        text = _clip(one_line(content_text(message.get("content"))), limit)
        if text:
            return [Piece(ASSISTANT, "assistant: "), Piece(TEXT, text)]
        if message.get("stopReason") == "aborted":
            return [Piece(ASSISTANT, "assistant: "), Piece(MUTED, "(aborted)")]
        if message.get("errorMessage"):
            return [Piece(ASSISTANT, "assistant: "), Piece(ERROR, _clip(one_line(str(message["errorMessage"])), limit))]
        return [Piece(ASSISTANT, "assistant: "), Piece(MUTED, "(no text)")]
    if role == "toolResult":
        call = tool_calls.get(str(message.get("toolCallId")))
        if call is not None:
            return [Piece(TOOL, tool_call_summary(call[0], call[1], home))]
        return [Piece(TOOL, f"[{message.get('toolName') or 'tool'}]")]
    if role == "bashExecution":
        return [Piece(TOOL, "[bash]: "), Piece(TEXT, _clip(one_line(str(message.get("command") or "")), limit))]
    return [Piece(DIM, f"[{role}]")]


def is_hidden_assistant(entry: Entry) -> bool:
    """An assistant message with tool calls only (no text, not an error): the tree hides it in every filter."""
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return False
    stop = message.get("stopReason")
    return not has_text(message.get("content")) and (not stop or stop in ("stop", "toolUse"))


def search_text(entry: Entry, label: str | None, tool_calls: dict[str, tuple[str, Any]]) -> str:  # open: session JSON: entries, content and tool arguments as Pi wrote them
    """Lower-case text a tree search matches against: role, content, command, summary, label."""
    parts: list[str] = [label] if label else []
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        parts.append(str(message.get("role") or ""))
        parts.append(content_text(message.get("content")))
        if message.get("role") == "bashExecution":
            parts.append(str(message.get("command") or ""))
        if message.get("role") == "toolResult":
            call = tool_calls.get(str(message.get("toolCallId")))
            if call is not None:
                parts.append(tool_call_summary(call[0], call[1]))
    elif kind == "custom_message":
        parts += [str(entry.get("customType") or ""), content_text(entry.get("content"))]
    elif kind == "compaction":
        parts += ["compaction", str(entry.get("summary") or "")]
    elif kind == "branch_summary":
        parts += ["branch summary", str(entry.get("summary") or "")]
    elif kind == "model_change":
        parts += ["model", str(entry.get("modelId") or "")]
    elif kind == "thinking_level_change":
        parts += ["thinking", str(entry.get("thinkingLevel") or "")]
    elif kind == "session_info":
        parts += ["title", str(entry.get("name") or "")]
    return " ".join(parts).lower()
