"""Point a real ``pi`` run at the fake model server: a config directory whose models.json names it."""

from __future__ import annotations

import json
from pathlib import Path

FAKE_PROVIDER = "fake"
FAKE_MODEL = "fake-model"


def write_models(home: Path, base_url: str, api: str, *, reasoning: bool = False) -> Path:
    """Write ``home/models.json`` with provider ``fake`` / model ``fake-model`` served at ``base_url``.

    Run pi with ``PI_CODING_AGENT_DIR=home`` and ``--provider fake --model fake-model``.
    """
    home.mkdir(parents=True, exist_ok=True)
    models = {"providers": {FAKE_PROVIDER: {
        "baseUrl": base_url, "api": api, "apiKey": "test-key",
        "models": [{"id": FAKE_MODEL, "name": "Fake Model", "reasoning": reasoning, "input": ["text", "image"],
                    "contextWindow": 100000, "maxTokens": 4096,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}],
    }}}
    path = home / "models.json"
    path.write_text(json.dumps(models))
    return path
