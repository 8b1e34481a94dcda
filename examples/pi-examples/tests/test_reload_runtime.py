"""reload_runtime: the model's ``reload_runtime`` call ends the run, then pi reloads: an edited ``-e`` plugin's
new command appears and plugins see a "reload" session start; ``/reload-runtime`` does the same at once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from pi_core.testing.fake_script import Reply

HELPER = '''
import json
from pathlib import Path

from pi_core import hookimpl
from pi_core import SlashCommand

LOG = Path({log!r})


@hookimpl
def pi_session_start(reason):
    with LOG.open("a") as log:
        log.write(json.dumps(reason) + "\\n")


@hookimpl
def pi_commands():
    return [SlashCommand({name!r}, "helper", lambda args, ctx: None)]
'''


def helper(path: Path, log: Path, name: str) -> None:
    path.write_text(HELPER.format(log=str(log), name=name))


def reasons(log: Path) -> list[str]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def names(client: Any) -> set[str]:
    return {c["name"] for c in client.get_commands()}


def wait_for_reload(log: Path, count: int, client: Any) -> None:
    deadline = time.monotonic() + 30
    while len(reasons(log)) < count:
        assert time.monotonic() < deadline, f"no reload; stderr:\n{client.stderr}"
        time.sleep(0.1)


def test_the_tool_ends_the_run_and_pi_reloads_once_settled(example, tmp_path: Path) -> None:
    plugin, log = tmp_path / "helper_plugin.py", tmp_path / "reasons.jsonl"
    helper(plugin, log, "hello1")
    example.server.add(Reply(tool_calls=[("reload_runtime", {})]), Reply(text="never asked"))
    client = example.rpc("reload_runtime", "--no-session", "-e", str(plugin))
    assert {"hello1", "reload-runtime"} <= names(client)
    helper(plugin, log, "hello2")
    client.prompt("reload yourself")
    end = client.wait_for_event("tool_execution_end")
    assert end["result"]["content"][0]["text"] == "Reload requested. Pi reloads after this response."
    wait_for_reload(log, 2, client)
    assert reasons(log) == ["startup", "reload"]
    assert len(example.server.requests) == 1, "terminate: no model turn after the tool"
    sent = json.dumps([r.body for r in example.server.requests])
    assert "/reload-runtime" not in sent, "the command is dispatched, never sent to the model"


def test_the_command_reloads_at_once(example, tmp_path: Path) -> None:
    plugin, log = tmp_path / "helper_plugin.py", tmp_path / "reasons.jsonl"
    helper(plugin, log, "hello1")
    client = example.rpc("reload_runtime", "--no-session", "-e", str(plugin))
    client.prompt("/reload-runtime")
    wait_for_reload(log, 2, client)
    assert reasons(log) == ["startup", "reload"]
    assert example.server.requests == []


def test_reload_picks_up_an_edited_plugin(example, tmp_path: Path) -> None:
    plugin, log = tmp_path / "helper_plugin.py", tmp_path / "reasons.jsonl"
    helper(plugin, log, "hello1")
    client = example.rpc("reload_runtime", "--no-session", "-e", str(plugin))
    assert "hello1" in names(client)
    helper(plugin, log, "hello2")
    client.prompt("/reload-runtime")
    wait_for_reload(log, 2, client)
    assert "hello2" in names(client) and "hello1" not in names(client)


BUS = '''
from pathlib import Path

from pi_core import hookimpl
from pi_core import SlashCommand

LOG = Path({log!r})


def note(data):
    with LOG.open("a") as log:
        log.write({version!r} + "\\n")


@hookimpl
def pi_event_handlers():
    return {{"ping": note}}


@hookimpl
def pi_commands():
    return [SlashCommand("ping", "emit on the bus", lambda args, ctx: ctx.events.emit("ping", args))]
'''


def test_a_broken_edit_is_an_extension_error_and_a_fixed_one_loads(example, tmp_path: Path) -> None:
    plugin, log = tmp_path / "helper_plugin.py", tmp_path / "reasons.jsonl"
    helper(plugin, log, "hello1")
    client = example.rpc("reload_runtime", "--no-session", "-e", str(plugin))
    assert "hello1" in names(client)  # started with the good version
    plugin.write_text("def broken(:\n")
    mark = client.event_count()
    client.prompt("/reload-runtime")
    error = client.wait_for_event("extension_error", after=mark)
    assert (error["plugin"], error["event"]) == ("helper_plugin", "reload")
    assert error["error"].startswith("SyntaxError") and error["extensionPath"] == str(plugin.resolve())
    wait_for_reload(log, 2, client)  # the previous version stays loaded and hears the reload
    assert "hello1" in names(client)
    helper(plugin, log, "hello3")
    client.prompt("/reload-runtime")
    wait_for_reload(log, 3, client)
    assert "hello3" in names(client) and "hello1" not in names(client)
    assert client.process.poll() is None


def test_reload_replaces_a_plugin_files_event_bus_handlers(example, tmp_path: Path) -> None:
    plugin, log = tmp_path / "bus_plugin.py", tmp_path / "bus.log"
    plugin.write_text(BUS.format(log=str(log), version="v1"))
    client = example.rpc("reload_runtime", "--no-session", "-e", str(plugin))
    client.prompt("/ping")  # answered once pi has started: the edit below is not what it loaded
    plugin.write_text(BUS.format(log=str(log), version="v2"))
    client.prompt("/reload-runtime")
    client.prompt("/ping")
    deadline = time.monotonic() + 30
    while len(log.read_text().splitlines()) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)  # a stale or doubled handler would have written by now too
    assert log.read_text().splitlines() == ["v1", "v2"]
