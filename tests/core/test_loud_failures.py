"""Issue 15's loud failures through the real ``pi``: a raising ``pi_before_tool_call`` blocks the call with a text
naming the plugin and is an extension error in every mode; ``-e`` of a missing file is an error; an entry-point
name two packages share is resolved with ``--disable-plugin``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import write_models

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
MODEL = ["--provider", "fake", "--model", "fake-model", "--no-session"]
GATE = '''
from pi_core import hookimpl


@hookimpl
def pi_before_tool_call(call):
    raise RuntimeError("gate exploded")
'''
BLOCKED = 'Tool call blocked: plugin "gate" failed while checking it (the user sees the error).'


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        write_models(tmp_path / "agent", fake.base_url_for("anthropic-messages"), "anthropic-messages")
        (tmp_path / "gate.py").write_text(GATE)
        (tmp_path / "notes.txt").write_text("secret plans\n")
        yield fake


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**clean, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), **extra}


def sent_tool_result(server: FakeModelServer, request: int) -> str:
    (block,) = [b for b in server.requests[request].body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return block["content"] if isinstance(block["content"], str) else block["content"][0]["text"]


def test_a_raising_before_tool_call_blocks_the_call_and_is_reported_in_json_mode(tmp_path: Path,
                                                                                 server: FakeModelServer) -> None:
    server.add(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="understood"))
    done = subprocess.run([*PI, *MODEL, "-e", "gate.py", "--mode", "json", "read my notes"], cwd=tmp_path,
                          env=env(tmp_path), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (error,) = [e for e in events if e["type"] == "extension_error"]
    assert (error["plugin"], error["event"], error["error"]) == ("gate", "before_tool_call", "gate exploded")
    assert error["extensionPath"] == str(tmp_path / "gate.py")
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] and end["result"]["content"][0]["text"] == BLOCKED
    assert sent_tool_result(server, 1) == BLOCKED  # the model reads who blocked it, never the file
    assert "secret plans" not in json.dumps(server.requests[1].body)
    assert "Extension error (gate, pi_before_tool_call): RuntimeError: gate exploded" in done.stderr
    assert "Traceback" not in done.stderr


def test_rpc_reports_the_raising_hook_as_an_event(tmp_path: Path, server: FakeModelServer) -> None:
    server.add(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="understood"))
    client = RpcClient([*MODEL, "-e", "gate.py"], command=PI, cwd=tmp_path, env=env(tmp_path)).start()
    try:
        client.prompt_and_wait("read my notes")
        error = client.wait_for_event("extension_error")
        assert (error["plugin"], error["event"], error["error"]) == ("gate", "before_tool_call", "gate exploded")
        assert sent_tool_result(server, 1) == BLOCKED
    finally:
        client.stop()


def test_extension_of_a_missing_file_is_an_error(tmp_path: Path, server: FakeModelServer) -> None:
    done = subprocess.run([*PI, *MODEL, "-e", "missing.py", "-p", "hi"], cwd=tmp_path, env=env(tmp_path),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f'Error: Failed to load extension "{tmp_path / "missing.py"}": Extension path '
                                  f"does not exist: {tmp_path / 'missing.py'}\n"), done.stderr
    assert server.requests == []


def shared_name_site(site: Path) -> None:
    """Two installed distributions that both register the entry-point name ``shared``."""
    for letter in "ab":
        info = site / f"acme_{letter}-1.0.dist-info"
        info.mkdir(parents=True)
        (site / f"acme_{letter}.py").write_text(GATE)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: acme-{letter}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pi]\nshared = acme_{letter}\n")


def test_disable_plugin_resolves_an_entry_point_name_two_packages_share(tmp_path: Path,
                                                                        server: FakeModelServer) -> None:
    shared_name_site(tmp_path / "site")
    with_site = env(tmp_path, PYTHONPATH=str(tmp_path / "site"))
    refused = subprocess.run([*PI, *MODEL, "-p", "hi"], cwd=tmp_path, env=with_site, capture_output=True,
                             text=True, timeout=60, check=False)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert ("plugin name 'shared' is registered by several packages: acme-a 1.0, acme-b 1.0. Uninstall one, or "
            "disable the name with --disable-plugin shared.") in refused.stderr
    assert server.requests == []
    server.add(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="read it"))
    done = subprocess.run([*PI, *MODEL, "--disable-plugin", "shared", "-p", "read my notes"], cwd=tmp_path,
                          env=with_site, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "read it\n", done.stderr
    assert sent_tool_result(server, 1) == "secret plans\n"  # neither package's raising gate was loaded
