"""Issue 16 items 9, 10 and 12: broken config files are reported once (file, line, column) and pi goes on with
what is valid; wrong types and absurd nesting are clear warnings, never a traceback; keyless local
providers are kept whatever their name; a missing prompt or model says what would fix it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import CLI, PiRunner, pi_runner

BROKEN_TOML = '[providers.local]\nbaseUrl = "http://x"\napi = "openai-completions"\nmodels = [ {id = "m" ]\n'


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path, "openai-completions") as runner:
        yield runner


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


def test_a_broken_models_file_is_reported_once_in_every_mode_and_the_valid_one_still_works(pi: PiRunner) -> None:
    path = pi.home / "models.toml"
    path.write_text(BROKEN_TOML)
    pi.server.add(Reply(text="text answer"), Reply(text="json answer"))
    for args in (("-p", "hi"), ("--mode", "json", "hi"), ("--list-models",)):
        result = pi.run(*args)
        _no_traceback(result)
        assert result.returncode == 0, (args, result.stderr)
        assert result.stderr.count(f"{pi.home / 'models.toml'}:4:22: Unclosed inline table\n") == 1
        assert "File: " not in result.stderr
    assert "fake-model" in result.stdout  # the models.json beside it still counts
    with RpcClient(command=CLI, provider="fake", model="fake-model", cwd=pi.cwd, env=pi.env()) as client:
        client.get_state()
    assert client.stderr.count(f"{path}:4:22: Unclosed inline table") == 1


def test_settings_parse_errors_name_file_line_and_column(pi: PiRunner) -> None:
    pi.settings('defaultThinkingLevel = "high"\nbroken = = 2\n')
    pi.server.add(Reply(text="still answers"))
    result = pi.run("-p", "hi")
    _no_traceback(result)
    assert result.returncode == 0 and result.stdout == "still answers\n"
    expected = f"Warning: Invalid settings file {pi.home / 'settings.toml'}: Invalid value (line 2, column 10)"
    assert result.stderr.count(expected) == 1, result.stderr


def test_wrong_typed_values_and_deep_nesting_are_warnings_not_tracebacks(pi: PiRunner) -> None:
    pi.settings('[retry.provider]\ntimeoutMs = "x"\nmaxRetries = 1\n[compaction]\nreserveTokens = true\n')
    pi.server.add(Reply(text="typed"), Reply(text="nested"))
    result = pi.run("-p", "hi")
    _no_traceback(result)
    assert result.returncode == 0 and result.stdout == "typed\n"
    settings = pi.home / "settings.toml"
    assert f'{settings}: retry.provider.timeoutMs must be a non-negative number, not "x"; ignored' in result.stderr
    assert f"{settings}: compaction.reserveTokens must be a non-negative integer, not true; ignored" in result.stderr

    pi.settings("deep = " + "[" * 5000 + "]" * 5000 + "\n")
    (pi.home / "models.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    result = pi.run("-p", "hi")
    _no_traceback(result)
    assert result.returncode == 0 and result.stdout == "nested\n"
    assert f"Invalid settings file {settings}: nested more than 64 levels deep" in result.stderr
    assert f"{pi.home / 'models.toml'}:1:1: nested more than 64 levels deep" in result.stderr


def test_a_custom_provider_without_a_key_is_kept_whatever_its_name(pi: PiRunner) -> None:
    models = json.loads((pi.home / "models.json").read_text())
    local = models["providers"].pop("fake")
    del local["apiKey"]
    models["providers"]["my-gpu-box"] = local
    (pi.home / "models.json").write_text(json.dumps(models))
    listed = pi.run("--list-models")
    assert listed.returncode == 0 and "my-gpu-box" in listed.stdout and "fake-model" in listed.stdout
    pi.server.add(Reply(text="local answer"))
    command = [c for c in pi.command("-p", "hi") if c not in ("--provider", "fake", "--model", "fake-model")]
    result = subprocess.run([*command, "--model", "my-gpu-box/fake-model"], capture_output=True, text=True,
                            cwd=pi.cwd, env=pi.env(), timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "local answer\n"
    assert len(pi.server.requests) == 1


def test_no_prompt_says_so(pi: PiRunner) -> None:
    result = pi.run(stdin="")
    assert result.returncode == 1
    assert result.stderr.strip() == ('Error: No prompt given. Pass one as a message (pi -p "..."), as @file arguments '
                                     "or on stdin; run pi in a terminal without -p for the interactive UI.")
    assert pi.server.requests == []


def test_no_model_names_what_would_fix_it(tmp_path: Path) -> None:
    home = tmp_path / "empty-agent"
    home.mkdir()
    env = {k: v for k, v in PiRunner.env(PiRunner(None, "", home, tmp_path)).items()  # type: ignore[arg-type]
           if not k.endswith(("_API_KEY", "_TOKEN"))}
    printed = subprocess.run([*CLI, "-p", "hi"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
                             check=False)
    assert printed.returncode == 1
    assert "No models available." in printed.stderr and str(home / "models.toml") in printed.stderr
    guides = [line.strip() for line in printed.stderr.splitlines() if line.strip().endswith(".md")]
    assert len(guides) == 2 and all(Path(guide).is_file() for guide in guides)
    with RpcClient(command=CLI, cwd=tmp_path, env=env) as client:
        refused = client.send({"id": "p", "type": "prompt", "message": "hi"})
    assert refused["success"] is False
    assert refused["error"].startswith("No model selected.") and str(home / "models.toml") in refused["error"]
