"""HTML of one session entry for the export: messages, tool calls with their results, summaries, notices.

Every piece of session text goes through ``esc`` or the sanitising Markdown renderer; nothing from the
session reaches the page as markup.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pi_core.export.markdown import highlight_code, render_markdown
from pi_core.sessions.describe import (
    SKILL_BLOCK,
    as_dict,
    as_list,
    content_text,
    read_line_range,
    shorten_home,
)
from pi_core.sessions.format import Entry

_IMAGE_MIME = re.compile(r"^image/(png|jpeg|gif|webp|bmp)$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
INVALID_ARG = '<span class="tool-error">[invalid arg]</span>'


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


@dataclass
class RenderContext:
    """What rendering one entry needs to know about the others."""

    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # open: session messages and content blocks, Pi's JSON; toolCallId -> toolResult message
    labels: dict[str, str] = field(default_factory=dict)
    leading_system: set[str] = field(default_factory=set)  # ids of system entries that start their branch
    known_calls: set[str] = field(default_factory=set)  # toolCall ids that some assistant message carries


def _images(content: Any, css: str) -> str:
    if not isinstance(content, list):
        return ""
    out = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "image":
            continue
        mime, data = str(block.get("mimeType") or "image/png"), str(block.get("data") or "")
        if _IMAGE_MIME.match(mime) and _BASE64.match(data):
            out.append(f'<img class="{css}" alt="image" src="data:{mime};base64,{"".join(data.split())}">')
        else:
            out.append('<span class="muted">[image]</span>')
    return f'<div class="images">{"".join(out)}</div>' if out else ""


def _text_of(content: Any) -> str:
    return content_text(content, "\n")


def _str_arg(value: Any) -> str | None:
    """A string argument, ``""`` when absent, None when the model sent another type."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def expandable(text: str, preview_lines: int, language: str | None = None, path: str | None = None) -> str:
    """Output shown as its first lines with a way to open the rest; short outputs are shown whole."""
    text = text.replace("\t", "   ")
    css = "hl" if language or path else "plain"
    # Pygments closes its spans at every line end, so the preview can be cut from the highlighted text.
    shown = (highlight_code(text, language, path) if css == "hl" else esc(text)).split("\n")
    if len(shown) <= preview_lines:
        return f'<div class="tool-output"><pre class="{css}"><code>{chr(10).join(shown)}</code></pre></div>'
    remaining = len(shown) - preview_lines
    preview = "\n".join(shown[:preview_lines])
    return (
        f'<details class="tool-output expandable"><summary><div class="output-preview"><pre class="{css}"><code>{preview}'
        f'</code></pre><div class="expand-hint">... ({remaining} more lines)</div></div><div class="collapse-hint">show less'
        f'</div></summary><div class="output-full"><pre class="{css}"><code>{chr(10).join(shown)}</code></pre></div></details>'
    )


def _header(name: str, detail: str = "") -> str:
    return f'<div class="tool-header"><span class="tool-name">{esc(name)}</span> {detail}</div>'


def _path_html(value: str | None, default: str = "") -> str:
    if value is None:
        return INVALID_ARG
    return f'<span class="tool-path">{esc(shorten_home(value or default))}</span>'


def tool_call_html(block: dict[str, Any], result: dict[str, Any] | None) -> str:  # open: session messages and content blocks, Pi's JSON
    name = str(block.get("name") or "")
    args = as_dict(block.get("arguments"))
    status = "pending" if result is None else "error" if result.get("isError") else "success"
    output = _text_of(result.get("content")) if result else ""
    parts: list[str] = []
    if name == "bash":
        command = _str_arg(args.get("command"))
        shown = INVALID_ARG if command is None else esc(command or "...")
        parts.append(f'<div class="tool-command">$ {shown}</div>')
        if output.strip():
            parts.append(expandable(output.strip(), 5))
    elif name == "read":
        path = _str_arg(args.get("file_path", args.get("path")))
        line_range = read_line_range(args.get("offset"), args.get("limit")) if path is not None else ""
        extra = f'<span class="line-numbers">{esc(line_range)}</span>' if line_range else ""
        parts.append(_header("read", _path_html(path) + extra))
        if result:
            parts.append(_images(result.get("content"), "tool-image"))
            if output:
                parts.append(expandable(output, 10, path=path or None))
    elif name == "write":
        path = _str_arg(args.get("file_path", args.get("path")))
        content = _str_arg(args.get("content"))
        count = len(content.split("\n")) if content else 0
        extra = f' <span class="line-count">({count} lines)</span>' if count > 10 else ""
        parts.append(_header("write", _path_html(path) + extra))
        if content is None:
            parts.append('<div class="tool-error">[invalid content arg - expected string]</div>')
        elif content:
            parts.append(expandable(content, 10, path=path or None))
        if output.strip():
            parts.append(f'<div class="tool-output"><pre class="plain">{esc(output.strip())}</pre></div>')
    elif name == "edit":
        path = _str_arg(args.get("file_path", args.get("path")))
        parts.append(_header("edit", _path_html(path)))
        diff = as_dict(result.get("details")).get("diff") if result else None
        if isinstance(diff, str) and diff:
            parts.append(diff_html(diff))
        elif output.strip():
            parts.append(f'<div class="tool-output"><pre class="plain">{esc(output.strip())}</pre></div>')
    elif name == "ls":
        path = _str_arg(args.get("path"))
        limit = args.get("limit")
        extra = f' <span class="line-count">(limit {esc(limit)})</span>' if limit is not None else ""
        parts.append(_header("ls", _path_html(path, ".") + extra))
        if output.strip():
            parts.append(expandable(output.strip(), 20))
    else:
        parts.append(_header(name))
        arguments = json.dumps(args, indent=2, ensure_ascii=False)
        parts.append(f'<div class="tool-output"><pre class="plain">{esc(arguments)}</pre></div>')
        if result:
            parts.append(_images(result.get("content"), "tool-image"))
        if output:
            parts.append(expandable(output, 10))
    call_id = esc(block.get("id") or "")
    return f'<div class="tool-execution {status}" id="call-{call_id}">{"".join(parts)}</div>'


