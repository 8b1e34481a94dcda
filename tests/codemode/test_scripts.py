"""codemode through the real ``pi`` command: the fake model sends scripts, pi runs them in QuickJS workers and
sends back only their output (docs/codemode.md). Texts the model reads are Pi 1.6.0's."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import result_of, scripts, tool_results

HEADER = re.compile(r"^Script (completed|failed)\nWall time \d+\.\d seconds\nOutput:\n\n")


def body(text: str) -> str:
    assert HEADER.match(text), text
    return HEADER.sub("", text)


def run(pi: PiRunner, *codes: str, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    pi.server.add(*scripts(*codes))
    result = pi.run("-p", "--tools", "+codemode", *flags, "go", timeout=90)
    assert result.returncode == 0, result.stderr
    return result


def workers_of(pi_pid: int | None = None) -> list[int]:
    """Live codemode workers started by the pi process ``pi_pid`` (any pi of this test's runner: None)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if b"codemode/worker.py" not in (proc / "cmdline").read_bytes():
                continue
            environ = dict(item.split(b"=", 1) for item in (proc / "environ").read_bytes().split(b"\0") if b"=" in item)
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        parent = int(environ.get(b"PI_CODEMODE_PARENT", b"0"))
        if state != "Z" and (pi_pid is None or parent == pi_pid):
            found.append(int(proc.name))
    return found


def test_tool_calls_resolve_to_text_or_structured_values(pi: PiRunner) -> None:
    (pi.cwd / "a.txt").write_text("hello\nworld\n")
    run(pi, 'text("a"); text("b"); console.log("x", {a: 1}, NaN); return await tools.read({path: "a.txt"})',
        'const r = await tools.bash({command: "echo out; exit 3"}); return [r.output, r.exit_code, r.truncated]',
        'return 1 + 1')
    assert body(result_of(pi, 0)["text"]) == (
        "==> text 1/3 <==\na\n==> text 2/3 <==\nb\n==> text 3/3 <==\nhello\nworld\n"
        '<console_output>\nx {"a":1} NaN\n</console_output>')
    assert result_of(pi, 0)["text"].startswith("Script completed\n")
    assert body(result_of(pi, 1)["text"]) == '["out\\n",3,false]'  # a non-zero exit resolves too
    assert body(result_of(pi, 2)["text"]) == "2"


def test_calls_run_in_parallel_on_pis_event_loop(pi: PiRunner) -> None:
    # Each command waits for the file the other one writes: run one after the other, both would time out.
    run(pi, """const [a, b] = await Promise.all([
  tools.bash({command: "touch a; for i in $(seq 100); do [ -f b ] && break; sleep 0.05; done; [ -f b ] && echo A", timeout: 10}),
  tools.bash({command: "touch b; for i in $(seq 100); do [ -f a ] && break; sleep 0.05; done; [ -f a ] && echo B", timeout: 10}),
]);
return a.output + b.output""")
    assert body(result_of(pi, 0)["text"]) == "A\nB\n"


def test_failed_and_blocked_calls_reject_and_allsettled_keeps_the_rest(pi: PiRunner) -> None:
    (pi.cwd / "a.txt").write_text("x")
    run(pi, """const r = await Promise.allSettled([tools.read({path: "missing.txt"}), tools.read({path: "a.txt"}),
  tools.read({nope: 1})]);
return r.map(o => o.status === "fulfilled" ? o.value : o.reason.message)""")
    values = json.loads(body(result_of(pi, 0)["text"]))
    assert values[1] == "x"
    assert "missing.txt" in values[0]
    assert values[2].startswith("Validation failed for tool \"read\"")


def test_lone_surrogates_from_scripts_are_replaced_as_in_the_models_arguments(pi: PiRunner) -> None:
    (pi.cwd / "a\ufffdb.txt").write_text("found")
    run(pi, 'return [await tools.read({path: "a\\ud800b.txt"}), "x\\udc00y"]')
    assert body(result_of(pi, 0)["text"]) == r'["found","x\udc00y"]'  # JSON.stringify escapes a lone one


def test_json_mode_shows_nested_calls_with_their_parent(pi: PiRunner) -> None:
    (pi.cwd / "a.txt").write_text("x")
    pi.server.add(*scripts('return await tools.read({path: "a.txt"})'))
    result = pi.run("--mode", "json", "--tools", "+codemode", "go", timeout=90)
    events = [json.loads(line) for line in result.stdout.splitlines()]
    nested = [e for e in events if e.get("parentToolCallId")]
    assert [e["type"] for e in nested] == ["tool_execution_start", "tool_execution_end"]
    parent = nested[0]["parentToolCallId"]
    assert nested[0]["toolCallId"] == f"{parent}/1"
    assert nested[1]["result"]["structuredContent"] == "x"
    # the nested call is not a message of the session: only codemode's own result is
    results = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "toolResult"]
    assert [m["message"]["toolName"] for m in results] == ["codemode"]


