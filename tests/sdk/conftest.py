"""SDK tests: a fake model server and an agent dir whose models.json points ``fake/fake-model`` at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.kit import write_fake_models


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelServer]:
    home = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    with FakeModelServer() as fake:
        write_fake_models(home, fake)
        yield fake
