"""Mermaid blocks in the HTML export (issue 36), in headless Chromium: drawn as the transcript draws them, in the
theme's colours, the source folded under the diagram; a kind nothing draws stays a code block."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from chromium import Browser

TS = "2026-03-01T10:00:00.000Z"
REPLY = ("The flow:\n\n```mermaid\nflowchart LR\n  A[Parse input] --> B[Write output]\n```\n\n"
         "Who talks:\n\n```mermaid\n%% a comment first\nsequenceDiagram\n  Alice->>Bob: Hello <Bob>\n```\n\n"
         "Not drawn:\n\n```mermaid\nsankey-beta\n  Input,Output,5\n```\n")


def _session(path: Path) -> Path:
    header = {"type": "session", "version": 3, "id": "sess-mermaid", "timestamp": TS, "cwd": "/home/dev/project"}
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    records = [
        {"type": "message", "id": "u1", "parentId": None, "timestamp": TS,
         "message": {"role": "user", "content": "Draw it", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": TS,
         "message": {"role": "assistant", "content": [{"type": "text", "text": REPLY}], "api": "anthropic-messages",
                     "provider": "anthropic", "model": "claude-test", "usage": usage, "stopReason": "stop",
                     "timestamp": 2}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))
    return path


def test_the_export_draws_mermaid_blocks_and_keeps_their_source(browser: Browser, tmp_path: Path) -> None:
    out = tmp_path / "out.html"
    done = subprocess.run([str(Path(sys.executable).parent / "pi"), "--export", str(_session(tmp_path / "s.jsonl")),
                           str(out)], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    page = browser.open(out.as_uri())
    page.wait_for("document.getElementById('tree-status').textContent.length > 0")
    article = "document.getElementById('entry-a1')"
    diagrams = page.evaluate(f"Array.from({article}.querySelectorAll('pre.mermaid-diagram')).map(e => e.innerText)")
    assert len(diagrams) == 2
    flow = diagrams[0].splitlines()
    assert any("│  Parse input  ├" in line and "►│  Write output  │" in line for line in flow), diagrams[0]
    assert "┌───────────────┐" in diagrams[0]
    assert "Alice" in diagrams[1] and "Hello <Bob>" in diagrams[1] and "►" in diagrams[1]
    # the source sits folded under each diagram; the undrawable kind stays a code block
    text = page.evaluate(f"{article}.innerText")
    assert "A[Parse input]" not in text and text.count("Mermaid source") == 2
    assert "sankey-beta" in text and "Input,Output,5" in text
    page.click("#entry-a1 details.mermaid-source summary")
    assert "A[Parse input] --> B[Write output]" in page.evaluate(f"{article}.innerText")
    edge = page.evaluate(f"getComputedStyle({article}.querySelector('pre.mermaid-diagram .mm-accent')).color")
    box = page.evaluate(f"getComputedStyle({article}.querySelector('pre.mermaid-diagram .mm-borderMuted')).color")
    assert edge != box