def diff_html(diff: str) -> str:
    rows = []
    for line in diff.split("\n"):
        css = "diff-added" if line.startswith("+") else "diff-removed" if line.startswith("-") else "diff-context"
        rows.append(f'<div class="{css}">{esc(line.replace(chr(9), "   ")) or " "}</div>')
    return f'<div class="tool-diff">{"".join(rows)}</div>'


def _user_html(message: dict[str, Any]) -> str:
    content = message.get("content")
    text = _text_of(content)
    skill = SKILL_BLOCK.match(text)
    images = _images(content, "message-image")
    if skill:
        name, body, rest = skill.group(1), skill.group(3), skill.group(4)
        out = (
            f'<details class="skill-invocation"><summary><span class="skill-label">[skill] {esc(name)}</span>'
            f'<span class="skill-collapsed"> {esc(name)} (click to expand)</span></summary>'
            f'<div class="markdown">{render_markdown(body)}</div></details>'
        )
        if images or (rest and rest.strip()):
            out += f'<div class="user-message">{images}<div class="markdown">{render_markdown(rest.strip() if rest else "")}</div></div>'
        return out
    body = f'<div class="markdown">{render_markdown(text)}</div>' if text.strip() else ""
    return f'<div class="user-message">{images}{body}</div>'


def _assistant_html(message: dict[str, Any], ctx: RenderContext) -> str:
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    parts = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and str(block.get("text") or "").strip():
            parts.append(f'<div class="assistant-text markdown">{render_markdown(str(block["text"]))}</div>')
        elif kind == "thinking" and str(block.get("thinking") or "").strip():
            parts.append(
                f'<details class="thinking" open><summary><span class="thinking-collapsed">Thinking ...</span></summary>'
                f'<div class="thinking-text">{esc(block["thinking"])}</div></details>'
            )
    for block in blocks:
        if block.get("type") == "toolCall":
            parts.append(tool_call_html(block, ctx.results.get(str(block.get("id")))))
    stop = message.get("stopReason")
    if stop == "aborted":
        parts.append('<div class="error-text">Aborted</div>')
    elif stop == "error":
        parts.append(f'<div class="error-text">Error: {esc(message.get("errorMessage") or "Unknown error")}</div>')
    return "".join(parts)


def _bash_html(message: dict[str, Any]) -> str:
    code = message.get("exitCode")
    failed = bool(message.get("cancelled")) or (code is not None and code != 0)
    out = f'<div class="tool-execution {"error" if failed else "success"}"><div class="tool-command">$ {esc(message.get("command") or "")}</div>'
    if message.get("output"):
        out += expandable(str(message["output"]), 10)
    if message.get("cancelled"):
        out += '<div class="warning-text">(cancelled)</div>'
    elif failed:
        out += f'<div class="error-text">(exit {esc(code)})</div>'
    return out + "</div>"


def system_prompt_html(title: str, text: str) -> str:
    lines = text.split("\n")
    if len(lines) <= 10:
        return f'<div class="system-prompt"><div class="system-prompt-header">{esc(title)}</div><pre class="plain">{esc(text)}</pre></div>'
    preview = "\n".join(lines[:10])
    return (
        f'<details class="system-prompt"><summary><div class="system-prompt-header">{esc(title)}</div>'
        f'<pre class="plain output-preview">{esc(preview)}</pre><div class="expand-hint">... ({len(lines) - 10} more lines,'
        f' click to expand)</div></summary><pre class="plain output-full">{esc(text)}</pre></details>'
    )


