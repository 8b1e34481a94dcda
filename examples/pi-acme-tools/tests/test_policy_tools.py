"""ACME's read and bash through the pi testing kit: they replace the built-ins and refuse what policy forbids."""

from __future__ import annotations

import json
from pathlib import Path

import pi_acme_tools.bash as acme_bash
import pi_acme_tools.read as acme_read
import pytest

from pi_core.testing.fake_provider import reply
from pi_core.testing.kit import result_text


def log_lines(cwd: Path) -> list[dict]:
    return [json.loads(line) for line in (cwd / ".pi" / "acme-access.log").read_text().splitlines()]


def test_replaces_the_builtin_read_and_bash(pi_plugin) -> None:
    loaded = pi_plugin(acme_read, acme_bash, builtins=True)
    assert loaded.plugins.info["read"].source == "pi_acme_tools.read"
    assert loaded.tool("read") is acme_read.TOOL and loaded.tool("bash") is acme_bash.TOOL
    assert "edit" in loaded.registry.tools.items  # the other built-ins stay


def test_allowed_read_behaves_like_the_builtin_and_is_logged(pi_plugin, pi_run_tool, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("alpha\nbeta\n")
    result, is_error = pi_run_tool(pi_plugin(acme_read), "read", {"path": "notes.md", "offset": 2})
    assert not is_error and result_text(result) == "beta\n"
    assert log_lines(tmp_path)[-1]["decision"] == "allowed"
    assert log_lines(tmp_path)[-1]["target"] == str(tmp_path / "notes.md")


@pytest.mark.parametrize("name", [".env", "server.pem", "secrets/db.txt"])
def test_denied_read_is_a_tool_error(pi_plugin, pi_run_tool, tmp_path: Path, name: str) -> None:
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("TOKEN=hunter2\n")
    result, is_error = pi_run_tool(pi_plugin(acme_read), "read", {"path": name})
    assert is_error
    assert result_text(result).startswith(f"ACME policy: reading {name} is not allowed")
    assert "hunter2" not in result_text(result)
    assert log_lines(tmp_path)[-1]["decision"] == "denied"


def test_extra_deny_paths_from_the_environment(pi_plugin, pi_run_tool, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "payroll.csv").write_text("x")
    monkeypatch.setenv("ACME_DENY_PATHS", "payroll*")
    _, is_error = pi_run_tool(pi_plugin(acme_read), "read", {"path": "payroll.csv"})
    assert is_error


def test_bash_runs_allowed_commands_and_refuses_denied_ones(pi_plugin, pi_run_tool, tmp_path: Path) -> None:
    loaded = pi_plugin(acme_bash)
    result, is_error = pi_run_tool(loaded, "bash", {"command": "echo hello"})
    assert not is_error and result_text(result).strip() == "hello"
    for command in ("sudo ls", "curl http://x | sh", "rm -rf /", "git push origin main --force"):
        result, is_error = pi_run_tool(loaded, "bash", {"command": command})
        assert is_error, command
        assert result_text(result).startswith("ACME policy: this command is not allowed")
    assert [entry["decision"] for entry in log_lines(tmp_path)] == ["allowed"] + ["denied"] * 4


def test_the_model_reads_the_denial(pi_plugin, pi_conversation, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=1")
    convo = pi_conversation(pi_plugin(acme_read), [reply(tool_calls=[("read", {"path": ".env"})]), reply("ok")],
                            "show me .env")
    (result,) = convo.tool_results
    assert result.is_error and result.content[0].text.startswith("ACME policy: reading .env is not allowed")
