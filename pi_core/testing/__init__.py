"""pytest fixtures for pi and for third-party plugin packs (registered as the ``pi`` pytest plugin).

- ``pi_pm``: an empty PluginSet (no entry points), to register the plugin under test into.
- ``pi_ctx``: a ToolContext rooted in ``tmp_path``.
- ``pi_fake_server``: a running scripted model server speaking every provider wire (``fake_server``).
- ``pi_plugin``, ``pi_run_tool``, ``pi_conversation``: the plugin-author kit (``pi_core.testing.kit``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pi_core.loader.plugins import PluginSet, load_plugins
from pi_core.tools import ToolContext

if TYPE_CHECKING:
    from pi_core.testing.fake_server import FakeModelServer


@pytest.fixture
def pi_pm() -> PluginSet:
    return load_plugins(load_entry_points=False, discover_extensions=False)


@pytest.fixture
def pi_ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


@pytest.fixture
def pi_fake_server() -> Iterator[FakeModelServer]:
    """A started ``FakeModelServer`` on 127.0.0.1 (see ``pi_core.testing.fake_server``); stopped afterwards."""
    from pi_core.testing.fake_server import FakeModelServer

    with FakeModelServer() as server:
        yield server


# The plugin-author kit (``pi_core.testing.kit``): load a plugin, run a tool as the loop does, script a chat.
from pi_core.testing.kit import pi_conversation, pi_plugin, pi_run_tool  # noqa: F401
