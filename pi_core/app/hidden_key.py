"""``--api-key KEY`` kept out of the process list: pi runs itself again without it, the key in the environment."""

from __future__ import annotations

import os
import sys

HIDDEN_KEY_ENV = "PI_CLI_API_KEY"  # where a re-executed pi finds the --api-key value it was given


def hide_api_key(argv: list[str]) -> None:
    """``--api-key KEY`` is readable by every local user in ``ps`` and ``/proc/PID/cmdline``: run pi again
    in this same process without it (``execv``), handing the key over in the environment, which only the
    user can read. Does nothing when there is no key to hide, on Windows, or if the exec fails."""
    if sys.platform == "win32" or os.environ.get(HIDDEN_KEY_ENV) is not None:
        return
    at = _api_key_at(argv)
    if at is None:
        return
    original = list(getattr(sys, "orig_argv", []))
    if not original or original[len(original) - len(argv):] != argv:
        return  # started in a way we cannot reproduce: keep going with the key visible
    command = original[:len(original) - len(argv)] + argv[:at] + argv[at + 2:]
    env = {**os.environ, HIDDEN_KEY_ENV: argv[at + 1]}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, command, env)
    except OSError:
        return


def _api_key_at(argv: list[str]) -> int | None:
    """Where ``--api-key VALUE`` is, read the way the argument parser reads it (not inside a message, not
    among a sub-command's own arguments)."""
    from pi_core.app.args import parse_args, split_command

    command = split_command(argv)
    own = command.global_argv if command is not None else argv
    parsed = parse_args(own)
    if parsed.api_key is None:
        return None
    for index in range(len(own) - 1):
        if argv[index] == "--api-key" and argv[index + 1] == parsed.api_key:
            return index
    return None


def with_hidden_key(argv: list[str]) -> list[str]:
    key = os.environ.pop(HIDDEN_KEY_ENV, None)
    if key is None:
        return argv
    return ["--api-key", key, *argv]
