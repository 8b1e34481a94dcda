"""``pi batch`` on the local executor, through the real CLI against the fake model server (issue 22)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from .conftest import Batch


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line or environment contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            data = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in data and state != "Z":
            found.append(int(entry.name))
    return found


def wait_for(predicate, timeout: float = 60, what: str = "condition"):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def marker() -> str:
    value = f"pibatchmark{uuid.uuid4().hex[:10]}"
    yield value
    for pid in processes_with(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_twenty_tasks_with_tool_calls(batch: Batch) -> None:
    batch.tasks(*({"id": f"task-{i:02d}", "prompt": f"RUN: echo hello-{i} && pwd", "meta": {"n": i}}
                  for i in range(20)))
    result = batch.run("-j", "3")
    assert result.returncode == 0, result.stderr
    records = batch.results()
    assert sorted(r["id"] for r in records) == [f"task-{i:02d}" for i in range(20)]  # each exactly once
    workspaces = set()
    for record in records:
        n = record["meta"]["n"]
        assert record["status"] == "ok" and record["error"] is None
        assert record["answer"].startswith("done: ") and f"hello-{n}\\n" in record["answer"]
        assert record["turns"] == 2 and record["attempts"] == 1 and record["model"] == "fake/fake-model"
        assert record["usage"] == {"input": 200, "output": 30, "cache_read": 0, "cache_write": 0,
                                   "total_tokens": 230}
        assert record["cost"] == pytest.approx((200 * 3 + 30 * 15) / 1e6)
        assert record["duration_s"] > 0 and record["line"] == n + 1
        assert record["workspace"] in record["answer"]  # the tool ran in the task's own working copy
        workspaces.add(record["workspace"])
        session = [json.loads(line) for line in (batch.out / record["session"]).read_text().splitlines()]
        assert session[0]["type"] == "session" and session[0]["cwd"] == record["workspace"]
        tool_calls = [b for e in session if e["type"] == "message" for b in e["message"].get("content", [])
                      if isinstance(b, dict) and b.get("type") == "toolCall"]
        assert tool_calls[0]["arguments"]["command"] == f"echo hello-{n} && pwd"
    assert len(workspaces) == 20
    assert "20 task(s): 20 ok" in result.stdout and "tasks/min" in result.stdout  # the summary table
    assert sum(1 for line in result.stdout.splitlines() if line.startswith("  task-")) == 20
    assert "[20/20] ok" in result.stderr  # progress, one line per task when stderr is no terminal


def test_malformed_lines_are_reported_with_their_number_and_skipped(batch: Batch) -> None:
    batch.tasks(
        {"id": "good-1", "prompt": "first"},
        '{"id": "broken", "prompt": ',
        {"id": "no-prompt"},
        {"id": "typo", "prompt": "x", "timout_s": 5},
        {"id": "good-1", "prompt": "again"},
        "[1, 2]",
        {"id": "bad-timeout", "prompt": "x", "timeout_s": -1},
        {"id": "good-2", "prompt_file": "prompt.txt"},
    )
    (batch.tasks_path.parent / "prompt.txt").write_text("from a file")
    result = batch.run("-j", "2")
    assert result.returncode == 1  # malformed lines make the run fail, after the good tasks ran
    err = result.stderr
    assert "skipped line 2: not valid JSON" in err
    assert "skipped line 3: missing prompt (or prompt_file)" in err
    assert "skipped line 4: unknown field(s) timout_s; valid fields:" in err
    assert "skipped line 5: duplicate id 'good-1' (first on line 1)" in err
    assert "skipped line 6: a task is a JSON object, not list" in err
    assert "skipped line 7: timeout_s must be greater than 0" in err
    assert "Traceback" not in err
    records = batch.by_id()
    assert set(records) == {"good-1", "good-2"}
    assert records["good-1"]["answer"] == "answer: first" and records["good-2"]["answer"] == "answer: from a file"
    assert "6 malformed line(s) skipped" in result.stdout


def test_timeout_stops_the_task_and_kills_its_tool_tree(batch: Batch, marker: str) -> None:
    # a plain child, a child in its own session (setsid), and a double-forked daemon
    command = (f"sh -c 'sleep 300; : {marker}' & setsid sh -c 'sleep 300; : {marker}' & "
               f"(sh -c 'sleep 300; : {marker}' &) ; sleep 300")
    # 8 s: time enough for pi to start and make its first turn even on a busy machine
    batch.tasks({"id": "slow", "prompt": f"RUN: {command}", "timeout_s": 8}, {"id": "quick", "prompt": "hi"})
    started = time.monotonic()
    result = batch.run("-j", "2")
    assert time.monotonic() - started < 60
    assert result.returncode == 1, result.stderr
    records = batch.by_id()
    assert records["slow"]["status"] == "timeout" and records["slow"]["error"] == "timed out after 8s"
    assert 8 <= records["slow"]["duration_s"] < 25
    assert records["slow"]["turns"] == 1  # what it used before the timeout is still counted
    assert records["quick"]["status"] == "ok"
    assert processes_with(marker) == []


def test_provider_errors_are_results_not_retries(batch: Batch) -> None:
    batch.tasks({"id": "refused", "prompt": "FAIL: the model refused this request"}, {"id": "fine", "prompt": "x"})
    result = batch.run("-j", "2")
    assert result.returncode == 1
    records = batch.by_id()
    assert records["refused"]["status"] == "error" and records["refused"]["attempts"] == 1
    assert "the model refused this request" in records["refused"]["error"]
    assert records["fine"]["status"] == "ok"
    failing = [r for r in batch.pi.server.requests if "FAIL" in json.dumps(r.body)]
    assert len(failing) == 1  # the task was not run again


def test_a_killed_worker_makes_its_task_retry_and_complete_once(batch: Batch, tmp_path: Path) -> None:
    flag = tmp_path / "killed-once"
    # $PPID of the bash tool is the task's pi: the first attempt kills its own worker with SIGKILL
    once = f"RUN: if [ ! -e {flag} ]; then touch {flag}; kill -9 $PPID; sleep 5; fi; echo survived"
    always = "RUN: kill -9 $PPID; sleep 5"
    batch.tasks({"id": "crashes-once", "prompt": once}, {"id": "always-crashes", "prompt": always},
                {"id": "bystander", "prompt": "RUN: echo fine"})
    result = batch.run("-j", "3", "--retries", "1")
    assert result.returncode == 1
    records = batch.results()
    assert sorted(r["id"] for r in records) == ["always-crashes", "bystander", "crashes-once"]  # no duplicates
    by_id = {r["id"]: r for r in records}
    assert by_id["crashes-once"]["status"] == "ok" and by_id["crashes-once"]["attempts"] == 2
    assert "survived" in by_id["crashes-once"]["answer"]
    assert by_id["always-crashes"]["status"] == "error" and by_id["always-crashes"]["attempts"] == 2
    assert by_id["always-crashes"]["error"] == ("pi was killed by SIGKILL before the task finished "
                                                "(gave up after 2 attempts)")
    assert by_id["bystander"]["status"] == "ok"
    assert "retrying crashes-once (attempt 2 of 2): pi was killed by SIGKILL" in result.stderr


def test_resume_skips_finished_tasks_and_never_loses_results(batch: Batch) -> None:
    batch.tasks({"id": "a", "prompt": "one"}, {"id": "b", "prompt": "two"})
    assert batch.run().returncode == 0
    first = (batch.out / "results.jsonl").read_text()
    batch.tasks({"id": "a", "prompt": "one"}, {"id": "b", "prompt": "two"}, {"id": "c", "prompt": "three"})
    refused = batch.run()
    assert refused.returncode == 1
    assert "already has 2 result(s); add --resume" in refused.stderr
    assert (batch.out / "results.jsonl").read_text() == first
    requests = len(batch.pi.server.requests)
    resumed = batch.run("--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert len(batch.pi.server.requests) == requests + 1  # only c ran
    assert sorted(r["id"] for r in batch.results()) == ["a", "b", "c"]
    assert "--resume: 2 task(s) already have a result" in resumed.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)])
def test_interrupt_cancels_running_tasks_leaving_valid_results(batch: Batch, marker: str, tmp_path: Path,
                                                               signum: int) -> None:
    go = tmp_path / "go"
    waits = f"RUN: if [ -e {go} ]; then echo resumed; else sh -c 'sleep 300; : {marker}'; fi"
    batch.tasks({"id": "quick", "prompt": "hi"}, *({"id": f"wait-{i}", "prompt": waits} for i in range(4)))
    process = batch.popen("-j", "3")
    try:
        wait_for(lambda: "quick" in batch.by_id(), what="the quick task's result")
        # three tasks waiting, each in bash -c "... sh -c 'sleep 300; : marker'" (two marked processes)
        wait_for(lambda: len(processes_with(marker)) >= 6, what="three waiting tools")
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signum, err
    assert "cancelling 3 running task(s)" in err
    records = batch.by_id()  # every line parses
    assert records["quick"]["status"] == "ok"
    cancelled = [r for r in records.values() if r["status"] == "cancelled"]
    assert len(cancelled) == 3 and all(r["error"] == "cancelled before the task finished" for r in cancelled)
    assert all(r["turns"] == 1 for r in cancelled)  # what they used so far is counted
    assert len(records) == 4  # the one never started has no line
    assert processes_with(marker) == []  # no tool, pi or worker of any task outlives the run
    go.touch()
    resumed = batch.run("--resume", "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    final = batch.results()
    assert sorted(r["id"] for r in final) == ["quick", "wait-0", "wait-1", "wait-2", "wait-3"]
    assert all(r["status"] == "ok" for r in final)


def test_max_turns_caps_the_model_requests_of_a_task(batch: Batch) -> None:
    # the fake model answers at once and calls a tool on every turn: an abort sent from outside comes too late
    batch.tasks({"id": "loop-3", "prompt": "LOOP: echo again", "max_turns": 3},
                {"id": "loop-1", "prompt": "LOOP: echo first", "max_turns": 1},
                {"id": "loop-default", "prompt": "LOOP: echo default"},
                {"id": "short", "prompt": "RUN: echo once", "max_turns": 3})
    result = batch.run("-j", "2", "--max-turns", "2")
    assert result.returncode == 1, result.stderr
    records = batch.by_id()
    for task_id, prompt, limit in (("loop-3", "LOOP: echo again", 3), ("loop-1", "LOOP: echo first", 1),
                                   ("loop-default", "LOOP: echo default", 2)):
        assert batch.requests_for(prompt) == limit, task_id  # counted where the requests arrive
        record = records[task_id]
        assert record["status"] == "error" and record["error"] == f"stopped at max_turns ({limit})", record
        assert record["turns"] == limit and record["usage"]["total_tokens"] == 110 * limit
    assert batch.requests_for("RUN: echo once") == 2  # a task that ends by itself under the limit is ok
    assert records["short"]["status"] == "ok" and records["short"]["turns"] == 2
    session = [json.loads(line) for line in (batch.out / records["loop-3"]["session"]).read_text().splitlines()]
    results = [e for e in session if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    assert len(results) == 3  # the last turn's tool still ran; no request went out after it


def test_a_killed_batch_leaves_nothing_outside_out(batch: Batch, marker: str, tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    batch.pi.extra_env["TMPDIR"] = str(temp)  # the batch, its pi processes and their tools
    go = tmp_path / "go"
    waits = f"RUN: if [ -e {go} ]; then echo resumed; else sh -c 'sleep 300; : {marker}'; fi"
    batch.tasks({"id": "quick", "prompt": "hi"}, {"id": "waits", "prompt": waits})
    process = batch.popen("-j", "2")
    try:
        wait_for(lambda: "quick" in batch.by_id(), what="the quick task's result")
        wait_for(lambda: processes_with(marker), what="the waiting tool")
        process.kill()
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    # pi dies with its batch (a parent-death signal) and takes its tools along
    wait_for(lambda: not processes_with(marker), timeout=30, what="the killed batch's processes to end")
    scratch = batch.out / "workspaces" / ".pi-batch-sessions"
    assert [p.name for p in scratch.iterdir() if p.is_dir()]  # the unfinished session is under --out
    go.touch()
    resumed = batch.run("--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"removed 1 unfinished session folder(s) that a killed run left in {scratch}" in resumed.stderr
    assert batch.by_id()["waits"]["status"] == "ok"
    assert not scratch.exists()
    # pi's one stamp per user (when to clean old outputs next) is no leftover of a run
    assert [p.name for p in temp.iterdir() if not p.name.startswith("pi-outputs-due-")] == []
    assert processes_with(marker) == []


def test_tasks_sharing_a_cwd_never_run_at_once_and_repos_get_their_own_copy(batch: Batch, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    exclusive = "RUN: mkdir busy && sleep 1 && rmdir busy && echo clean"
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f.txt").write_text("old\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    first = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    (repo / "f.txt").write_text("new\n")
    subprocess.run([*git, "commit", "-qam", "second"], check=True)
    batch.tasks({"id": "s1", "prompt": exclusive, "cwd": str(shared)},
                {"id": "s2", "prompt": exclusive, "cwd": str(shared)},
                {"id": "wt-old", "prompt": "RUN: cat f.txt && echo x > f.txt", "repo": str(repo), "ref": first},
                {"id": "wt-new", "prompt": "RUN: cat f.txt", "repo": str(repo)},
                {"id": "clone", "prompt": "RUN: cat f.txt", "repo": f"file://{repo}", "ref": first})
    result = batch.run("-j", "4")
    assert result.returncode == 0, result.stderr + result.stdout
    records = batch.by_id()
    assert "clean" in records["s1"]["answer"] and "clean" in records["s2"]["answer"]
    assert records["s1"]["workspace"] == records["s2"]["workspace"] == str(shared)
    assert "old" in records["wt-old"]["answer"] and "new" in records["wt-new"]["answer"]
    assert "old" in records["clone"]["answer"]
    assert len({records[k]["workspace"] for k in ("wt-old", "wt-new", "clone")}) == 3
    assert (repo / "f.txt").read_text() == "new\n"  # the task's edit stayed in its own worktree


def test_sessions_get_the_plugins_and_options_given_before_batch(batch: Batch) -> None:
    ext = batch.pi.cwd / "stamp.py"
    ext.write_text(textwrap.dedent('''
        from pi_core import Tool, hookimpl

        @hookimpl
        def pi_tools():
            return [Tool(name="stamp", description="Stamp a thing.", parameters={"type": "object",
                         "properties": {}}, execute=lambda args, ctx: "stamped")]
    '''))
    batch.tasks({"id": "t", "prompt": "hello"}, {"id": "u", "prompt": "hello", "tools": ["read"]})
    result = batch.run("-j", "2", pi_options=("-e", "stamp.py", "--append-system-prompt", "BATCH-RULES"))
    assert result.returncode == 0, result.stderr
    tools_by_task = {}
    for request in batch.pi.server.requests:
        names = [d["name"] for t in request.body.get("tools", []) for d in t.get("functionDeclarations", [])]
        system = json.dumps(request.body.get("systemInstruction"))
        assert "BATCH-RULES" in system
        tools_by_task[len(names)] = names
    assert any("stamp" in names for names in tools_by_task.values())  # -e reached the session
    assert ["read"] in tools_by_task.values()  # the task's own tools replace the default set


def test_session_options_that_cannot_apply_are_refused(batch: Batch) -> None:
    batch.tasks({"id": "t", "prompt": "x"})
    result = batch.run(pi_options=("--continue",))
    assert result.returncode == 2
    assert "--continue cannot be used with pi batch" in result.stderr


def test_missing_ray_names_the_extra(batch: Batch, tmp_path: Path) -> None:
    fake = tmp_path / "noray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    batch.pi.extra_env["PYTHONPATH"] = str(fake.parent)
    batch.tasks({"id": "t", "prompt": "x"})
    result = batch.run("--executor", "ray")
    assert result.returncode == 1
    assert "Error: the ray executor needs Ray, which pi installs as an extra: pip install 'pi-harness[ray]'" \
        in result.stderr
    assert "Traceback" not in result.stderr


def test_a_tasks_own_model_thinking_and_system_prompt_reach_its_session(batch: Batch) -> None:
    models_file = batch.pi.home / "models.json"
    models = json.loads(models_file.read_text())
    (model,) = models["providers"]["fake"]["models"]
    models["providers"]["fake"]["models"].append({**model, "id": "fake-thinker", "reasoning": True})
    models_file.write_text(json.dumps(models))
    batch.tasks({"id": "think", "prompt": "hello thinker", "provider": "fake", "model": "fake-thinker",
                 "thinking": "high", "append_system_prompt": "TASK-RULES"},
                {"id": "plain", "prompt": "hello plain"},
                {"id": "bad", "prompt": "x", "thinking": "enormous"})
    result = batch.run("-j", "2")
    assert result.returncode == 1, result.stderr  # the malformed line fails the run, after the others ran
    assert "skipped line 3: thinking must be one of" in result.stderr
    records = batch.by_id()
    assert set(records) == {"think", "plain"}
    assert records["think"]["model"] == "fake/fake-thinker" and records["plain"]["model"] == "fake/fake-model"
    bodies = {json.dumps(r.body["contents"][0]): r for r in batch.pi.server.requests}
    think = next(r for key, r in bodies.items() if "hello thinker" in key)
    plain = next(r for key, r in bodies.items() if "hello plain" in key)
    assert "fake-thinker" in think.path and "fake-model" in plain.path
    assert "TASK-RULES" in json.dumps(think.body["systemInstruction"])
    assert "TASK-RULES" not in json.dumps(plain.body.get("systemInstruction"))
    assert think.body["generationConfig"]["thinkingConfig"] and "thinkingConfig" not in plain.body.get(
        "generationConfig", {})
