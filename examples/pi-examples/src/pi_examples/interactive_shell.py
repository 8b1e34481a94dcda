"""interactive_shell: the user's ``!vim``, ``!htop``, ``!git rebase -i`` ... (or ``!i any-command``) get the real
terminal while the interactive UI steps aside; other ``!`` commands run as usual.

``INTERACTIVE_COMMANDS`` adds commands (comma-separated), ``INTERACTIVE_EXCLUDE`` removes some. Only the user's
``!`` commands are intercepted, never the model's bash calls.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_core import UserBash, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.toolkit.shell import BashResult

DEFAULT_INTERACTIVE_COMMANDS = [
    "vim", "nvim", "vi", "nano", "emacs", "pico", "micro", "helix", "hx", "kak", "less", "more", "most",
    "git commit", "git rebase", "git merge", "git cherry-pick", "git revert", "git add -p", "git add --patch",
    "git add -i", "git add --interactive", "git stash -p", "git stash --patch", "git reset -p", "git reset --patch",
    "git checkout -p", "git checkout --patch", "git difftool", "git mergetool", "htop", "top", "btop", "glances",
    "ranger", "nnn", "lf", "mc", "vifm", "tig", "lazygit", "gitui", "fzf", "sk", "ssh", "telnet", "mosh", "psql",
    "mysql", "sqlite3", "mongosh", "redis-cli", "kubectl edit", "kubectl exec -it", "docker exec -it",
    "docker run -it", "tmux", "screen", "ncdu",
]


def env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def interactive_commands() -> list[str]:
    excluded = {item.lower() for item in env_list("INTERACTIVE_EXCLUDE")}
    return [c for c in [*DEFAULT_INTERACTIVE_COMMANDS, *env_list("INTERACTIVE_COMMANDS")] if c.lower() not in excluded]


def is_interactive(command: str) -> bool:
    text = command.strip().lower()
    last_stage = text[text.rfind("|") + 1:].strip() if "|" in text else None
    for name in (c.lower() for c in interactive_commands()):
        if text == name or text.startswith((f"{name} ", f"{name}\t")):
            return True
        if last_stage is not None and (last_stage == name or last_stage.startswith(f"{name} ")):
            return True
    return False


def result(output: str, exit_code: int) -> UserBash:
    return UserBash(result=BashResult(output=output, exit_code=exit_code, cancelled=False, truncated=False,
                                      full_output_path=None))


def run_in_terminal(command: str, cwd: Path) -> Callable[..., Any]:
    def factory(tui: Any, theme: Any, keybindings: Any, done: Callable[[int | None], None]) -> Any:
        tui.stop()
        sys.stdout.write("\x1b[2J\x1b[H")
        sys.stdout.flush()
        shell = os.environ.get("SHELL") or "/bin/sh"
        finished = subprocess.run([shell, "-c", command], cwd=cwd, check=False)
        tui.start()
        tui.request_render()
        done(finished.returncode)
        return EmptyComponent()

    return factory


class EmptyComponent:
    def render(self, width: int) -> list[str]:
        return []

    def invalidate(self) -> None:
        pass


@hookimpl
async def pi_user_bash(ctx: ExtensionContext, command: str, cwd: Path) -> UserBash | None:
    forced = command.startswith(("i ", "i\t"))
    if forced:
        command = command[2:].strip()
    if not (forced or is_interactive(command)):
        return None
    if ctx.mode != "interactive":
        return result("(interactive commands require TUI)", 1)
    code = await ctx.ui.custom(run_in_terminal(command, cwd))
    if code == 0:
        return result("(interactive command completed successfully)", 0)
    return result(f"(interactive command exited with code {code})", code if isinstance(code, int) else 1)
