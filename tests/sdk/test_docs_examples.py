"""Every ``python`` block of docs/sdk.md runs as a script against the fake model server (the default model of
settings.json points at it) and exits 0."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pi_core.testing.fake_server import FakeModelServer, Reply

DOC = Path(__file__).parents[2] / "docs" / "sdk.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index: int, server: FakeModelServer, tmp_path: Path) -> None:
    home = tmp_path / "agent"
    (home / "settings.json").write_text(json.dumps({"defaultProvider": "fake", "defaultModel": "fake-model"}))
    server.add(*(Reply(text=f"reply {n}") for n in range(4)))
    script = tmp_path / "example.py"
    script.write_text(BLOCKS[index])
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path / "project", env={**env, "PI_CODING_AGENT_DIR": str(home)}, check=False)
    assert result.returncode == 0, result.stderr
    assert "reply 0" in result.stdout or "agent_settled" in result.stdout
