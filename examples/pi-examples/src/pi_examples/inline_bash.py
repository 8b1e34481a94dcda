"""inline_bash: ``!{command}`` inside a prompt is replaced by the command's output before the model sees it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pi_core import InputResult, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.types import ImageContent

PATTERN = re.compile(r"!\{([^}]+)\}")
TIMEOUT_S = 30.0
PREVIEW = 50


@dataclass
class Expansion:
    command: str
    output: str
    error: str | None = None

    def summary(self) -> str:
        status = f" ({self.error})" if self.error else ""
        preview = self.output[:PREVIEW] + "..." if len(self.output) > PREVIEW else self.output
        return f'!{{{self.command}}}{status} -> "{preview}"'


async def expand(ctx: ExtensionContext, command: str) -> tuple[Expansion, str]:
    """Run one inline command; returns what to report and the text that replaces ``!{command}``."""
    try:
        done = await ctx.exec("bash", ["-c", command], timeout=TIMEOUT_S)
    except Exception as err:  # noqa: BLE001 - any failure to start becomes visible text, never a lost prompt
        message = str(err) or type(err).__name__
        return Expansion(command, "", message), f"[error: {message}]"
    output = (done.stdout or done.stderr or "").strip()
    error = f"exit code {done.code}" if done.code != 0 and done.stderr else None
    return Expansion(command, output, error), output


@hookimpl
async def pi_input(ctx: ExtensionContext, text: str, source: str,
                   images: list[ImageContent] | None) -> InputResult | None:
    stripped = text.lstrip()
    if stripped.startswith("!") and not stripped.startswith("!{"):
        return None  # a whole-line ``!command`` is the user's own shell command: leave it to pi
    matches = [(m.group(0), m.group(1)) for m in PATTERN.finditer(text)]
    if not matches:
        return None
    result = text
    expansions: list[Expansion] = []
    for full, command in matches:
        expansion, replacement = await expand(ctx, command)
        expansions.append(expansion)
        result = result.replace(full, replacement, 1)
    if ctx.has_ui:
        summary = "\n".join(e.summary() for e in expansions)
        ctx.ui.notify(f"Expanded {len(expansions)} inline command(s):\n{summary}", "info")
    return InputResult("transform", text=result, images=images)
