"""A broken models.json names every mistake at once, as ``path:line:col: message`` (issue 37.5)."""

from __future__ import annotations

from tests.cli.conftest import PiRunner


def test_list_models_prints_every_error_of_models_json_with_its_position(pi: PiRunner) -> None:
    path = pi.home / "models.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{\n  // a local server\n  "providers": {\n    "local": {\n'
                    '      "baseUrl": "http://127.0.0.1:1/v1", "api": "openai-completions",\n'
                    '      "models": [\n        {"id": "a", "maxTokens": "lots"},\n'
                    '        {"id": "b", "contextWindow": true},\n      ]\n    }\n  }\n}\n')
    result = pi.run("--list-models")
    lines = result.stderr.splitlines() + result.stdout.splitlines()
    assert f"{path}:7:34: /providers/local/models/0/maxTokens: must be number" in lines
    assert f"{path}:8:38: /providers/local/models/1/contextWindow: must be number" in lines
    assert not any(line.startswith("File:") for line in lines)