def tools_list_html(title: str, tools: list[dict[str, Any]] | None) -> str:  # open: session messages and content blocks, Pi's JSON
    if not tools:
        return ""
    items = []
    for tool in tools:
        params = as_dict(tool.get("parameters"))
        properties = as_dict(params.get("properties"))
        required = as_list(params.get("required"))
        head = f'<span class="tool-item-name">{esc(tool.get("name", ""))}</span> - <span class="tool-item-desc">{esc(tool.get("description", ""))}</span>'
        if not properties:
            items.append(f'<div class="tool-item">{head}</div>')
            continue
        rows = []
        for pname, prop in properties.items():
            prop = as_dict(prop)
            req = "required" if pname in required else "optional"
            desc = f'<div class="tool-param-desc">{esc(prop["description"])}</div>' if prop.get("description") else ""
            rows.append(
                f'<div class="tool-param"><span class="tool-param-name">{esc(pname)}</span> '
                f'<span class="tool-param-type">{esc(prop.get("type", "any"))}</span> <span class="tool-param-{req}">{req}</span>{desc}</div>'
            )
        items.append(f'<details class="tool-item"><summary>{head}</summary>{"".join(rows)}</details>')
    return f'<div class="tools-list"><div class="tools-header">{esc(title)}</div>{"".join(items)}</div>'


def _system_html(entry: Entry, message: dict[str, Any], ctx: RenderContext) -> str:
    text = _text_of(message.get("content"))
    sections = as_dict(message.get("sections"))
    added = as_list(message.get("toolsAdded"))
    removed = as_list(message.get("toolsRemoved"))
    if entry.get("id") in ctx.leading_system:
        full = "\n\n".join(p for p in [text, *(str(v) for v in sections.values() if v is not None)] if p)
        return (system_prompt_html("System Prompt", full) if full else "") + tools_list_html("Available Tools", added)
    pieces = [text] if text else []
    for name, value in sections.items():
        pieces.append(f'Removed system prompt section "{name}".' if value is None else f'Updated system prompt section "{name}":\n\n{value}')
    changes = system_update_summary(message)
    out = system_prompt_html(f"System Prompt Update{': ' + changes if changes else ''}", "\n\n".join(pieces)) if pieces else ""
    out += tools_list_html("Tools Added", added)
    if removed:
        out += tools_list_html("Tools Removed", [{"name": t.get("name", ""), "description": ""} for t in removed if isinstance(t, dict)])
    return out


def system_update_summary(message: dict[str, Any]) -> str:  # open: session messages and content blocks, Pi's JSON
    parts = ["instructions"] if _text_of(message.get("content")) else []
    sections = as_dict(message.get("sections"))
    parts += [f"-{name}" if value is None else str(name) for name, value in sections.items()]
    tools = [f"+{t.get('name')}" for t in message.get("toolsAdded") or [] if isinstance(t, dict)]
    tools += [f"-{t.get('name')}" for t in message.get("toolsRemoved") or [] if isinstance(t, dict)]
    if tools:
        parts.append("tools " + " ".join(tools))
    return ", ".join(parts)


def entry_body_html(entry: Entry, ctx: RenderContext) -> tuple[str, str]:
    """(css kind, inner HTML) of an entry; an empty body means the entry shows nothing in the transcript."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        role = message.get("role")
        if role == "user":
            return "user", _user_html(message)
        if role == "assistant":
            return "assistant", _assistant_html(message, ctx)
        if role == "bashExecution":
            return "bash", _bash_html(message)
        if role == "system":
            return "system", _system_html(entry, message, ctx)
        if role == "toolResult":
            if str(message.get("toolCallId")) in ctx.known_calls:
                return "tool-result", ""
            return "tool-result", tool_call_html({"id": message.get("toolCallId"), "name": message.get("toolName") or "tool"}, message)
        return "other", f'<pre class="plain">{esc(json.dumps(message, indent=2, ensure_ascii=False))}</pre>'
    if kind == "model_change":
        model = f"{entry.get('provider', '')}/{entry.get('modelId', '')}"
        return "model-change", f'Switched to model: <span class="model-name">{esc(model)}</span>'
    if kind == "thinking_level_change":
        return "thinking-change", f'Thinking level: <span class="model-name">{esc(entry.get("thinkingLevel", ""))}</span>'
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        count = f"{tokens:,}" if isinstance(tokens, int) else esc(tokens)
        return "compaction", (
            f'<details class="compaction-block"><summary><span class="compaction-label">[compaction]</span> '
            f'Compacted from {count} tokens</summary><div class="markdown">{render_markdown(str(entry.get("summary") or ""))}</div></details>'
        )
    if kind == "branch_summary":
        return "branch-summary", (
            f'<div class="branch-summary-header">Branch Summary</div>'
            f'<div class="markdown">{render_markdown(str(entry.get("summary") or ""))}</div>'
        )
    if kind == "custom_message":
        hidden = entry.get("display") is False
        content = entry.get("content")
        text = content if isinstance(content, str) else _text_of(content) or json.dumps(content, ensure_ascii=False)
        note = " · Hidden in terminal" if hidden else ""
        return ("custom hidden-message" if hidden else "custom"), (
            f'<div class="custom-type">[{esc(entry.get("customType", ""))}]{note}</div>'
            f'{_images(content, "message-image")}<div class="markdown">{render_markdown(text)}</div>'
        )
    if kind == "session_info" and entry.get("name"):
        return "session-info", f'Session name: <span class="model-name">{esc(entry["name"])}</span>'
    return str(kind or "unknown"), ""
