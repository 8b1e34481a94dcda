"""git_merge_and_resolve: after each run, merges the upstream branch and hands any conflicts to the model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext


@dataclass(frozen=True)
class ConflictBlock:
    file: str
    start_line: int
    separator_line: int
    end_line: int


def blocks_in(file: str, text: str) -> list[ConflictBlock]:
    blocks: list[ConflictBlock] = []
    start: int | None = None
    separator: int | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        if line.startswith("<<<<<<<"):
            start, separator = number, None
        elif line.startswith("=======") and start is not None:
            separator = number
        elif line.startswith(">>>>>>>") and start is not None and separator is not None:
            blocks.append(ConflictBlock(file, start, separator, number))
            start = separator = None
    return blocks


async def find_conflicts(ctx: ExtensionContext) -> list[ConflictBlock]:
    unmerged = await ctx.exec("git", ["diff", "--name-only", "--diff-filter=U"])
    if unmerged.code != 0 or not unmerged.stdout.strip():
        return []
    blocks: list[ConflictBlock] = []
    for file in unmerged.stdout.strip().split("\n"):
        try:
            text = (Path(ctx.cwd) / file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # deleted on one side, or binary: nothing to point at
        blocks.extend(blocks_in(file, text))
    return blocks


def line_range(start: int, end: int) -> str:
    if start > end:
        return "empty"
    return f"{start}" if start == end else f"{start}-{end}"


def describe_conflicts(ref: str, blocks: list[ConflictBlock]) -> str:
    lines = [f"Merged {ref} with conflicts:", ""]
    for block in blocks:
        ours = line_range(block.start_line + 1, block.separator_line - 1)
        theirs = line_range(block.separator_line + 1, block.end_line - 1)
        lines.append(f"  {block.file}:{block.start_line}-{block.end_line} (ours {ours}, theirs {theirs})")
    lines += ["", "Resolve these conflicts."]
    return "\n".join(lines)


async def merge_upstream(ctx: ExtensionContext) -> str | None:
    """Fetch and merge the tracking branch; returns the ref to report when conflicts may remain, else None."""
    if (await ctx.exec("git", ["rev-parse", "MERGE_HEAD"])).code == 0:
        return "MERGE_HEAD"  # an unfinished merge from before: report its conflicts again
    if (await ctx.exec("git", ["status", "--porcelain"])).stdout.strip():
        return None  # never merge into uncommitted work
    upstream = await ctx.exec("git", ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}"])
    if upstream.code != 0:
        return None
    ref = upstream.stdout.strip()
    remote = ref.split("/")[0]
    ctx.ui.notify(f"git-merge-and-resolve: fetching {remote}, merging {ref}", "info")
    fetched = await ctx.exec("git", ["fetch", remote])
    if fetched.code != 0:
        ctx.ui.notify(f"git-merge-and-resolve: fetch failed: {fetched.stderr.strip()}", "warning")
        return None
    if (await ctx.exec("git", ["merge", "--no-ff", ref])).code == 0:
        return None
    return ref


@hookimpl
async def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    if event.type != "agent_end":
        return
    if (await ctx.exec("git", ["rev-parse", "--git-dir"])).code != 0:
        return
    ref = await merge_upstream(ctx)
    if ref is None:
        return
    conflicts = await find_conflicts(ctx)
    if conflicts:
        ctx.send_user_message(describe_conflicts(ref, conflicts), deliver_as="followUp")