def test_bad_scripts_fail_with_clear_results(pi: PiRunner) -> None:
    run(pi, "syntax error(", 'throw new TypeError("bad")', "tools.reed({})", "await new Promise(() => {})",
        'const a = 1;\n// @options: {"timeout_ms": 5}\nreturn a', '// @options: {"nope": 1}\nreturn 1',
        '// @options: {"timeout_ms": 0}\nreturn 1', "   ", 'text("partial"); await tools.read({path: "x"}); null.x')
    texts = [result_of(pi, i)["text"] for i in range(9)]
    assert all(result_of(pi, i)["is_error"] for i in range(9))
    assert body(texts[0]) == "Script error:\nSyntaxError: expecting ';'\n    at codemode.js:1:36\n\nNo tool calls were made."
    assert body(texts[1]) == "Script error:\nTypeError: bad\n    at <anonymous> (codemode.js:1:39)\n\nNo tool calls were made."
    assert ("TypeError: tools.reed does not exist. Available: read, bash, edit, write. ALL_TOOLS lists every tool; "
            'searchTools(query) finds tools by topic. Check for a member with "reed" in tools.') in texts[2]
    assert body(texts[3]) == ("Script error:\nError: The script is waiting on a promise that can never settle: no tool "
                              "call is pending, and timers do not exist here.\n\nNo tool calls were made.")
    assert texts[4] == "The // @options: line must be the first line of the input; found one on line 2"
    assert texts[5] == "@options only supports `max_output_tokens` and `timeout_ms`; got `nope`"
    assert texts[6] == "@options field `timeout_ms` must be a positive integer up to 2147483647"
    assert texts[7].startswith("Expected JavaScript source text (non-empty).")
    assert body(texts[8]).startswith("partial\nScript error:\nError: ENOENT: no such file")  # partial output kept
    assert texts[8].endswith("Tool calls made before the failure (they are not undone): read (error)")


def test_long_output_keeps_start_and_end_and_the_whole_text_in_a_temp_file(pi: PiRunner) -> None:
    run(pi, '// @options: {"max_output_tokens": 10}\nfor (let i = 0; i < 50; i++) text("line " + i)')
    text = body(result_of(pi, 0)["text"])
    assert text.startswith("Warning: truncated output (original token count: ")
    path = Path(re.search(r"\[Full output: (.+) \(read with offset/limit\)\]$", text).group(1))
    full = path.read_text()
    # 10 tokens: the first and last 20 characters around the count of what was left out
    assert f"\nTotal output lines: 100\n\n{full[:20]}\u2026323 tokens truncated\u2026{full[-20:]}\n\n[Full output:" in text
    assert full.startswith("==> text 1/50 <==\nline 0\n") and full.endswith("==> text 50/50 <==\nline 49")
    path.unlink()


def test_store_and_load_keep_values_across_calls_and_sessions(pi: PiRunner) -> None:
    run(pi, 'store("cursor", {page: 2}); store("gone", 1); return load("cursor").page',
        'store("gone", undefined); store("lost", 5); throw new Error("x")',
        'return [load("cursor"), load("gone"), load("lost")]')
    assert body(result_of(pi, 0)["text"]) == "2"
    assert body(result_of(pi, 2)["text"]) == '[{"page":2},1,null]'  # a failed script keeps no writes
    [session] = pi.session_files()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    stored = [e["data"] for e in entries if e.get("customType") == "codemode-store"]
    assert stored == [{"set": {"cursor": {"page": 2}, "gone": 1}, "delete": []}]
    pi.server.add(*scripts('return load("cursor")'))
    resumed = pi.run("-p", "--continue", "--tools", "+codemode", "again", timeout=90)
    assert resumed.returncode == 0, resumed.stderr
    [last] = tool_results(pi.server.requests[-1].body)
    assert body(last["text"]) == '{"page":2}'


