"""bash tool (docs/tools.md#bash), plus process-group kills, memory bound and the run temp dir."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pi_builtin_tools.bash as bash_module
import pytest
from pi_builtin_tools.bash import TOOL, BashOptions, SpawnContext, create_bash_tool

from pi_core.errors import ToolError
from pi_core.loader.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.toolkit.procs import (
    ExecAborted,
    ExecOptions,
    LocalShellOperations,
    ShellConfig,
)
from pi_core.toolkit.shell import BashResult, run_command
from pi_core.tools import Tool, ToolContext, ToolResult

REFERENCE = Path("/work/shared/spec/reference/pi-tools-all.json")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def run(args: dict[str, Any], ctx: ToolContext, tool: Tool = TOOL) -> ToolResult:
    result = tool.execute(args, ctx)
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def full_output_path(message: str) -> Path:
    match = re.search(r"Full output: ([^\]\n]+)\]", message)
    assert match, message
    return Path(match.group(1))


def pid_gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie waiting for a reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def wait_until(predicate: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --- schema and wiring ---------------------------------------------------------------------------

def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def test_schema_matches_pi_wire_schema_in_our_own_words() -> None:
    pi = {t["name"]: t for t in json.loads(REFERENCE.read_text())}["bash"]
    assert strip_descriptions(TOOL.json_schema) == strip_descriptions(pi["input_schema"])
    assert list(TOOL.json_schema["properties"]) == list(pi["input_schema"]["properties"])
    assert TOOL.description != pi["description"]
    for key in ("2000 lines", "50KB", "temp file", "timeout"):
        assert key in TOOL.description
    assert TOOL.coercion == "typebox" and TOOL.label == "bash" and bash_module.DEFAULT_ACTIVE is True


def test_registered_by_plugin_and_overridable_by_name(tmp_path: Path) -> None:
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, bash_module, "bash", layer="builtin")

    from pi_core import hookimpl

    class Replacement:  # a class plugin: pi registers one instance of it
        tool = Tool(name="bash", description="remote bash", parameters=bash_module.PARAMETERS,
                    execute=lambda args, ctx: "ran remotely")

        @hookimpl
        def pi_tools(self) -> list[Tool]:
            return [Replacement.tool]

    assert build_registry(plugins).tools.items["bash"] is TOOL
    register_module(plugins, Replacement, "remote-bash")
    registry = build_registry(plugins)
    assert registry.tools.items["bash"] is Replacement.tool
    assert [(o.name, o.winner, o.loser) for o in registry.overrides] == [("bash", "remote-bash", "bash")]


# --- the behaviours of docs/tools.md#bash ---------------------------------------------------------

def test_echo(ctx: ToolContext) -> None:
    result = run({"command": "echo 'test output'"}, ctx)
    assert "test output" in text_of(result) and result.details is None


def test_exit_code_is_an_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"(Command failed|code 1)") as info:
        run({"command": "exit 1"}, ctx)
    assert str(info.value) == "(no output)\n\nCommand exited with code 1"


def test_exit_code_text_matches_pi(ctx: ToolContext) -> None:  # reference/pi-tool-results-sample.json
    with pytest.raises(ToolError) as info:
        run({"command": "echo bye; exit 2"}, ctx)
    assert str(info.value) == "bye\n\n\nCommand exited with code 2"


def test_timeout(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=re.compile("timed out", re.IGNORECASE)):
        run({"command": "sleep 30", "timeout": 0.3}, ctx)


def test_timeout_text_keeps_output(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        run({"command": "echo before; sleep 30", "timeout": 1}, ctx)
    assert str(info.value) == "before\n\n\nCommand timed out after 1 seconds"


def test_timeout_number_printed_like_javascript(ctx: ToolContext) -> None:
    with pytest.raises(ToolError) as info:
        run({"command": "sleep 30", "timeout": 0.5}, ctx)
    assert str(info.value) == "Command timed out after 0.5 seconds"
    with pytest.raises(ToolError) as info:
        run({"command": "sleep 30", "timeout": 1.0}, ctx)
    assert str(info.value) == "Command timed out after 1 seconds"


def test_zero_or_negative_timeout_means_none(ctx: ToolContext) -> None:
    assert text_of(run({"command": "echo ok", "timeout": 0}, ctx)) == "ok\n"
    assert text_of(run({"command": "echo ok", "timeout": -1}, ctx)) == "ok\n"


def test_missing_cwd() -> None:
    ctx = ToolContext(cwd=Path("/this/directory/definitely/does/not/exist/12345"))
    with pytest.raises(ToolError) as info:
        run({"command": "echo test"}, ctx)
    assert str(info.value) == ("Working directory does not exist: /this/directory/definitely/does/not/exist/12345"
                               "\nCannot execute bash commands.")


def test_spawn_error_reports_enoent(ctx: ToolContext) -> None:
    ops = LocalShellOperations(shell=ShellConfig("/nonexistent-shell-path-xyz123"))
    with pytest.raises(ToolError, match="ENOENT"):
        run({"command": "echo test"}, ctx, create_bash_tool(BashOptions(operations=ops)))


def test_custom_shell_path_must_exist(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"^Custom shell path not found: /custom/bash"):
        run({"command": "echo test"}, ctx, create_bash_tool(BashOptions(shell_path="/custom/bash")))


def test_custom_shell_path_is_used(ctx: ToolContext, tmp_path: Path) -> None:
    shell = tmp_path / "myshell"
    shell.write_text('#!/bin/sh\necho "custom shell got: $2"\n')
    shell.chmod(0o755)
    result = run({"command": "echo hi"}, ctx, create_bash_tool(BashOptions(shell_path=str(shell))))
    assert text_of(result) == "custom shell got: echo hi\n"


def test_command_prefix(ctx: ToolContext) -> None:
    tool = create_bash_tool(BashOptions(command_prefix="export TEST_VAR=hello"))
    assert text_of(run({"command": "echo $TEST_VAR"}, ctx, tool)).strip() == "hello"
    tool = create_bash_tool(BashOptions(command_prefix="echo prefix-output"))
    assert text_of(run({"command": "echo command-output"}, ctx, tool)).strip() == "prefix-output\ncommand-output"
    assert text_of(run({"command": "echo no-prefix"}, ctx)).strip() == "no-prefix"


def test_session_settings_from_ctx_extras(tmp_path: Path) -> None:
    shell = tmp_path / "myshell"
    shell.write_text('#!/bin/sh\necho "session shell got: $2"\n')
    shell.chmod(0o755)
    ctx = ToolContext(cwd=tmp_path, extras={"shell_path": str(shell), "shell_command_prefix": "set -e"})
    assert text_of(run({"command": "echo hi"}, ctx)) == "session shell got: set -e\necho hi\n"


def test_spawn_hook_rewrites_command_cwd_and_env(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()

    def hook(spawn: SpawnContext) -> SpawnContext:
        spawn.env["HOOKED"] = "yes"
        return SpawnContext(spawn.command + "; pwd; echo $HOOKED", str(tmp_path / "sub"), spawn.env)

    result = run({"command": "echo start"}, ctx, create_bash_tool(BashOptions(spawn_hook=hook)))
    assert text_of(result) == f"start\n{tmp_path / 'sub'}\nyes\n"


class ScriptedOperations:
    """A backend that replays byte chunks, as a remote plugin would stream them."""

    def __init__(self, chunks: list[bytes], exit_code: int | None = 0) -> None:
        self.chunks, self.exit_code = chunks, exit_code
        self.calls: list[tuple[str, str]] = []

    def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
        self.calls.append((command, cwd))
        for chunk in self.chunks:
            options.on_data(chunk)
        return self.exit_code


def test_utf8_split_across_chunks(ctx: ToolContext) -> None:
    data = "héllo wörld 😀 done\n".encode()
    cut = data.index("😀".encode()) + 2  # inside the 4-byte emoji
    ops = ScriptedOperations([data[:3], data[3:cut], data[cut:]])
    result = run({"command": "x"}, ctx, create_bash_tool(BashOptions(operations=ops)))
    assert text_of(result) == "héllo wörld 😀 done\n"
    assert ops.calls == [("x", str(ctx.cwd))]


def test_utf8_split_across_real_pipe_reads(ctx: ToolContext) -> None:
    result = run({"command": r"printf '\xc3'; sleep 0.2; printf '\xa9\n'"}, ctx)
    assert text_of(result) == "é\n"


def test_many_short_lines_spill_to_temp_file(ctx: ToolContext) -> None:
    result = run({"command": "seq 1 2500"}, ctx)
    text = text_of(result)
    path = full_output_path(text)
    assert path.name.startswith("pi-bash-") and path.suffix == ".log" and path.exists()
    assert text.endswith(f"\n\n[Showing lines 502-2501 of 2501. Full output: {path}]")
    assert path.read_text() == "".join(f"{i}\n" for i in range(1, 2501))
    assert result.details["fullOutputPath"] == str(path)
    assert result.details["truncation"]["truncatedBy"] == "lines"
    assert result.details["truncation"]["totalLines"] == 2501


def test_byte_limit_notice(ctx: ToolContext) -> None:
    result = run({"command": "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"}, ctx)
    text = text_of(result)
    path = full_output_path(text)
    assert text.endswith(f"\n\n[Showing lines 489-1001 of 1001 (50.0KB limit). Full output: {path}]")
    assert len(path.read_bytes()) == 100_000


def test_partial_last_line_notice(ctx: ToolContext) -> None:
    result = run({"command": "head -c 100000 /dev/zero | tr '\\0' x"}, ctx)
    text = text_of(result)
    path = full_output_path(text)
    assert text == "x" * 51200 + f"\n\n[Showing last 50.0KB of line 1 (line is 97.7KB). Full output: {path}]"


def test_stdout_and_stderr_combined_in_order(ctx: ToolContext) -> None:
    result = run({"command": "echo one; echo two >&2; echo three"}, ctx)
    assert text_of(result) == "one\ntwo\nthree\n"


def test_no_output(ctx: ToolContext) -> None:
    assert text_of(run({"command": "true"}, ctx)) == "(no output)"


def test_killed_by_foreign_signal_is_not_an_error(ctx: ToolContext) -> None:
    assert text_of(run({"command": "echo partial; kill -9 $$"}, ctx)) == "partial\n"


def test_background_process_does_not_block_completion(ctx: ToolContext, tmp_path: Path) -> None:
    result = run({"command": f"sleep 30 & echo $! > {tmp_path}/bg.pid; echo done"}, ctx)
    assert text_of(result) == "done\n"
    os.kill(int((tmp_path / "bg.pid").read_text()), 9)


# --- process groups, cancel ------------------------------------------------------------------------

GRANDCHILD = "sleep 300 & echo $! > {pidfile}; echo started; wait"


def test_timeout_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    with pytest.raises(ToolError, match="timed out"):
        run({"command": GRANDCHILD.format(pidfile=pidfile), "timeout": 0.5}, ctx)
    assert wait_until(lambda: pid_gone(int(pidfile.read_text())))


def test_cancel_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    errors: list[BaseException] = []

    def target() -> None:
        try:
            run({"command": GRANDCHILD.format(pidfile=pidfile)}, ctx)
        except BaseException as err:  # noqa: BLE001 - handed to the main thread for assertions
            errors.append(err)

    thread = threading.Thread(target=target)
    thread.start()
    assert wait_until(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    ctx.signal.abort()
    thread.join(10)
    assert not thread.is_alive()
    assert [str(e) for e in errors] == ["started\n\n\nCommand aborted"]
    assert wait_until(lambda: pid_gone(int(pidfile.read_text())))


def test_already_aborted_signal(ctx: ToolContext) -> None:
    ctx.signal.abort()
    with pytest.raises(ToolError) as info:
        run({"command": "sleep 30"}, ctx)
    assert str(info.value) == "Command aborted"


def test_operations_may_fail_with_pi_messages(ctx: ToolContext) -> None:
    class Failing:
        def __init__(self, err: Exception) -> None:
            self.err = err

        def exec(self, command: str, cwd: str, options: ExecOptions) -> int | None:
            options.on_data(b"partial\n")
            raise self.err

    for err, expected in [(ExecAborted(), "partial\n\n\nCommand aborted"),
                          (RuntimeError("aborted"), "partial\n\n\nCommand aborted"),
                          (RuntimeError("timeout:7"), "partial\n\n\nCommand timed out after 7 seconds"),
                          (RuntimeError("ssh: connection refused"), "ssh: connection refused")]:
        with pytest.raises(Exception) as info:
            run({"command": "x", "timeout": 7}, ctx, create_bash_tool(BashOptions(operations=Failing(err))))
        assert str(info.value) == expected


# --- progress updates --------------------------------------------------------------------------------

def test_updates_are_throttled_and_flushed(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    ctx = ToolContext(cwd=tmp_path, on_update=updates.append)
    ops = ScriptedOperations([f"line {i}\n".encode() for i in range(2000)])
    result = run({"command": "x"}, ctx, create_bash_tool(BashOptions(operations=ops)))
    assert updates[0].content == [] and updates[0].details is None
    # 2000 chunks in a tight loop: at most one update per 100 ms, so only a handful.
    assert 2 <= len(updates) < 100
    # The last update carries everything (the kept tail; the notice only goes into the result).
    assert updates[-1].content[0].text == result.details["truncation"]["content"]  # type: ignore[union-attr]
    assert updates[-1].content[0].text.endswith("line 1999\n")  # type: ignore[union-attr]
    count = len(updates)
    time.sleep(0.3)
    assert len(updates) == count  # nothing after the tool returned


def test_update_details_name_the_spill_file(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    ctx = ToolContext(cwd=tmp_path, on_update=updates.append)
    result = run({"command": "seq 1 3000"}, ctx)
    last = updates[-1]
    assert last.details["fullOutputPath"] == result.details["fullOutputPath"]
    assert last.details["truncation"]["truncated"] is True


# --- run_command (for !cmd and RPC bash) -------------------------------------------------------------

def test_run_command(tmp_path: Path) -> None:
    result = run_command("echo hi; exit 3", str(tmp_path))
    assert isinstance(result, BashResult)
    output, exit_code, cancelled, truncated, path = result
    assert (output, exit_code, cancelled, truncated, path) == ("hi\n", 3, False, False, None)

    big = run_command("seq 1 5000", str(tmp_path))
    assert big.truncated and big.output.endswith("5000\n") and Path(big.full_output_path or "").exists()

    from pi_core.signals import AbortSignal

    signal = AbortSignal()
    signal.abort()
    assert run_command("sleep 30", str(tmp_path), signal=signal) == BashResult("", None, True, False, None)


# --- memory bound and temp dir cleanup (in child processes) ------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from pi_core.tools import ToolContext
    from pi_builtin_tools.bash import TOOL
    result = TOOL.execute({"command": sys.argv[1]}, ToolContext(cwd=Path.cwd()))
    # VmHWM, not ru_maxrss: Linux carries the parent's (pytest's) peak across fork+exec into ru_maxrss.
    status = Path("/proc/self/status").read_text().splitlines()
    peak_kb = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    print(json.dumps({"details": result.details, "peak_kb": peak_kb, "tail": result.content[0].text[-300:]}))
""")


