"""tool_override: replace the built-in ``read`` with one that logs every access and refuses secrets."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_core import SlashCommand, Tool, ToolContext, ToolError, ToolResult, hookimpl
from pi_core.config_paths import agent_dir
from pi_core.extension import CommandContext
from pi_core.toolkit.mutation_queue import with_file_mutation_queue
from pi_core.toolkit.truncate import utf8_len
from pi_core.types import TextContent

BLOCKED_PATTERNS = [
    re.compile(r"\.env\Z"),
    re.compile(r"\.env\..+\Z"),
    re.compile(r"secrets?\.(json|yaml|yml|toml)\Z", re.IGNORECASE),
    re.compile(r"credentials?\.(json|yaml|yml|toml)\Z", re.IGNORECASE),
    re.compile(r"/\.ssh/"),
    re.compile(r"/\.aws/"),
    re.compile(r"/\.gnupg/"),
]
MAX_BYTES = 50 * 1024
LOG_LINES_SHOWN = 20

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}


def log_file() -> Path:
    return agent_dir() / "read-access.log"


def is_blocked(path: str) -> bool:
    return any(pattern.search(path) for pattern in BLOCKED_PATTERNS)


def log_access(path: str, allowed: bool, reason: str | None = None) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    line = f"[{stamp}] {'ALLOWED' if allowed else 'BLOCKED'}: {path}{f' ({reason})' if reason else ''}\n"
    target = log_file()

    def append() -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a", encoding="utf-8") as out:
            out.write(line)

    try:
        with_file_mutation_queue(target, append)
    except OSError:
        pass  # auditing is best effort: an unwritable log must not stop the read


def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    path = ctx.resolve(args["path"])
    if is_blocked(str(path)):
        log_access(str(path), False, "matches blocked pattern")
        return ToolResult(content=[TextContent(
            text=f'Access denied: "{args["path"]}" matches a blocked pattern (sensitive file). This tool blocks '
                 "access to .env files, secrets, credentials, and SSH/AWS/GPG directories.")],
            details={"blocked": True})
    log_access(str(path), True)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    except FileNotFoundError:
        raise ToolError(f"Error reading file: {args['path']}: no such file") from None
    except IsADirectoryError:
        raise ToolError(f"Error reading file: {args['path']} is a directory") from None
    except OSError as err:
        raise ToolError(f"Error reading file: {args['path']}: {err.strerror or err}") from None
    start = max(0, int(args["offset"]) - 1) if args.get("offset") else 0
    end = start + int(args["limit"]) if args.get("limit") else len(lines)
    text = "\n".join(lines[start:end])
    if utf8_len(text) > MAX_BYTES:
        text = f"{text[:MAX_BYTES]}\n\n[Output truncated at 50KB]"
    return ToolResult(content=[TextContent(text=text)], details={"lines": len(lines)})


TOOL = Tool(
    name="read",
    label="read (audited)",
    description="Read the contents of a file with access logging. Some sensitive paths (.env, secrets, "
                "credentials) are blocked.",
    parameters=PARAMETERS,
    execute=execute,
)


def show_log(args: str, ctx: CommandContext) -> None:
    try:
        entries = log_file().read_text(encoding="utf-8").strip().split("\n")[-LOG_LINES_SHOWN:]
    except OSError:
        ctx.ui.notify("No access log found", "info")
        return
    ctx.ui.notify("Recent file access:\n" + "\n".join(entries), "info")


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


@hookimpl
def pi_commands() -> list[SlashCommand]:
    return [SlashCommand(name="read-log", description="View the file access log", handler=show_log)]
