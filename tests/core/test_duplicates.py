"""The product code does not repeat itself more than it did (issue 32.4): the pairs the ``duplicates`` tool finds
in pi_core/, plugins/ and builtin_tools/ (tests and examples aside) stay at or under a ceiling.

The tool is a developer's tool, not a dependency: without it on PATH the test skips (CI), and when the machine is
too busy for it to read everything in time it skips rather than count half a tree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("pi_core", "plugins", "builtin_tools")
# 109 before issue 32.4; lower it when a change removes pairs. A pair the tool lists is a place to look, not
# a verdict: CONTRIBUTING.md#duplicates says which kinds are left on purpose.
CEILING = 52


def _product_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", *PRODUCT],
                            cwd=REPO, capture_output=True, text=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the product files cannot be told from build output")
    return [name for name in listed.stdout.splitlines() if (REPO / name).is_file()]


def test_product_duplicates_do_not_grow(tmp_path: Path) -> None:
    tool = shutil.which("duplicates")
    if tool is None:
        pytest.skip("the duplicates tool is not installed")
    for name in _product_files():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, target)
    done = subprocess.run([tool, "--most", "200", "--seconds", "120"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    output = done.stdout + done.stderr
    if "incomplete:" in output:
        pytest.skip(f"duplicates did not read the whole tree: {output.splitlines()[-1]}")
    first = output.splitlines()[0] if output else ""
    found = re.match(r"(\d+) pairs? of places", first)
    count = int(found.group(1)) if found else 0 if first.startswith("no duplicates") else None
    assert count is not None, output
    assert count <= CEILING, (f"{count} duplicate pairs in product code (ceiling {CEILING}); the new ones are in "
                              f"`duplicates --change --base main`:\n{output}")
