"""`--models` (and `enabledModels`) pick a new session's model: the scope's first entry, its thinking suffix kept
(docs/models.md#initial-model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import write_models


def _two_models(home: Path, base_url: str) -> None:
    path = write_models(home, base_url, "anthropic-messages", reasoning=True)
    config = json.loads(path.read_text())
    models = config["providers"]["fake"]["models"]
    models.append({**models[0], "id": "fake-2", "name": "Fake Two"})
    path.write_text(json.dumps(config))


def _run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PI_CODING_AGENT_DIR"] = str(home)
    return subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args], input="",
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=60, check=False)


def test_a_new_session_starts_on_the_scopes_first_model_with_its_thinking(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        _two_models(home, server.base_url_for("anthropic-messages"))
        server.add(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        high = _run(home, cwd, "--models", "fake-2:high,fake-model", "-p", "hi")
        low = _run(home, cwd, "--models", "fake-2:low,fake-model", "-p", "hi")
        assert high.returncode == 0 and low.returncode == 0, high.stderr + low.stderr
        (home / "settings.json").write_text(json.dumps({"enabledModels": ["fake-2"]}))
        from_settings = _run(home, cwd, "-p", "hi")
        assert from_settings.returncode == 0, from_settings.stderr
        bodies = [request.body for request in server.requests]
    assert [body["model"] for body in bodies] == ["fake-2", "fake-2", "fake-2"]
    high_budget, low_budget = (body["thinking"]["budget_tokens"] for body in bodies[:2])
    assert high_budget > low_budget
