"""Settings: global/project TOML, Pi JSON fallback, merges, locked writes, errors (docs/config.md#settings)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from pi_core.app.settings import Settings


def write_toml(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "proj"
    directory.mkdir()
    return directory


def test_defaults_without_files(agent_dir: Path, project: Path) -> None:
    s = Settings.load(project, project_trusted=True)
    assert s.default_provider is None and s.default_thinking_level is None
    assert s.steering_mode == "one-at-a-time" and s.follow_up_mode == "one-at-a-time"
    assert (s.compaction.enabled, s.compaction.reserve_tokens, s.compaction.keep_recent_tokens) == (True, 16384, 20000)
    assert (s.retry.enabled, s.retry.max_retries, s.retry.base_delay_ms) == (True, 3, 2000)
    assert s.retry.provider.max_retry_delay_ms == 60000 and s.disabled_plugins == [] and s.shell_path is None
    assert s.drain_errors() == [] and not (project / ".pi").exists()


def test_project_wins_with_one_level_merge(agent_dir: Path, project: Path) -> None:
    write_toml(agent_dir / "settings.toml", 'defaultModel = "g"\ndefaultProvider = "anthropic"\n'
               'enabledModels = ["a", "b"]\n[compaction]\nreserveTokens = 1000\nkeepRecentTokens = 5\n')
    write_toml(project / ".pi" / "settings.toml", 'defaultModel = "p"\nenabledModels = ["c"]\n'
               'disabled_plugins = ["bash"]\nshellPath = "/bin/zsh"\n[compaction]\nreserveTokens = 2000\n')
    s = Settings.load(project, project_trusted=True)
    assert s.default_model == "p" and s.default_provider == "anthropic"
    assert s.enabled_models == ["c"]  # lists are replaced
    assert (s.compaction.reserve_tokens, s.compaction.keep_recent_tokens) == (2000, 5)
    assert s.disabled_plugins == ["bash"] and s.shell_path == "/bin/zsh"


def test_pi_settings_json_is_read_and_stays_under_the_toml(agent_dir: Path, project: Path) -> None:
    agent_dir.mkdir(parents=True)
    (agent_dir / "settings.json").write_text(json.dumps({
        "defaultThinkingLevel": "high", "queueMode": "all", "retry": {"maxDelayMs": 5000},
        "skills": {"enableSkillCommands": False, "customDirectories": ["~/sk"]}, "websockets": True}))
    s = Settings.load(project, project_trusted=True)
    assert s.default_thinking_level == "high" and s.steering_mode == "all"
    assert s.retry.provider.max_retry_delay_ms == 5000 and s.get("retry.maxDelayMs") is None
    assert s.enable_skill_commands is False and s.resource_paths("skills") == ["~/sk"]
    assert s.transport == "websocket"
    s.set_default_model("openai", "gpt-5")
    data = tomllib.loads((agent_dir / "settings.toml").read_text())
    assert data == {"defaultProvider": "openai", "defaultModel": "gpt-5"}  # only what pi wrote
    s.reload()
    assert s.default_thinking_level == "high" and s.default_model == "gpt-5"
    assert json.loads((agent_dir / "settings.json").read_text())["queueMode"] == "all"  # Pi's file untouched


def test_writes_keep_external_edits_and_in_memory_wins(agent_dir: Path, project: Path) -> None:
    write_toml(agent_dir / "settings.toml", 'theme = "dark"\nshellCommandPrefix = "shopt -s expand_aliases"\n')
    s = Settings.load(project, project_trusted=True)
    # someone else edits the file meanwhile
    write_toml(agent_dir / "settings.toml", 'theme = "light"\nshellCommandPrefix = "shopt -s expand_aliases"\n'
               'defaultModel = "theirs"\n[compaction]\nkeepRecentTokens = 7\n')
    s.set("defaultModel", "mine")
    s.set("compaction.reserveTokens", 999)
    data = tomllib.loads((agent_dir / "settings.toml").read_text())
    assert data["defaultModel"] == "mine" and data["theme"] == "light"
    assert data["shellCommandPrefix"] == "shopt -s expand_aliases"
    assert data["compaction"] == {"keepRecentTokens": 7, "reserveTokens": 999}
    assert s.theme == "light" and s.compaction.reserve_tokens == 999


def test_broken_file_is_never_overwritten(agent_dir: Path, project: Path) -> None:
    write_toml(agent_dir / "settings.toml", "this is = = not toml\n")
    s = Settings.load(project, project_trusted=True)
    errors = s.drain_errors()
    assert len(errors) == 1 and errors[0].scope == "global"
    # issue 16 item 9: the warning names the file, line and column
    assert errors[0].warning("startup session lookup") == \
        f"Warning: Invalid settings file {agent_dir / 'settings.toml'}: Expected '=' after a key in a key/value pair (line 1, column 6)"
    assert s.drain_errors() == []  # drained once
    s.set_default_model("anthropic", "claude")
    assert (agent_dir / "settings.toml").read_text() == "this is = = not toml\n"
    assert s.default_model == "claude"  # still effective in memory


def test_reload_and_invalid_reload_keeps_old_values(agent_dir: Path, project: Path) -> None:
    write_toml(agent_dir / "settings.toml", 'defaultModel = "one"\n')
    s = Settings.load(project, project_trusted=True)
    write_toml(agent_dir / "settings.toml", 'defaultModel = "two"\n')
    s.reload()
    assert s.default_model == "two"
    write_toml(agent_dir / "settings.toml", "broken = [\n")
    s.reload()
    assert s.default_model == "two" and len(s.drain_errors()) == 1


def test_project_write_creates_dot_pi(agent_dir: Path, project: Path) -> None:
    s = Settings.load(project, project_trusted=True)
    s.set("packages", ["pip:acme", {"source": "pip:x", "skills": []}], scope="project")
    data = tomllib.loads((project / ".pi" / "settings.toml").read_text())
    assert data["packages"] == ["pip:acme", {"source": "pip:x", "skills": []}]
    assert Settings.load(project, project_trusted=True).packages == data["packages"]
    s.set("packages", None, scope="project")
    assert "packages" not in tomllib.loads((project / ".pi" / "settings.toml").read_text())


def test_wrongly_typed_values_fall_back_to_defaults(agent_dir: Path, project: Path) -> None:
    write_toml(agent_dir / "settings.toml", 'steeringMode = 3\n[compaction]\nenabled = "yes"\nreserveTokens = true\n')
    s = Settings.load(project, project_trusted=True)
    assert s.steering_mode == "one-at-a-time" and s.compaction.enabled is True and s.compaction.reserve_tokens == 16384
