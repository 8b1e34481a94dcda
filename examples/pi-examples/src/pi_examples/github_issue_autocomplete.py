"""github_issue_autocomplete: ``#123`` completions in the editor from the repository's open GitHub issues,
loaded once per session with ``gh issue list`` and filtered locally; other completions pass through."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_core import hookimpl
from pi_core.extension import ExtensionContext
from pi_core.signals import AbortSignal
from pi_core.tui.fuzzy import fuzzy_filter
from pi_core.ui import AutocompleteProvider, Suggestion, Suggestions

MAX_ISSUES = 100
MAX_SUGGESTIONS = 20
TOKEN = re.compile(r"(?:^|[ \t])#([^\s#]*)$")
REPO_URLS = [re.compile(r"git@github\.com:([^/]+/[^/]+?)(?:\.git)?"),
             re.compile(r"https?://github\.com/([^/]+/[^/]+?)(?:\.git)?")]


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    state: str

    def suggestion(self) -> Suggestion:
        return Suggestion(f"#{self.number}", f"#{self.number}", f"[{self.state.lower()}] {self.title}")


def issue_token(before_cursor: str) -> str | None:
    match = TOKEN.search(before_cursor)
    return match.group(1) if match else None


def github_repo(remote_url: str) -> str | None:
    for pattern in REPO_URLS:
        if match := pattern.fullmatch(remote_url):
            return match.group(1)
    return None


def matching(issues: list[Issue], query: str) -> list[Suggestion]:
    if not query.strip():
        return [issue.suggestion() for issue in issues[:MAX_SUGGESTIONS]]
    if query.isdigit():
        numbered = [issue for issue in issues if str(issue.number).startswith(query)]
        if numbered:
            return [issue.suggestion() for issue in numbered[:MAX_SUGGESTIONS]]
    found = fuzzy_filter(query, issues, lambda issue: f"{issue.number} {issue.title}")
    return [issue.suggestion() for issue in found[:MAX_SUGGESTIONS]]


async def resolve_repo(ctx: ExtensionContext, cwd: Path) -> str:
    """``owner/name`` of the first GitHub remote; raises ValueError with the message to show."""
    remotes = await ctx.exec("git", ["remote", "-v"], cwd=cwd, timeout=5)
    if remotes.code != 0:
        raise ValueError("github-issue-autocomplete: cwd is not a git repository")
    for line in remotes.stdout.splitlines():
        columns = line.split()
        repo = github_repo(columns[1]) if len(columns) > 1 else None
        if repo:
            return repo
    raise ValueError("github-issue-autocomplete: cwd is not a GitHub repository")


async def load_issues(ctx: ExtensionContext, repo: str) -> list[Issue] | None:
    listed = await ctx.exec("gh", ["issue", "list", "--repo", repo, "--state", "open", "--limit", str(MAX_ISSUES),
                                   "--json", "number,title,state"], timeout=5)
    if listed.code != 0:
        details = listed.stderr.strip() or f"exit code {listed.code}"
        ctx.ui.notify(f"github-issue-autocomplete: failed to load issues: {details}", "error")
        return None
    try:
        rows: Any = json.loads(listed.stdout)
        return [Issue(int(row["number"]), str(row["title"]), str(row["state"])) for row in rows]
    except (ValueError, TypeError, KeyError):
        ctx.ui.notify("github-issue-autocomplete: failed to parse gh issue list output", "error")
        return None


class IssueCompletions:
    """``#...`` answered from the preloaded issues; everything else goes to the provider below."""

    def __init__(self, below: AutocompleteProvider, issues: asyncio.Future[list[Issue] | None]) -> None:
        self.below, self.issues = below, issues
        self.trigger_characters = [*getattr(below, "trigger_characters", []), "#"]

    async def get_suggestions(self, lines: list[str], line: int, col: int,
                              signal: AbortSignal | None = None) -> Suggestions | None:
        token = issue_token((lines[line] if line < len(lines) else "")[:col])
        if token is not None:
            issues = await asyncio.shield(self.issues)
            found = matching(issues, token) if issues and not (signal and signal.aborted) else []
            if found:
                return Suggestions(found, f"#{token}")
        return await self.below.get_suggestions(lines, line, col, signal)


@hookimpl
async def pi_session_start(ctx: ExtensionContext) -> None:
    try:
        repo = await resolve_repo(ctx, ctx.cwd)
    except ValueError as err:
        ctx.ui.notify(str(err), "error")
        return
    issues = asyncio.ensure_future(load_issues(ctx, repo))
    ctx.ui.add_autocomplete_provider(lambda below: IssueCompletions(below, issues))
