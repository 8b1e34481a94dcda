"""Servers without direct tools start once the first model response arrives, through a per-response hook
(a per-event ``pi_agent_event`` cost every streamed delta a hook call)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pi_plugins import mcp
from pi_plugins.mcp.manager import McpManager


class _Session:
    pass


class _Ctx:
    def __init__(self) -> None:
        self.session = _Session()


def test_the_first_response_starts_the_deferred_servers_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert not hasattr(mcp, "pi_agent_event")
    ctx = _Ctx()
    manager = McpManager(agent_dir=tmp_path, cwd=tmp_path)
    started: list[list[object]] = []
    manager._later = [object()]  # type: ignore[list-item]
    monkeypatch.setattr(manager, "start_later", lambda: (started.append(manager._later), setattr(manager, "_later", [])))
    mcp.state_of(ctx.session).manager = manager
    mcp.pi_after_provider_response(ctx)  # type: ignore[arg-type]
    mcp.pi_after_provider_response(ctx)  # type: ignore[arg-type]
    assert len(started) == 1 and not manager.starting_later
