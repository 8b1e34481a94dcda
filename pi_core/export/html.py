"""``pi --export``: one self-contained HTML page of a session (no scripts, no external files).

The page shows the current branch as the conversation (tool calls with their results, thinking in
collapsed blocks, summaries, shell commands) and, below it, the whole entry tree so other branches
stay readable. Every piece of session text is HTML-escaped.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry
from pi_core.sessions.jsonfmt import js_dumps
from pi_core.sessions.store import load_file

_IMAGE_MIME = re.compile(r"^image/[a-z0-9.+-]+$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;
color:#1d1d1f;background:#fafafa;line-height:1.45}
h1{font-size:1.4em;margin-bottom:.2em} .meta{color:#666;font-size:.85em;margin-bottom:1.5em}
.msg{border-radius:8px;padding:.6em .9em;margin:.7em 0;border:1px solid #e2e2e2;background:#fff}
.msg .role{font-weight:600;font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:#555;margin-bottom:.3em}
.user{background:#eef5ff;border-color:#c9defa} .assistant{background:#fff}
.toolResult{background:#f6f6f6;font-size:.9em} .toolResult.error{background:#fff0f0;border-color:#f2c4c4}
.summary{background:#fffbe8;border-color:#f0e0a0} .bash{background:#f3f0ff;border-color:#d8cff7}
.custom{background:#eefaf0;border-color:#c7ebcd} .event{color:#777;font-size:.8em;margin:.3em 0 .3em .2em}
pre{white-space:pre-wrap;word-wrap:break-word;margin:.2em 0;font-family:ui-monospace,Menlo,Consolas,monospace;
font-size:.88em} .text{white-space:pre-wrap;word-wrap:break-word}
.toolcall{border-left:3px solid #8aa;padding:.2em .6em;margin:.4em 0;background:#f4f8f8}
.toolcall .name{font-weight:600;font-family:ui-monospace,Menlo,monospace}
details.thinking{color:#666;font-style:italic;margin:.3em 0} details summary{cursor:pointer}
img{max-width:100%;border:1px solid #ddd;border-radius:4px}
.tree ul{list-style:none;padding-left:1.2em;margin:0;border-left:1px dotted #bbb}
.tree>ul{border-left:none;padding-left:0} .tree li{margin:.15em 0;font-size:.85em}
.tree .onpath>.node{font-weight:600} .tree .label{background:#ffe38a;border-radius:3px;padding:0 .3em;margin-left:.3em}
.tree .kind{color:#888;font-family:ui-monospace,monospace;margin-right:.4em} .tree .leaf{color:#0a7d28}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _content_html(content: Any) -> str:
    if isinstance(content, str):
        return f'<div class="text">{_e(content)}</div>'
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(f'<div class="text">{_e(block.get("text", ""))}</div>')
        elif kind == "image":
            mime = str(block.get("mimeType", ""))
            data = str(block.get("data", ""))
            if _IMAGE_MIME.match(mime) and _BASE64.match(data):
                parts.append(f'<img alt="image" src="data:{_e(mime)};base64,{_e(data)}">')
            else:
                parts.append('<div class="text">[image]</div>')
    return "".join(parts)


def _message_html(message: dict[str, Any], results: dict[str, dict[str, Any]]) -> str:
    role = message.get("role")
    if role == "user":
        return f'<div class="msg user"><div class="role">User</div>{_content_html(message.get("content"))}</div>'
    if role == "assistant":
        body = []
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                body.append(f'<div class="text">{_e(block.get("text", ""))}</div>')
            elif kind == "thinking" and not block.get("redacted"):
                body.append(
                    f'<details class="thinking"><summary>Thinking</summary><div class="text">'
                    f'{_e(block.get("thinking", ""))}</div></details>'
                )
            elif kind == "toolCall":
                body.append(_tool_call_html(block, results.get(str(block.get("id")))))
        if message.get("stopReason") in ("error", "aborted"):
            note = message.get("errorMessage") or ("Request aborted" if message.get("stopReason") == "aborted" else "Error")
            body.append(f'<div class="event">{_e(note)}</div>')
        model = f'{message.get("provider", "")}/{message.get("model", "")}'
        return f'<div class="msg assistant"><div class="role">Assistant · {_e(model)}</div>{"".join(body)}</div>'
    if role == "toolResult":
        return ""  # shown under its tool call
    if role == "bashExecution":
        code = message.get("exitCode")
        status = "cancelled" if message.get("cancelled") else f"exit {code}" if code is not None else ""
        return (
            f'<div class="msg bash"><div class="role">Shell · {_e(status)}</div><pre>$ {_e(message.get("command", ""))}'
            f'\n{_e(message.get("output", ""))}</pre></div>'
        )
    if role in ("custom", "hookMessage"):
        return (
            f'<div class="msg custom"><div class="role">{_e(message.get("customType", "custom"))}</div>'
            f'{_content_html(message.get("content"))}</div>'
        )
    return f'<div class="msg"><div class="role">{_e(role)}</div><pre>{_e(js_dumps(message))}</pre></div>'


def _tool_call_html(block: dict[str, Any], result: dict[str, Any] | None) -> str:
    arguments = js_dumps(block.get("arguments") or {})
    out = f'<div class="toolcall"><span class="name">{_e(block.get("name", ""))}</span><pre>{_e(arguments)}</pre>'
    if result is not None:
        css = "msg toolResult error" if result.get("isError") else "msg toolResult"
        label = "Tool error" if result.get("isError") else "Tool result"
        out += f'<div class="{css}"><div class="role">{label}</div>{_content_html(result.get("content"))}</div>'
    return out + "</div>"


def _entry_html(entry: Entry, results: dict[str, dict[str, Any]]) -> str:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        return _message_html(entry["message"], results)
    if kind == "compaction":
        return (
            f'<div class="msg summary"><div class="role">Compaction summary · {_e(entry.get("tokensBefore", ""))}'
            f' tokens before</div><div class="text">{_e(entry.get("summary", ""))}</div></div>'
        )
    if kind == "branch_summary":
        return (
            f'<div class="msg summary"><div class="role">Branch summary</div>'
            f'<div class="text">{_e(entry.get("summary", ""))}</div></div>'
        )
    if kind == "custom_message" and entry.get("display", True):
        return (
            f'<div class="msg custom"><div class="role">{_e(entry.get("customType", ""))}</div>'
            f'{_content_html(entry.get("content"))}</div>'
        )
    if kind == "model_change":
        return f'<div class="event">Model: {_e(entry.get("provider", ""))}/{_e(entry.get("modelId", ""))}</div>'
    if kind == "thinking_level_change":
        return f'<div class="event">Thinking level: {_e(entry.get("thinkingLevel", ""))}</div>'
    if kind == "session_info" and entry.get("name"):
        return f'<div class="event">Session name: {_e(entry["name"])}</div>'
    return ""


def _preview(entry: Entry) -> str:
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        role = message.get("role", "")
        content = message.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            pieces = []
            for b in content:
                if isinstance(b, dict) and b.get("type") == "text":
                    pieces.append(b.get("text", ""))
                elif isinstance(b, dict) and b.get("type") == "toolCall":
                    pieces.append(f"{b.get('name', '')}(…)")
            text = " ".join(pieces)
        else:
            text = message.get("command", "")
        return f"{role}: {' '.join(text.split())[:120]}"
    if kind in ("compaction", "branch_summary"):
        return f"{kind}: {' '.join(str(entry.get('summary', '')).split())[:120]}"
    if kind == "label":
        return f"label {entry.get('targetId', '')} = {entry.get('label', '')}"
    return str(kind)


def _tree_html(entries: list[Entry], on_path: set[str], leaf_id: str | None, labels: dict[str, str]) -> str:
    children: dict[str | None, list[Entry]] = {}
    ids = {e.get("id") for e in entries}
    for entry in entries:
        parent = entry.get("parentId")
        key = parent if parent in ids and parent != entry.get("id") else None
        children.setdefault(key, []).append(entry)

    out: list[str] = []

    def node_html(entry: Entry) -> str:
        entry_id = str(entry.get("id"))
        css = "onpath" if entry_id in on_path else ""
        label = f'<span class="label">{_e(labels[entry_id])}</span>' if entry_id in labels else ""
        leaf = ' <span class="leaf">◀ current</span>' if entry_id == leaf_id else ""
        return (
            f'<li class="{css}"><span class="node"><span class="kind">{_e(entry_id)}</span>'
            f"{_e(_preview(entry))}</span>{label}{leaf}</li>"
        )

    def chain(entry: Entry) -> None:
        # A linear run stays one flat list; only a fork opens nested lists, one per branch.
        while True:
            out.append(node_html(entry))
            kids = children.get(str(entry.get("id")), [])
            if len(kids) != 1:
                break
            entry = kids[0]
        if kids:
            out.append('<li class="fork"><ul>')
            for kid in kids:
                out.append("<li><ul>")
                chain(kid)
                out.append("</ul></li>")
            out.append("</ul></li>")

    roots = children.get(None, [])
    out.append("<ul>")
    for root in roots:
        if len(roots) > 1:
            out.append("<li><ul>")
        chain(root)
        if len(roots) > 1:
            out.append("</ul></li>")
    out.append("</ul>")
    return "".join(out)


def child_counts_of(entries: list[Entry]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in entries:
        parent = entry.get("parentId")
        if isinstance(parent, str):
            counts[parent] = counts.get(parent, 0) + 1
    return counts


def _other_branches_html(
    entries: list[Entry],
    by_id: dict[str, Entry],
    current_path: list[Entry],
    child_counts: dict[str, int],
    results: dict[str, dict[str, Any]],
) -> str:
    """Each branch that is not the current one, from where it leaves the shared history to its end."""
    shown = {e["id"] for e in current_path}
    sections = []
    for leaf in entries:
        if child_counts.get(leaf["id"]) or leaf["id"] in shown:
            continue
        segment: list[Entry] = []
        current: Entry | None = leaf
        while current is not None and current["id"] not in shown:
            segment.append(current)
            shown.add(current["id"])
            current = by_id.get(current.get("parentId") or "")
        segment.reverse()
        body = "".join(_entry_html(e, results) for e in segment)
        if not body:
            continue
        start = f"after {_e(current['id'])}" if current is not None else "from the start"
        sections.append(
            f'<details class="branch"><summary>Branch {start}: {_e(_preview(segment[0]))}</summary>{body}</details>'
        )
    if not sections:
        return ""
    return f'<section id="branches"><h2>Other branches</h2>{"".join(sections)}</section>'


def render_session_html(records: list[Entry], title: str) -> str:
    header, entries = records[0], [e for e in records[1:] if isinstance(e.get("id"), str)]
    by_id = {e["id"]: e for e in entries}
    leaf = entries[-1] if entries else None
    path: list[Entry] = []
    seen: set[str] = set()
    current = leaf
    while current is not None and current["id"] not in seen:
        seen.add(current["id"])
        path.append(current)
        current = by_id.get(current.get("parentId") or "")
    path.reverse()
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
            if entry.get("label"):
                labels[entry["targetId"]] = str(entry["label"])
            else:
                labels.pop(entry["targetId"], None)
    results = {
        str(e["message"].get("toolCallId")): e["message"]
        for e in entries
        if e.get("type") == "message" and isinstance(e.get("message"), dict) and e["message"].get("role") == "toolResult"
    }
    name = next(
        (str(e["name"]) for e in reversed(entries) if e.get("type") == "session_info" and e.get("name")), None
    )
    conversation = "".join(_entry_html(e, results) for e in path)
    other_branches = _other_branches_html(entries, by_id, path, child_counts_of(entries), results)
    branches = sum(1 for count in child_counts_of(entries).values() if count > 1)
    tree = _tree_html(entries, {e["id"] for e in path}, leaf["id"] if leaf else None, labels)
    meta = (
        f'Session {_e(header.get("id", ""))} · {_e(header.get("timestamp", ""))} · {_e(header.get("cwd", ""))}'
        f" · {len(entries)} entries"
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(name or title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(name or title)}</h1><div class=\"meta\">{meta}</div>"
        f'<section id="conversation"><h2>Conversation</h2>{conversation or "<p>(no messages)</p>"}</section>'
        f"{other_branches}"
        f'<section id="tree" class="tree"><h2>Session tree</h2>'
        f"<p class=\"meta\">{branches} branch point(s); the current branch is in bold.</p>{tree}</section>"
        "</body></html>\n"
    )


def default_export_path(session_path: str | Path, cwd: str | Path | None = None) -> Path:
    """``pi-session-<basename>.html`` in the current directory."""
    base = Path(session_path).name
    base = base[: -len(".jsonl")] if base.endswith(".jsonl") else base
    return Path(cwd or Path.cwd()) / f"pi-session-{base}.html"


def export_html(session_path: str | Path, out_path: str | Path | None = None) -> Path:
    """Write the HTML page of a session file; returns the output path (default ``pi-session-<name>.html``)."""
    source = Path(session_path)
    if not source.is_file():
        raise SessionError(f"File not found: {source}")
    loaded = load_file(source)
    if not loaded.records:
        raise SessionError(f"Not a session file: {source}")
    from pi_core.sessions.migrate import migrate_records

    records = loaded.records
    migrate_records(records)  # in memory: old files get ids so the tree can be drawn
    out = Path(out_path) if out_path else default_export_path(source)
    from pi_core.toolkit.redact import redact

    out.write_text(redact(render_session_html(records, source.name)), encoding="utf-8")
    return out
