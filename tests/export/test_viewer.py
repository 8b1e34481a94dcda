"""The export viewer in headless Chromium: Markdown elements, highlighted code, collapsible tool output and
thinking, the tree with every branch and its labels, search, filters, toggles and the JSONL download."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from chromium import Browser, Page

from pi_core.export.html import export_html

TS = "2026-03-01T10:00:00.000Z"
MARKDOWN = (
    "## Plan\n\nSteps:\n\n- first **bold** item\n- second `code` item\n\n1. one\n2. two\n\n"
    "```python\ndef answer() -> int:\n    return 42\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted"
)


def usage() -> dict[str, Any]:
    return {"input": 1200, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1230,
            "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.012}}


def message(entry_id: str, parent: str | None, body: dict[str, Any], minute: int) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": f"2026-03-01T10:{minute:02d}:00.000Z",
            "message": body}


def assistant(content: list[dict[str, Any]], stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
            "model": "claude-test", "usage": usage(), "stopReason": stop, "timestamp": 1}


def write_session(path: Path, records: list[dict[str, Any]]) -> Path:
    header = {"type": "session", "version": 3, "id": "sess-viewer-1", "timestamp": TS, "cwd": "/home/dev/project"}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return path


def viewer_session(path: Path) -> Path:
    long_output = "\n".join(f"line {i}" for i in range(1, 31))
    records = [
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": TS, "provider": "anthropic", "modelId": "claude-test"},
        message("u1", "m0", {"role": "user", "content": "Make a plan", "timestamp": 1}, 1),
        message("a1", "u1", assistant([{"type": "thinking", "thinking": "pondering deeply"},
                                       {"type": "text", "text": MARKDOWN},
                                       {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "seq 30"}}],
                                      "toolUse"), 2),
        message("r1", "a1", {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                             "content": [{"type": "text", "text": long_output}], "isError": False, "timestamp": 1}, 3),
        message("a2", "r1", assistant([{"type": "text", "text": "Main branch answer"}]), 4),
        {"type": "label", "id": "l1", "parentId": "a2", "timestamp": TS, "targetId": "u1", "label": "start-here"},
        message("u2", "a1", {"role": "user", "content": "Second branch question", "timestamp": 1}, 5),
        message("a3", "u2", assistant([{"type": "text", "text": "Second branch answer with needle"}]), 6),
        message("u3", "m0", {"role": "user", "content": "Third branch from the top", "timestamp": 1}, 7),
        {"type": "compaction", "id": "k1", "parentId": "u3", "timestamp": TS, "summary": "## Earlier\n\n- compacted work",
         "firstKeptEntryId": "u3", "tokensBefore": 45000},
        message("b1", "k1", {"role": "bashExecution", "command": "ls -la", "output": "total 0", "exitCode": 2,
                             "cancelled": False, "truncated": False, "timestamp": 1}, 8),
        {"type": "custom_message", "id": "x1", "parentId": "b1", "timestamp": TS, "customType": "reminder",
         "content": "hidden nudge", "display": False},
        message("a4", "x1", assistant([{"type": "text", "text": "Third branch answer"}]), 9),
    ]
    return write_session(path, records)


def open_page(browser: Browser, source: Path, out: Path) -> Page:
    page = browser.open(export_html(source, out).as_uri())
    page.wait_for("document.getElementById('tree-status').textContent.length > 0")
    return page


def visible_text(page: Page) -> str:
    return str(page.evaluate("document.getElementById('messages').innerText"))  # hidden elements give no text


def tree_rows(page: Page) -> list[str]:
    return list(page.evaluate(
        "Array.from(document.querySelectorAll('.tree-node:not([hidden])')).map(e => e.textContent)"
    ))


def test_markdown_code_and_collapsibles(browser: Browser, tmp_path: Path) -> None:
    page = open_page(browser, viewer_session(tmp_path / "s.jsonl"), tmp_path / "s.html")
    page.click(".tree-node[data-id='a2']")
    page.wait_for("!document.getElementById('entry-a2').hidden")
    article = "document.getElementById('entry-a1')"
    assert page.evaluate(f"{article}.querySelector('.markdown h2').textContent") == "Plan"
    assert page.evaluate(f"Array.from({article}.querySelectorAll('.markdown ul > li')).map(l => l.textContent)") == [
        "first bold item", "second code item"]
    assert page.evaluate(f"{article}.querySelectorAll('.markdown ol > li').length") == 2
    assert page.evaluate(f"{article}.querySelector('.markdown li strong').textContent") == "bold"
    assert page.evaluate(f"{article}.querySelector('.markdown table td').textContent") == "1"
    assert page.evaluate(f"{article}.querySelector('.markdown blockquote').textContent.trim()") == "quoted"
    # highlighted: the keyword is its own span, coloured from the theme's syntaxKeyword role
    keyword = page.evaluate(f"{article}.querySelector('pre.hl .k')")
    assert keyword is not None
    assert page.evaluate(f"getComputedStyle({article}.querySelector('pre.hl .k')).color") != page.evaluate(
        f"getComputedStyle({article}.querySelector('pre.hl .nf')).color")

    # thinking is open; T folds it to one line
    assert "pondering deeply" in page.evaluate(f"{article}.innerText")
    page.press("t")
    assert "pondering deeply" not in page.evaluate(f"{article}.innerText")
    assert "Thinking ..." in page.evaluate(f"{article}.innerText")
    # the bash call shows 5 of 30 lines; a click opens the rest, O opens every output
    output = f"{article}.querySelector('.tool-execution')"
    assert "line 5" in page.evaluate(f"{output}.innerText") and "line 6" not in page.evaluate(f"{output}.innerText")
    assert "... (25 more lines)" in page.evaluate(f"{output}.innerText")
    page.click("#entry-a1 .tool-output.expandable > summary")
    assert "line 30" in page.evaluate(f"{output}.innerText")
    page.click("#entry-a1 .tool-output.expandable > summary")
    assert "line 30" not in page.evaluate(f"{output}.innerText")
    page.press("o")
    assert "line 30" in page.evaluate(f"{output}.innerText")
    assert page.console_errors == []


def test_tree_lists_every_branch_with_labels_and_switches(browser: Browser, tmp_path: Path) -> None:
    page = open_page(browser, viewer_session(tmp_path / "s.jsonl"), tmp_path / "s.html")
    rows = tree_rows(page)
    for text in ("Main branch answer", "Second branch answer", "Third branch answer", "[compaction: 45k tokens]",
                 "[bash]: ls -la", "[reminder]: hidden nudge"):
        assert any(text in row for row in rows), text
    assert "[start-here] user: Make a plan" in [row.strip() for row in rows]  # off the current path: no dot
    assert page.evaluate("document.getElementById('tree-status').textContent") == "11 / 13 entries"

    # The file's last entry is the current leaf: the third branch is shown, with its summary and shell command
    shown = visible_text(page)
    assert "Third branch answer" in shown and "compacted work" not in shown and "Compacted from 45,000 tokens" in shown
    assert "$ ls -la" in shown and "(exit 2)" in shown and "Main branch answer" not in shown
    assert "hidden nudge" not in shown
    page.press("h")
    assert "hidden nudge" in visible_text(page)

    page.click(".tree-node[data-id='u2']")
    page.wait_for("!document.getElementById('entry-a3').hidden")
    shown = visible_text(page)
    assert "Second branch answer" in shown and "Make a plan" in shown and "Third branch" not in shown
    assert page.evaluate("document.querySelector('#entry-u1 .entry-label').textContent") == "start-here"
    page.press("Escape")
    page.wait_for("!document.getElementById('entry-a4').hidden")

    page.click(".filter-btn[data-filter='user-only']")
    assert [r.split("user: ")[-1] for r in tree_rows(page) if "user: " in r] == [
        "Third branch from the top", "Make a plan", "Second branch question"]
    assert [r.strip() for r in tree_rows(page) if "assistant:" in r] == ["•assistant: Third branch answer"]  # the leaf stays
    page.click(".filter-btn[data-filter='labeled-only']")
    assert [r for r in tree_rows(page) if "start-here" in r] and len(tree_rows(page)) == 2
    page.click(".filter-btn[data-filter='all']")
    assert any("[model: claude-test]" in r for r in tree_rows(page)) and any("[label: start-here]" in r for r in tree_rows(page))
    page.click(".filter-btn[data-filter='default']")
    page.click("#tree-search")
    page.evaluate("(() => { const s = document.getElementById('tree-search'); s.value = 'NEEDLE branch';"
                  " s.dispatchEvent(new Event('input')); })()")
    rows = tree_rows(page)
    assert any("needle" in r for r in rows) and not any("Main branch answer" in r for r in rows)
    assert page.console_errors == []


def test_page_is_self_contained_and_downloads_the_jsonl(browser: Browser, tmp_path: Path) -> None:
    source = viewer_session(tmp_path / "s.jsonl")
    page = open_page(browser, source, tmp_path / "s.html")
    assert page.evaluate("document.querySelectorAll('link, script[src], iframe, object, embed').length") == 0
    assert page.evaluate("Array.from(document.querySelectorAll('[src]')).every(e => e.src.startsWith('data:'))")
    link = "document.querySelector('a.download')"
    assert page.evaluate(f"{link}.getAttribute('download')") == "sess-viewer-1.jsonl"
    downloads = tmp_path / "downloads"
    browser.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    page.click("a.download")
    deadline = time.monotonic() + 10
    while not (downloads / "sess-viewer-1.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (downloads / "sess-viewer-1.jsonl").read_text() == source.read_text()
    header = page.evaluate("document.querySelector('.header-info').innerText")
    for text in ("Models:", "anthropic/claude-test", "3 user, 4 assistant, 1 tool results, 1 custom, 1 compactions", "Tool Calls:", "↑4.8k ↓120",
                 "$0.048", "/home/dev/project"):
        assert text in header, text
    # a deep link opens a given branch and entry, like Pi's share links
    deep = browser.open((tmp_path / "s.html").as_uri() + "?leafId=a3&targetId=u2")
    deep.wait_for("!document.getElementById('entry-a3').hidden")
    assert deep.evaluate("document.querySelector('.tree-node.active').dataset.id") == "u2"
    assert page.console_errors == [] and deep.console_errors == []


@pytest.mark.parametrize("width", [600])
def test_narrow_screen_opens_the_tree_from_a_button(browser: Browser, tmp_path: Path, width: int) -> None:
    page = open_page(browser, viewer_session(tmp_path / "s.jsonl"), tmp_path / "s.html")
    page.send("Emulation.setDeviceMetricsOverride", width=width, height=800, deviceScaleFactor=1, mobile=False)
    time.sleep(0.3)
    assert page.evaluate("document.getElementById('sidebar').getBoundingClientRect().right") <= 0
    page.click("#sidebar-toggle")
    page.wait_for("document.getElementById('sidebar').getBoundingClientRect().left >= 0")