def run_child(tmp_path: Path, command: str) -> dict[str, Any]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", CHILD, command], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=True, env=env)
    return json.loads(proc.stdout)


def test_memory_stays_bounded_on_50mb_of_output(tmp_path: Path) -> None:
    report = run_child(tmp_path, "yes 'a line of output that repeats' | head -c 50000000")
    path = Path(report["details"]["fullOutputPath"])
    # Without a session the full output stays in the temp dir past exit, as in Pi (issue 16 item 2).
    assert path.parent == tmp_path and path.stat().st_size == 50_000_000
    assert report["details"]["truncation"]["totalBytes"] == 50_000_000
    assert report["peak_kb"] < 150 * 1024, f"peak RSS {report['peak_kb'] / 1024:.0f} MB"


def test_full_output_outlives_a_sigterm_exit_at_an_unpredictable_path(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import signal, sys, time
        from pathlib import Path
        from pi_core.tools import ToolContext
        from pi_builtin_tools.bash import TOOL
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # what the CLI does
        result = TOOL.execute({"command": "seq 1 100000"}, ToolContext(cwd=Path.cwd()))
        print(result.details["fullOutputPath"], flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.stdout is not None
    path = Path(proc.stdout.readline().strip())
    assert path.parent == tmp_path and path.name.startswith("pi-bash-") and path.stat().st_mode & 0o077 == 0
    proc.terminate()
    assert proc.wait(30) == 143
    assert path.read_text().startswith("1\n2\n")
