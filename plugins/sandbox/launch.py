"""Start a command under Landlock for spawners that take only a command line (MCP stdio servers):
``python -m pi_plugins.sandbox.launch PLAN_JSON -- COMMAND [ARGS...]``."""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m pi_plugins.sandbox.launch PLAN_JSON -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    from pi_plugins.sandbox.landlock import Plan, restrict

    try:
        restrict(Plan.from_json(argv[0]))
    except (OSError, ValueError, KeyError) as err:
        print(f"pi sandbox: could not apply Landlock: {err}", file=sys.stderr)
        return 126
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as err:
        print(f"pi sandbox: {argv[2]}: {err.strerror or err}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
