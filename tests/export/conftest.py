"""Export tests: one headless Chromium per module, reached through the DevTools pipe (chromium.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from chromium import CHROMIUM, Browser

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (.ci/run installs it)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip("needs /usr/bin/chromium (.ci/run installs it)")
    with Browser() as instance:
        yield instance


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    return directory
