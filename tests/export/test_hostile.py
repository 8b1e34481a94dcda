"""The export of a hostile session runs no script: markup, event handlers and javascript: URLs in every field a
session can carry stay text. Checked with the page's Content-Security-Policy and, to prove the escaping
itself, once more with that policy removed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from chromium import Browser, Page

from pi_core.export.html import export_html

XSS = '<script>window.pwned=1;alert(1)</script><img src=x onerror="window.pwned=2;alert(2)">'
QUOTE = '"><svg onload=alert(3)>\'><script>alert(4)</script>'
MARKDOWN = (
    f"# Title {XSS}\n\n[a](javascript:window.pwned=5) [b](java\tscript:alert(6)) [c](data:text/html,<script>alert(7)</script>)"
    " <javascript:alert(8)> ![d](javascript:alert(9)) ![e](x\" onerror=\"alert(10)) [f](vbscript:msgbox)"
    "\n\n```html\n</code></pre><script>alert(11)</script>\n```\n\n<iframe src=javascript:alert(12)></iframe>"
)


def hostile_records() -> list[dict[str, Any]]:
    ts = f'2026-01-01T00:00:00.000Z{QUOTE}'
    evil_id = f"id{QUOTE}"
    call_id = f"call{QUOTE}"
    image = {"type": "image", "mimeType": 'image/png" onerror="alert(13)', "data": f'AAAA"{QUOTE}'}
    good_image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo=\" onerror=\"alert(14)"}
    return [
        {"type": "session", "version": 3, "id": f"sess{QUOTE}", "timestamp": ts, "cwd": f"/tmp/{XSS}"},
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": ts, "provider": XSS, "modelId": QUOTE},
        {"type": "session_info", "id": "n0", "parentId": "m0", "timestamp": ts, "name": f"</title>{XSS}"},
        {"type": "message", "id": evil_id, "parentId": "n0", "timestamp": ts,
         "message": {"role": "user", "content": [{"type": "text", "text": MARKDOWN}, image, good_image], "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": evil_id, "timestamp": ts, "message": {
            "role": "assistant", "provider": XSS, "model": QUOTE, "stopReason": "error", "errorMessage": XSS,
            "usage": {"input": "<b>", "output": None, "cost": {"total": "x"}},
            "content": [{"type": "thinking", "thinking": f"</details>{XSS}"}, {"type": "text", "text": MARKDOWN},
                        {"type": "toolCall", "id": call_id, "name": f"tool{QUOTE}", "arguments": {"path": XSS, QUOTE: XSS}},
                        {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": f"{XSS}.html", "offset": QUOTE}},
                        {"type": "toolCall", "id": "c3", "name": "edit", "arguments": {"path": XSS}},
                        {"type": "toolCall", "id": "c4", "name": "bash", "arguments": {"command": XSS}}]}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": ts, "message": {
            "role": "toolResult", "toolCallId": call_id, "toolName": XSS, "isError": True,
            "content": [{"type": "text", "text": XSS * 20}, image]}},
        {"type": "message", "id": "r2", "parentId": "r1", "timestamp": ts, "message": {
            "role": "toolResult", "toolCallId": "c2", "toolName": "read", "content": [{"type": "text", "text": XSS}]}},
        {"type": "message", "id": "r3", "parentId": "r2", "timestamp": ts, "message": {
            "role": "toolResult", "toolCallId": "c3", "toolName": "edit", "content": [],
            "details": {"diff": f"+{XSS}\n-{QUOTE}"}}},
        {"type": "message", "id": "r4", "parentId": "r3", "timestamp": ts, "message": {
            "role": "toolResult", "toolCallId": "orphan" + QUOTE, "toolName": XSS, "content": [{"type": "text", "text": XSS}]}},
        {"type": "label", "id": "l1", "parentId": "r4", "timestamp": ts, "targetId": evil_id, "label": XSS},
        {"type": "compaction", "id": "k1", "parentId": "l1", "timestamp": ts, "summary": MARKDOWN, "tokensBefore": QUOTE,
         "firstKeptEntryId": "a1"},
        {"type": "branch_summary", "id": "bs", "parentId": "k1", "timestamp": ts, "summary": MARKDOWN, "fromId": QUOTE},
        {"type": "custom_message", "id": "x1", "parentId": "bs", "timestamp": ts, "customType": XSS,
         "content": [{"type": "text", "text": MARKDOWN}, image], "display": True},
        {"type": "message", "id": "b1", "parentId": "x1", "timestamp": ts, "message": {
            "role": "bashExecution", "command": XSS, "output": XSS, "exitCode": QUOTE, "cancelled": False}},
        {"type": "message", "id": "s1", "parentId": "b1", "timestamp": ts, "message": {
            "role": "system", "content": XSS, "sections": {QUOTE: XSS}, "toolsAdded": [
                {"name": XSS, "description": XSS, "parameters": {"properties": {QUOTE: {"type": XSS, "description": XSS}}}}]}},
        {"type": "message", "id": "w1", "parentId": "s1", "timestamp": ts, "message": {"role": f"<{XSS}>", "content": XSS}},
        {"type": "thinking_level_change", "id": "t1", "parentId": "w1", "timestamp": ts, "thinkingLevel": XSS},
    ]


def write(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in hostile_records()))
    return path


def assert_inert(page: Page) -> None:
    page.press("o")
    page.press("h")
    page.click(".tree-node")
    assert page.dialogs == []
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('iframe, svg, object, embed, link').length") == 0
    handlers = page.evaluate(
        "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes)"
        ".filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))"
    )
    assert handlers == []
    schemes = page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.protocol)")
    assert set(schemes) <= {"file:", "data:"}  # relative links, and the JSONL download
    sources = page.evaluate("Array.from(document.querySelectorAll('[src]')).map(e => e.getAttribute('src'))")
    assert all(re.fullmatch(r"data:image/png;base64,[A-Za-z0-9+/=]*", s) for s in sources), sources
    assert page.console_errors == []
    text = page.evaluate("document.body.innerText")
    assert "<script>window.pwned=1;alert(1)</script>" in text  # shown as text, not run


def test_hostile_session_runs_no_script(browser: Browser, tmp_path: Path) -> None:
    out = export_html(write(tmp_path / "evil.jsonl"), tmp_path / "evil.html")
    page = browser.open(out.as_uri())
    page.wait_for("document.getElementById('tree-status').textContent.length > 0")
    assert_inert(page)


def test_escaping_holds_without_the_content_security_policy(browser: Browser, tmp_path: Path) -> None:
    out = export_html(write(tmp_path / "evil.jsonl"), tmp_path / "evil.html")
    page_text = out.read_text()
    stripped, count = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page_text)
    assert count == 1
    (tmp_path / "bare.html").write_text(stripped)
    page = browser.open((tmp_path / "bare.html").as_uri())
    page.wait_for("document.getElementById('tree-status').textContent.length > 0")
    assert_inert(page)


def test_policy_allows_only_the_viewer_script(tmp_path: Path) -> None:
    page = export_html(write(tmp_path / "evil.jsonl"), tmp_path / "evil.html").read_text()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy and "script-src 'sha256-" in policy.group(1) and "unsafe-inline" not in policy.group(1).split("style-src")[0]
    assert "default-src 'none'" in policy.group(1)