def test_discovery_globals(pi: PiRunner) -> None:
    run(pi, 'return ALL_TOOLS.map(t => t.name)',
        'return (await searchTools("shell command", {limit: 1})).map(t => t.name)',
        'const d = await describeTool("read"); return [d.includes("declare const tools: { read(args: {"), '
        'await describeTool("nope") === undefined]',
        'await searchTools("x", {limit: 0})')
    assert json.loads(body(result_of(pi, 0)["text"])) == ["read", "bash", "edit", "write"]
    assert json.loads(body(result_of(pi, 1)["text"])) == ["bash"]
    assert json.loads(body(result_of(pi, 2)["text"])) == [True, True]
    assert "Error: searchTools() limit must be a positive integer" in result_of(pi, 3)["text"]


def test_image_output_is_shown_and_saved(pi: PiRunner) -> None:
    from PIL import Image

    Image.new("RGB", (4, 4), "red").save(pi.cwd / "red.png")
    run(pi, 'const img = await tools.read({path: "red.png"}); image(img); text(img.type)',
        'image("https://example.com/a.png")')
    result = result_of(pi, 0)
    saved = re.search(r"\[Image saved to (\S+\.png) \(image/png, \d+B\)\]", result["text"])
    assert saved, result["text"]
    data = Path(saved.group(1)).read_bytes()
    assert data.startswith(b"\x89PNG")
    assert base64.b64decode(result["images"][0]["source"]["data"]) == data
    assert result["text"].endswith("image")
    Path(saved.group(1)).unlink()
    assert "remote image URLs are not supported in tool outputs" in result_of(pi, 1)["text"]


def test_a_script_that_loops_forever_is_stopped_at_its_deadline(pi: PiRunner) -> None:
    run(pi, '// @options: {"timeout_ms": 1000}\ntext("started"); while (true) {}', 'return "still healthy"')
    first = result_of(pi, 0)
    assert first["is_error"]
    assert body(first["text"]) == ("started\nScript error:\nScript timed out: Execution timed out after 1000 ms\n\n"
                                   "No tool calls were made.")
    assert body(result_of(pi, 1)["text"]) == "still healthy"


def test_a_killed_pi_takes_its_worker_with_it(pi: PiRunner) -> None:
    pi.server.add(*scripts("while (true) {}"))
    proc = pi.popen("-p", "--tools", "+codemode", "go")
    try:
        for _ in range(400):
            if workers_of(proc.pid):
                break
            time.sleep(0.05)
        [worker] = workers_of(proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # pi alone: its worker is in its process group
        proc.communicate()
    for _ in range(100):
        if not workers_of(proc.pid):
            break
        time.sleep(0.05)
    assert workers_of(proc.pid) == [], f"worker {worker} outlived pi"


def test_memory_limit(pi: PiRunner) -> None:
    run(pi, 'const a = []; while (true) a.push("x".repeat(4096) + a.length)', 'return "ok"')
    assert body(result_of(pi, 0)["text"]).startswith("Script error:\nInternalError: out of memory\n")
    assert body(result_of(pi, 1)["text"]) == "ok"


def test_worker_cap_makes_scripts_wait_and_time_out(pi: PiRunner) -> None:
    pi.extra_env["PI_CODEMODE_MAX_WORKERS"] = "1"
    slow = 'await tools.bash({command: "sleep 2"}); return "slow"'
    waiting = '// @options: {"timeout_ms": 300}\nreturn "never"'
    pi.server.add(Reply(tool_calls=[("codemode", {"code": slow}), ("codemode", {"code": waiting})]), Reply(text="ok"))
    result = pi.run("-p", "--tools", "+codemode", "go", timeout=90)
    assert result.returncode == 0, result.stderr
    first, second = tool_results(pi.server.requests[1].body)
    assert body(first["text"]) == "slow"
    assert body(second["text"]) == ("Script error:\nScript timed out: Execution timed out after 300 ms while waiting "
                                    "for a free codemode worker\n\nThe script did not start.")


def test_ctrl_c_aborts_the_script_and_ends_its_worker(pi: PiRunner) -> None:
    pi.server.add(*scripts("while (true) {}"))
    proc = pi.popen("--mode", "json", "--tools", "+codemode", "go")
    for _ in range(400):
        if workers_of(proc.pid):
            break
        time.sleep(0.05)
    assert workers_of(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, _err = proc.communicate(timeout=60)
    [end] = [e for e in map(json.loads, out.splitlines()) if e["type"] == "tool_execution_end"]
    assert end["isError"]
    assert end["result"]["content"][1]["text"] == ("Script error:\nScript aborted: Execution aborted\n\n"
                                                   "No tool calls were made.")
    assert workers_of(proc.pid) == []
