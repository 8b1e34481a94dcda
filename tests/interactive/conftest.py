"""Fixtures for the interactive tests (the harness itself lives in harness.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input

sys.path.insert(0, str(Path(__file__).parent))  # tmux_kit.py, harness.py


@pytest.fixture
def pipe() -> Iterator[Any]:
    with create_pipe_input() as pipe_input:
        yield pipe_input


@pytest.fixture(autouse=True)
def agent_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An empty agent dir per test: no keybindings.json or themes of the machine's user leak in."""
    directory = tmp_path_factory.mktemp("agent")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(directory))
    return directory
