"""Sessions written by Pi 1.6.0 show, in our export, everything Pi's own ``--export`` page shows.

pi_reference/ holds the visible text of Pi's page for each fixture (make_pi_reference.py), as it opens and
with tool outputs expanded. Our page, opened in the same headless Chromium, must contain every word of it
as many times (Markdown syntax aside: Pi prints compaction summaries raw, we render them), list the same
tree entries in the same order, and log no console error.
"""

from __future__ import annotations

import gzip
import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from chromium import Browser, Page

from pi_core.export.html import export_html

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
# Pi's own buttons and key hints; ours have other labels, the functions are checked in test_viewer.py.
PI_CHROME = {
    "✕", "T toggle thinking · O toggle tools · H toggle hidden messages", "Toggle thinking", "Toggle tools",
    "Show hidden messages", "Hide hidden messages",
}


def words(text: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for line in text.split("\n"):
        if line.strip() in PI_CHROME:
            continue
        for word in line.split():
            if word.startswith("```"):
                continue
            word = word.replace("`", "").replace("*", "").lstrip("•").strip("#|~>-")
            if not word or re.fullmatch(r"\d+\.", word):  # list numbers are not text in an <ol>
                continue
            if re.fullmatch(r"\$\d+\.\d{3}", word):  # Pi's template drops the dollar sign of the cost
                word = word[1:]
            found[word] += 1
    return found


def pi_text(name: str) -> str:
    return gzip.decompress((HERE / "pi_reference" / f"{name}.txt.gz").read_bytes()).decode()


def pi_tree_lines(text: str) -> list[str]:
    """Entry lines of Pi's sidebar: between the filter buttons and the "N / M entries" status."""
    lines = text.split("\n")
    start = lines.index("✕") + 1
    end = next(i for i, line in enumerate(lines) if re.fullmatch(r"\d+ / \d+ entries", line))
    return [line for line in lines[start:end] if line.strip() and line.strip() not in ("•", "├─", "└─", "│")]


def open_export(browser: Browser, name: str, tmp_path: Path) -> Page:
    out = export_html(FIXTURES / f"{name}.jsonl", tmp_path / f"{name}.html")
    page = browser.open(out.as_uri())
    page.wait_for("document.getElementById('tree-status').textContent.length > 0")
    return page


SLOW = [pytest.mark.slow, pytest.mark.skipif(os.environ.get("PI_SLOW_TESTS") != "1", reason="slow: PI_SLOW_TESTS=1")]


# before-compaction (2.4 MB, 1000 entries) takes ~12 s here; test_viewer.py covers compactions and shell
# commands by default.
@pytest.mark.parametrize("name", ["branched-with-summary", "large-session", pytest.param("before-compaction", marks=SLOW)])
def test_fixture_shows_everything_pis_export_shows(browser: Browser, name: str, tmp_path: Path) -> None:
    page = open_export(browser, name, tmp_path)
    reference = pi_text(name)
    missing = words(reference) - words(page.evaluate("document.body.innerText"))
    assert not missing, f"words on Pi's page missing from ours: {list(missing.items())[:20]}"

    ours_tree = page.evaluate(
        "Array.from(document.querySelectorAll('.tree-node:not([hidden]) .tree-content')).map(e => e.textContent)"
    )
    assert [" ".join(t.split()) for t in ours_tree] == [" ".join(t.split()) for t in pi_tree_lines(reference)]
    status = re.search(r"\d+ / \d+ entries", reference)
    assert status and page.evaluate("document.getElementById('tree-status').textContent") == status.group(0)

    page.press("o")  # every collapsed tool output opens, as on Pi's page
    time.sleep(0.1)
    missing = words(pi_text(f"{name}-expanded")) - words(page.evaluate("document.body.innerText"))
    assert not missing, f"expanded: words on Pi's page missing from ours: {list(missing.items())[:20]}"
    assert page.console_errors == []


def test_branch_summary_fixture_tree_and_branch_switch(browser: Browser, tmp_path: Path) -> None:
    """The /tree branch Pi made: the summary's branch is current, the abandoned branch one click away."""
    page = open_export(browser, "branched-with-summary", tmp_path)
    rows = page.evaluate(
        "Array.from(document.querySelectorAll('.tree-node')).map(e => e.querySelector('.tree-prefix').textContent"
        " + e.querySelector('.tree-marker').textContent + e.querySelector('.tree-content').textContent)"
    )
    assert rows[:10] == [
        "•user: TOOLTEST read a.txt",
        "•assistant: Let me read.",
        "•[read: a.txt]",
        "•assistant: Read done: the file says hello.",
        ("├─ •[branch summary]: The user explored a different conversation branch before returning here."
         " Summary of that exploration..."),
        "│     •user: TURN3 on the branch",
        "│     •assistant: third turn done",
        "└─  user: TURN2 run a command",
        "       [bash: echo second-turn]",
        "       assistant: second turn done",
    ]
    visible = "document.getElementById('messages').innerText"
    shown = page.evaluate(visible)
    assert "Branch Summary" in shown and "third turn done" in shown and "second turn done" not in shown
    assert page.evaluate("document.querySelector('.entry.branch-summary h2').textContent") == "Goal"
    page.click(".tree-node[data-id='ad20d304']")  # user: TURN2 on the other branch
    page.wait_for("!document.getElementById('entry-ad20d304').hidden")
    shown = page.evaluate(visible)
    assert "second-turn" in shown and "second turn done" in shown and "third turn done" not in shown
    assert page.console_errors == []
