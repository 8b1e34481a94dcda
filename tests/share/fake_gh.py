"""A stand-in ``gh`` for share tests: records each call, keeps the uploaded file, answers as gh does.

``FAKE_GH_LOG`` is the JSON-lines log of argv; ``FAKE_GH_STATE`` = ``signed-out`` fails ``gh auth status``,
``broken`` fails ``gh gist create`` with gh's message.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

GIST_ID = "0123456789abcdef0123456789abcdef"


def main() -> int:
    args = sys.argv[1:]
    log = Path(os.environ["FAKE_GH_LOG"])
    with log.open("a", encoding="utf-8") as out:
        out.write(json.dumps(args) + "\n")
    state = os.environ.get("FAKE_GH_STATE", "")
    if args[:2] == ["auth", "status"]:
        if state == "signed-out":
            sys.stderr.write("You are not logged into any GitHub hosts. To log in, run: gh auth login\n")
            return 1
        sys.stdout.write("github.com\n  ✓ Logged in to github.com account tester\n")
        return 0
    if args[:2] == ["gist", "create"]:
        if state == "broken":
            sys.stderr.write("HTTP 422: Validation Failed\n")
            return 1
        shutil.copyfile(args[-1], log.with_name("uploaded.html"))
        sys.stderr.write("- Creating gist session.html\n✓ Created secret gist session.html\n")
        sys.stdout.write(f"https://gist.github.com/tester/{GIST_ID}\n")
        return 0
    sys.stderr.write(f"unknown command {args}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
