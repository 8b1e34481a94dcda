"""The ``acp_env`` fixture: a fake model server and a project folder for ``pi --mode acp`` (harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer
from tests.acp.harness import AcpEnv


@pytest.fixture
def acp_env(tmp_path: Path) -> Iterator[AcpEnv]:
    with FakeModelServer() as server:
        yield AcpEnv(server, tmp_path)
