"""github_issue_autocomplete: typing ``#1`` in the editor offers the open issues a fake ``gh`` lists, ``@`` still
completes files; outside a GitHub checkout, or when ``gh`` fails, the user is told why."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pi_core.testing.fakebin import FakeBin
from tests.interactive.tmux_kit import pi_rig

ISSUES = [{"number": 12, "title": "Crash on start", "state": "OPEN"},
          {"number": 7, "title": "Slow search", "state": "OPEN"}]


def fake_gh(tmp_path: Path, body: str) -> tuple[FakeBin, dict[str, str]]:
    bins = FakeBin(tmp_path / "bin")
    bins.add("gh", body)
    return bins, {"PATH": bins.env()["PATH"]}


def repo(cwd: Path, url: str) -> None:
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    subprocess.run(["git", "-C", str(cwd), "remote", "add", "origin", url], check=True)


def test_hash_completes_open_issues_and_at_still_completes_files(tmp_path: Path) -> None:
    bins, env = fake_gh(tmp_path, f"print({json.dumps(json.dumps(ISSUES))})")
    with pi_rig(tmp_path, "gh-issues") as rig:
        repo(rig.cwd, "git@github.com:o/r.git")
        (rig.cwd / "notes.txt").write_text("x\n")
        rig.start("-e", "plugin:github_issue_autocomplete", "--no-session", env=env)
        rig.tmux.wait_for("fake-model")
        rig.tmux.type("fix #1")
        screen = rig.tmux.wait_for("Crash on start")
        assert "[open] Crash on start" in screen and "Slow search" not in screen
        rig.tmux.keys("Tab")
        rig.tmux.wait_for("fix #12")
        rig.tmux.type(" see @note")
        rig.tmux.wait_for("notes.txt")
        argv = bins.calls("gh")[0].argv
        assert argv == ["issue", "list", "--repo", "o/r", "--state", "open", "--limit", "100",
                        "--json", "number,title,state"]
        assert len(bins.calls("gh")) == 1, "loaded once per session"


def test_not_a_github_checkout(example, tmp_path: Path) -> None:
    bins, env = fake_gh(tmp_path, "print('[]')")
    repo(example.cwd, "https://gitlab.com/o/r.git")
    client = example.rpc("github_issue_autocomplete", "--no-session", env=env)
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "github-issue-autocomplete: cwd is not a GitHub repository"
    assert notice["notifyType"] == "error" and bins.calls("gh") == []


def test_a_failing_gh_is_reported(example, tmp_path: Path) -> None:
    _, env = fake_gh(tmp_path, "sys.stderr.write('gh: not logged in\\n'); sys.exit(4)")
    repo(example.cwd, "https://github.com/o/r")
    client = example.rpc("github_issue_autocomplete", "--no-session", env=env)
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == "github-issue-autocomplete: failed to load issues: gh: not logged in"
