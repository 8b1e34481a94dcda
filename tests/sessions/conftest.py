"""Session tests: every test gets its own agent dir; builders live in session_builders.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own agent dir, so nothing touches ~/.pi."""
    directory = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return directory
