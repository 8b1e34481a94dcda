"""truncated_tool: rg output beyond 2000 lines is cut with pi's notice, and the full output is saved."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pi_core.testing.fake_script import Reply


def test_long_output_is_truncated_and_saved_in_full(example) -> None:
    (example.cwd / "big.txt").write_text("".join(f"n{n}\n" for n in range(3000)))
    example.server.add(Reply(tool_calls=[("rg", {"pattern": "n"})]), Reply(text="done"))
    done = example.run("truncated_tool", "--no-session", "--mode", "json", "search")
    assert done.returncode == 0, done.stderr
    text = example.tool_results(1)[0]
    assert text.startswith("./big.txt:1:n0\n./big.txt:2:n1\n")
    # rg's output ends in a newline, so the truncation counts an empty 3001st line, as Pi's does.
    notice = re.search(r"\[Output truncated: showing 2000 of 3001 lines \((.+?) of (.+?)\)\. 1001 lines "
                       r"\((.+?)\) omitted\. Full output saved to: (.+)\]$", text)
    assert notice, text[-300:]
    saved = Path(notice.group(4))
    assert saved.name == "output.txt" and saved.parent.name.startswith("pi-rg-")
    assert saved.read_text().splitlines()[2999] == "./big.txt:3000:n2999"
    end = next(json.loads(line) for line in done.stdout.splitlines() if '"tool_execution_end"' in line)
    assert end["result"]["details"]["matchCount"] == 3000
    assert end["result"]["details"]["truncation"]["truncatedBy"] == "lines"
    assert end["result"]["details"]["fullOutputPath"] == str(saved)
    tool = next(t for t in example.server.requests[0].body["tools"] if t["name"] == "rg")
    assert tool["description"] == ("Search file contents using ripgrep. Output is truncated to 2000 lines or 50.0KB "
                                   "(whichever is hit first). If truncated, full output is saved to a temp file.")


def test_short_output_passes_untouched_and_no_match_says_so(example) -> None:
    (example.cwd / "a.py").write_text("alpha\nbeta\n")
    (example.cwd / "b.txt").write_text("alpha\n")
    example.server.add(Reply(tool_calls=[("rg", {"pattern": "alpha", "glob": "*.py"})]),
                       Reply(tool_calls=[("rg", {"pattern": "zeta"})]), Reply(text="done"))
    done = example.run("truncated_tool", "--no-session", "-p", "search")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1) == ["./a.py:1:alpha\n"]
    assert example.tool_results(2) == ["No matches found"]


def test_bad_regex_is_a_clear_tool_error(example) -> None:
    example.server.add(Reply(tool_calls=[("rg", {"pattern": "("})]), Reply(text="done"))
    done = example.run("truncated_tool", "--no-session", "-p", "search")
    assert done.returncode == 0, done.stderr
    text = example.tool_results(1)[0]
    assert text.startswith("ripgrep failed: rg: regex parse error") and "Traceback" not in text
