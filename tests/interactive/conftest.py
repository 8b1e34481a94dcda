"""Fixtures for the interactive tests (the harness itself lives in harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input


@pytest.fixture
def pipe() -> Iterator[Any]:
    with create_pipe_input() as pipe_input:
        yield pipe_input
