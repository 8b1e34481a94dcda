"""``pi --export``: a session as one self-contained HTML viewer.

The page shows the current branch as the conversation (Markdown rendered and sanitised, code highlighted,
tool calls with collapsible results, collapsible thinking, summaries, shell commands) and the whole entry
tree in a sidebar with its branches and labels, a search box and filters; clicking a tree entry shows its
branch. A link downloads the session as JSONL. Everything is rendered here, in Python; the page's one
script only shows, hides and reorders elements, and a Content-Security-Policy lets no other script run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from pi_core.export.entries import (
    RenderContext,
    entry_body_html,
    esc,
    system_prompt_html,
    tools_list_html,
)
from pi_core.export.markdown import syntax_css
from pi_core.export.stats import SessionStats, session_stats
from pi_core.sessions.describe import (
    SETTINGS_TYPES,
    describe_entry,
    is_hidden_assistant,
    search_text,
    tool_calls_by_id,
)
from pi_core.sessions.errors import SessionError
from pi_core.sessions.format import Entry
from pi_core.sessions.store import load_file
from pi_core.toolkit.redact import redact

# Used until a theme is passed: the colour roles of Pi's theme format, for a dark page.
DEFAULT_COLORS: dict[str, str] = {
    "accent": "#8abeb7", "border": "#5f87ff", "borderAccent": "#00d7ff", "borderMuted": "#505050",
    "success": "#b5bd68", "error": "#cc6666", "warning": "#ffff00", "muted": "#808080", "dim": "#666666",
    "text": "#e5e5e7", "thinkingText": "#808080", "selectedBg": "#3a3a4a", "userMessageBg": "#343541",
    "userMessageText": "#e5e5e7", "customMessageBg": "#2d2838", "customMessageText": "#e5e5e7",
    "customMessageLabel": "#9575cd", "toolPendingBg": "#282832", "toolSuccessBg": "#283228",
    "toolErrorBg": "#3c2828", "toolTitle": "#e5e5e7", "toolOutput": "#a0a0a0", "mdHeading": "#f0c674",
    "mdLink": "#81a2be", "mdLinkUrl": "#666666", "mdCode": "#8abeb7", "mdCodeBlock": "#b5bd68",
    "mdCodeBlockBorder": "#808080", "mdQuote": "#808080", "mdQuoteBorder": "#808080", "mdHr": "#808080",
    "mdListBullet": "#8abeb7", "toolDiffAdded": "#b5bd68", "toolDiffRemoved": "#cc6666",
    "toolDiffContext": "#808080", "syntaxComment": "#6a9955", "syntaxKeyword": "#569cd6",
    "syntaxFunction": "#dcdcaa", "syntaxVariable": "#9cdcfe", "syntaxString": "#ce9178",
    "syntaxNumber": "#b5cea8", "syntaxType": "#4ec9b0", "syntaxOperator": "#d4d4d4",
    "syntaxPunctuation": "#d4d4d4", "exportPageBg": "#18181e", "exportCardBg": "#1e1e24", "exportInfoBg": "#3c3728",
}


@dataclass(frozen=True)
class ExportTool:
    """A tool as the page lists it when the session does not record its own system entries."""

    name: str
    description: str
    parameters: dict[str, Any] | None = None  # open: a JSON Schema


def _asset(name: str) -> str:
    return resources.files("pi_core.export").joinpath(name).read_text(encoding="utf-8")


def _labels(entries: list[Entry]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
            if entry.get("label"):
                labels[entry["targetId"]] = str(entry["label"])
            else:
                labels.pop(entry["targetId"], None)
    return labels


def _path_ids(by_id: dict[str, Entry], leaf: str | None) -> set[str]:
    ids: set[str] = set()
    current = by_id.get(leaf or "")
    while current is not None and current["id"] not in ids:
        ids.add(current["id"])
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    return ids


def _leading_system_ids(entries: list[Entry], by_id: dict[str, Entry]) -> set[str]:
    """System entries with no system state above them on their branch: each shows the full prompt."""
    def carries_system(entry: Entry) -> bool:
        message = entry.get("message")
        return (isinstance(message, dict) and message.get("role") == "system") or (
            entry.get("type") == "compaction" and bool(entry.get("systemMessage"))
        )

    leading = set()
    for entry in entries:
        message = entry.get("message")
        if not (isinstance(message, dict) and message.get("role") == "system"):
            continue
        ancestors = _path_ids(by_id, entry.get("parentId") if isinstance(entry.get("parentId"), str) else None)
        if not any(carries_system(by_id[a]) for a in ancestors if a != entry["id"]):
            leading.add(entry["id"])
    return leading


def _filter_class(entry: Entry) -> str:
    if is_hidden_assistant(entry):
        return "toolonly"
    if entry.get("type") in SETTINGS_TYPES:
        return "settings"
    message = entry.get("message") if entry.get("type") == "message" else None
    if isinstance(message, dict) and message.get("role") in ("user", "toolResult"):
        return "user" if message["role"] == "user" else "tool"
    return "other"


def _tree_rows(entries: list[Entry], labels: dict[str, str]) -> str:
    calls = tool_calls_by_id(entries)
    rows = []
    for entry in entries:
        entry_id = entry["id"]
        label = labels.get(entry_id)
        pieces = "".join(f'<span class="st-{esc(p.style)}">{esc(p.text)}</span>' for p in describe_entry(entry, calls))
        label_html = f'<span class="tree-label">[{esc(label)}]</span> ' if label else ""
        message = entry.get("message") if entry.get("type") == "message" else None
        anchor = (
            f"call-{message.get('toolCallId')}"
            if isinstance(message, dict) and message.get("role") == "toolResult" and str(message.get("toolCallId")) in calls
            else f"entry-{entry_id}"
        )
        parent = entry.get("parentId") if isinstance(entry.get("parentId"), str) else ""
        rows.append(
            f'<div class="tree-node" data-id="{esc(entry_id)}" data-parent="{esc(parent)}" data-ts="{esc(entry.get("timestamp", ""))}"'
            f' data-filter="{_filter_class(entry)}" data-labeled="{1 if label else 0}" data-anchor="{esc(anchor)}"'
            f' data-search="{esc(search_text(entry, label, calls))}"><span class="tree-prefix"></span>'
            f'<span class="tree-marker"></span><span class="tree-content">{label_html}{pieces}</span></div>'
        )
    return "".join(rows)


def _time(timestamp: Any, kind: str = "time") -> str:
    if not isinstance(timestamp, str) or not timestamp:
        return ""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S UTC" if kind == "date" else "%H:%M:%S")
    return f'<time class="{kind}" datetime="{esc(timestamp)}">{shown}</time>'


def _entry_article(entry: Entry, ctx: RenderContext, visible: bool) -> str:
    css, body = entry_body_html(entry, ctx)
    if not body:
        return ""
    label = ctx.labels.get(entry["id"])
    label_html = f'<span class="entry-label">{esc(label)}</span>' if label else ""
    hidden = "" if visible else " hidden"
    return (
        f'<article class="entry {css}" id="entry-{esc(entry["id"])}" data-id="{esc(entry["id"])}"{hidden}>'
        f'<div class="entry-meta">{_time(entry.get("timestamp"))}{label_html}</div>{body}</article>'
    )


def _header_html(header: Entry, name: str | None, stats: SessionStats, download: str, prompt_html: str) -> str:
    info = [
        ("Date", _time(header.get("timestamp"), "date") or "unknown"),
        ("Models", esc(", ".join(stats.models) or "unknown")),
        ("Messages", esc(stats.messages_summary() or "0")),
        ("Tool Calls", str(stats.tool_calls)),
        ("Tokens", esc(stats.tokens_summary() or "0")),
        ("Cost", f"${stats.cost:.3f}"),
    ]
    if header.get("cwd"):
        info.insert(1, ("Directory", esc(header["cwd"])))
    rows = "".join(f'<div class="info-item"><span class="info-label">{k}:</span><span class="info-value">{v}</span></div>' for k, v in info)
    title = f'<div class="session-name">{esc(name)}</div>' if name else ""
    session_id = esc(header.get("id") or "unknown")
    return (
        f'<header class="session-header"><h1>Session: {session_id}</h1>{title}<div class="help-bar">'
        '<span class="help-hint">T thinking · O tool outputs · H hidden messages · Esc back to the current leaf</span>'
        '<span class="help-actions">'
        '<button type="button" data-action="thinking" aria-pressed="true">Thinking</button>'
        '<button type="button" data-action="tools" aria-pressed="false">Tool outputs</button>'
        '<button type="button" data-action="hidden" aria-pressed="false">Hidden messages</button>'
        f'<a class="download" download="{session_id}.jsonl" href="{download}">↓ JSONL</a></span></div>'
        f'<div class="header-info">{rows}</div>{prompt_html}</header>'
    )


def render_session_html(
    records: list[Entry],
    title: str,
    *,
    jsonl: str | None = None,
    colors: Mapping[str, str] | None = None,
    system_prompt: str | None = None,
    tools: list[ExportTool] | None = None,
    leaf_id: str | None = None,
) -> str:
    """The viewer page of ``records`` (header first). ``jsonl`` is what the download link gives."""
    header, entries = records[0], [e for e in records[1:] if isinstance(e.get("id"), str)]
    by_id = {e["id"]: e for e in entries}
    leaf = leaf_id if leaf_id in by_id else (entries[-1]["id"] if entries else "")
    labels = _labels(entries)
    ctx = RenderContext(
        results={str(e["message"].get("toolCallId")): e["message"] for e in entries
                 if isinstance(e.get("message"), dict) and e["message"].get("role") == "toolResult"},
        labels=labels,
        leading_system=_leading_system_ids(entries, by_id),
        known_calls=set(tool_calls_by_id(entries)),
    )
    on_path = _path_ids(by_id, leaf)
    messages = "".join(_entry_article(e, ctx, e["id"] in on_path) for e in entries)
    name = next((str(e["name"]) for e in reversed(entries) if e.get("type") == "session_info" and e.get("name")), None)
    has_system = any(isinstance(e.get("message"), dict) and e["message"].get("role") == "system" for e in entries)
    prompt_html = ""
    if not has_system:
        prompt_html = system_prompt_html("System Prompt", system_prompt) if system_prompt else ""
        prompt_html += tools_list_html("Available Tools", [t.__dict__ for t in tools or []])
    text = jsonl if jsonl is not None else "\n".join(json.dumps(r, ensure_ascii=False) for r in records)
    download = "data:application/x-ndjson;base64," + base64.b64encode(text.encode("utf-8")).decode("ascii")
    palette = {**DEFAULT_COLORS, **(colors or {})}
    css_vars = ";".join(f"--{key}:{value}" for key, value in palette.items() if _is_css_color(value))
    script = _asset("viewer.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data: https: http:;"
        " base-uri 'none'; form-action 'none'"
    )
    page_title = esc(name or header.get("id") or title)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{page_title}</title><style>:root{{{css_vars}}}\n{_asset('viewer.css')}\n{syntax_css()}</style></head>"
        f'<body data-leaf="{esc(leaf)}">'
        '<button type="button" id="sidebar-toggle" title="Session tree">☰</button><div id="app">'
        '<aside id="sidebar"><div class="sidebar-header">'
        '<input type="search" id="tree-search" placeholder="Search..." aria-label="Search the session tree">'
        '<div class="sidebar-filters">'
        '<button type="button" class="filter-btn active" data-filter="default" title="Hide settings entries">Default</button>'
        '<button type="button" class="filter-btn" data-filter="no-tools" title="Default without tool results">No-tools</button>'
        '<button type="button" class="filter-btn" data-filter="user-only" title="User messages only">User</button>'
        '<button type="button" class="filter-btn" data-filter="labeled-only" title="Labeled entries only">Labeled</button>'
        '<button type="button" class="filter-btn" data-filter="all" title="Every entry">All</button>'
        f'</div></div><nav class="tree-container" id="tree-container" aria-label="Session tree">{_tree_rows(entries, labels)}</nav>'
        '<div class="tree-status" id="tree-status"></div></aside>'
        f'<main id="content">{_header_html(header, name, session_stats(entries), download, prompt_html)}'
        f'<div id="messages">{messages or "<p class=muted>(no messages)</p>"}</div></main></div>'
        f"<script>{script}</script></body></html>\n"
    )


def _is_css_color(value: str) -> bool:
    return bool(value) and all(ch.isalnum() or ch in "#(),.% " for ch in value)


def default_export_path(session_path: str | Path, cwd: str | Path | None = None) -> Path:
    """``pi-session-<basename>.html`` in the current directory."""
    base = Path(session_path).name
    base = base.removesuffix(".jsonl")
    return Path(cwd or Path.cwd()) / f"pi-session-{base}.html"


def export_html(
    session_path: str | Path,
    out_path: str | Path | None = None,
    *,
    colors: Mapping[str, str] | None = None,
    system_prompt: str | None = None,
    tools: list[ExportTool] | None = None,
    leaf_id: str | None = None,
) -> Path:
    """Write the viewer page of a session file; returns the output path (default ``pi-session-<name>.html``)."""
    source = Path(session_path)
    if not source.is_file():
        raise SessionError(f"File not found: {source}")
    loaded = load_file(source)
    if not loaded.records:
        raise SessionError(f"Not a session file: {source}")
    from pi_core.sessions.migrate import migrate_records

    records = loaded.records
    migrate_records(records)  # in memory: old files get ids so the tree can be drawn
    jsonl = redact(source.read_text(encoding="utf-8", errors="replace"))
    out = Path(out_path) if out_path else default_export_path(source)
    page = render_session_html(
        records, source.name, jsonl=jsonl, colors=colors, system_prompt=system_prompt,
        tools=tools, leaf_id=leaf_id,
    )
    out.write_text(redact(page), encoding="utf-8")
    return out
