"""gondolin: the tools and the user's ``!`` commands go to a VM through the JSON-lines bridge. No QEMU here: a fake
``gondolin`` bridge on PATH plays the VM, mapping /workspace onto the host project folder (in file requests, in
exec argv and cwd, and back in exec output) and logging every request it gets."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pi_core.testing.fake_script import Reply
from pi_core.testing.fakebin import FakeBin

FAKE_BRIDGE = r'''
import base64, errno, os, signal, subprocess, threading
requests_log = os.path.join(os.path.dirname(sys.argv[0]), "gondolin.requests.jsonl")
mode = os.environ.get("FAKE_GONDOLIN_MODE", "")
out_lock = threading.Lock()
mounts = {}
procs = {}

def send(message):
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

def host(path):
    for guest, local in mounts.items():
        if path == guest or path.startswith(guest + "/"):
            return local + path[len(guest):]
    return path

def to_host_text(text):
    for guest, local in mounts.items():
        text = text.replace(guest, local)
    return text

def to_guest_bytes(data):
    for guest, local in mounts.items():
        data = data.replace(local.encode(), guest.encode())
    return data

def pump(call_id, stream, pipe):
    for line in iter(pipe.readline, b""):
        send({"id": call_id, "stream": stream, "data": base64.b64encode(to_guest_bytes(line)).decode()})

def run(call_id, request):
    env = {**os.environ, **(request.get("env") or {})}
    proc = subprocess.Popen([to_host_text(a) for a in request["argv"]], cwd=host(request["cwd"]), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    procs[call_id] = proc
    pumps = [threading.Thread(target=pump, args=(call_id, name, pipe))
             for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    for thread in pumps:
        thread.start()
    for thread in pumps:
        thread.join()
    code = proc.wait()
    send({"id": call_id, "ok": True, "result": {"exitCode": None if code < 0 else code}})

def answer(request):
    op, path = request["op"], host(request.get("path", ""))
    if op == "start":
        mounts.update(request["mounts"])
        return {"id": "f00dfeed-0000-4000-8000-gondolinfake"}
    if op == "readFile":
        with open(path, "rb") as handle:
            return {"data": base64.b64encode(handle.read()).decode()}
    if op == "writeFile":
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(request["data"]))
        return {}
    if op == "stat":
        st = os.stat(path)
        kind = "directory" if os.path.isdir(path) else "file" if os.path.isfile(path) else "other"
        return {"type": kind, "size": st.st_size}
    if op == "listDir":
        return {"entries": os.listdir(path)}
    if op == "mkdir":
        os.makedirs(path, exist_ok=True)
        return {}
    if op == "access":
        os.stat(path)
        return {}
    if op == "signal":
        os.killpg(procs[request["target"]].pid, signal.SIGKILL)
        return {}
    raise ValueError("unknown op " + op)

for line in sys.stdin:
    request = json.loads(line)
    with open(requests_log, "a") as log:
        log.write(json.dumps(request) + "\n")
    if mode == "garbage":
        sys.stdout.write("qemu-system-x86_64: -accel kvm: not JSON at all\n")
        sys.stdout.flush()
        continue
    if mode == "die-on-write" and request["op"] == "writeFile":
        sys.stderr.write("qemu-system-x86_64: guest panicked\n")
        sys.exit(3)
    if request["op"] == "exec":
        threading.Thread(target=run, args=(request["id"], request)).start()
        continue
    try:
        send({"id": request["id"], "ok": True, "result": answer(request)})
    except OSError as err:
        send({"id": request["id"], "ok": False,
              "error": {"code": errno.errorcode.get(err.errno, "EIO"), "message": str(err)}})
    if request["op"] == "close":
        break
'''


class Bridge:
    """The fake bridge's folder on PATH and its request log."""

    def __init__(self, tmp_path: Path) -> None:
        self.bins = FakeBin(tmp_path / "bin")
        self.bins.add("gondolin", FAKE_BRIDGE)

    def env(self, **extra: str) -> dict[str, str]:
        return {"PATH": self.bins.env()["PATH"], **extra}

    def requests(self, op: str | None = None) -> list[dict[str, Any]]:
        path = self.bins.directory / "gondolin.requests.jsonl"
        lines = path.read_text().splitlines() if path.is_file() else []
        return [r for r in map(json.loads, lines) if op is None or r["op"] == op]


def test_the_model_s_tools_run_in_the_vm(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    (example.cwd / "src").mkdir()
    (example.cwd / "src" / "notes.md").write_text("alpha\nthe needle is here\nomega\n")
    (example.cwd / "node_modules").mkdir()
    (example.cwd / "node_modules" / "dep.md").write_text("needle in a dependency\n")
    example.server.add(
        Reply(tool_calls=[("bash", {"command": "pwd; echo to-stderr >&2"})]),
        Reply(tool_calls=[("write", {"path": "a.txt", "content": "hello vm\n"})]),
        Reply(tool_calls=[("edit", {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "bye"}]})]),
        Reply(tool_calls=[("read", {"path": "/workspace/a.txt"})]),
        Reply(tool_calls=[("grep", {"pattern": "needle", "context": 1})]),
        Reply(tool_calls=[("find", {"pattern": "*.md"})]),
        Reply(tool_calls=[("ls", {})]),
        Reply(tool_calls=[("read", {"path": "missing.txt"})]),
        Reply(tool_calls=[("bash", {"command": "echo started; sleep 30", "timeout": 1})]),
        Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "--tools", "read,bash,edit,write,grep,find,ls", "go",
                       env=bridge.env())
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1)[0] == "/workspace\nto-stderr\n"
    assert (example.cwd / "a.txt").read_text() == "bye vm\n", "writes land in the host folder through the mount"
    writes = bridge.requests("writeFile")
    assert [w["path"] for w in writes] == ["/workspace/a.txt", "/workspace/a.txt"]
    assert example.tool_results(4)[0] == "bye vm\n"
    assert example.tool_results(5)[0] == "src/notes.md-1- alpha\nsrc/notes.md:2: the needle is here\nsrc/notes.md-3- omega"
    assert example.tool_results(6)[0] == "src/notes.md"
    assert example.tool_results(7)[0].split("\n") == ["a.txt", "node_modules/", "src/"]
    assert example.tool_results(8)[0] == "ENOENT: no such file or directory, access '/workspace/missing.txt'"
    assert example.tool_results(9)[0] == "started\n\n\nCommand timed out after 1 seconds"
    sleeper = next(r for r in bridge.requests("exec") if "sleep 30" in r["argv"][-1])
    assert [r["target"] for r in bridge.requests("signal")] == [sleeper["id"]]
    prompt = example.system_prompt(0)
    assert prompt.count(f"Current working directory: /workspace (Gondolin VM; host workspace mounted from "
                        f"{example.cwd})") == 1
    assert f"Current working directory: {example.cwd}\n" not in prompt
    start, probe = bridge.requests()[:2]
    assert start["op"] == "start" and start["mounts"] == {"/workspace": str(example.cwd)}
    assert probe["argv"] == ["/bin/sh", "-lc", "command -v bash || true"]
    bash = next(r for r in bridge.requests("exec") if r["argv"][-1].startswith("pwd"))
    assert bash["argv"][1:] == ["-lc", "pwd; echo to-stderr >&2"] and bash["argv"][0].endswith("bash")
    assert bash["cwd"] == "/workspace"
    assert bridge.requests()[-1]["op"] == "close", "the VM stops with the session"


def test_user_bash_and_the_command_over_rpc(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    client = example.rpc("gondolin", "--no-session", env=bridge.env())
    ready = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert ready["message"] == f"Gondolin VM ready. {example.cwd} is mounted at /workspace."
    statuses = [s["statusText"] for s in example.ui_requests(client, "setStatus")]
    assert "Gondolin: starting /workspace" in statuses[0]
    assert "Gondolin: f00dfeed (/workspace)" in statuses[1]
    result = client.bash("echo $PWD; ls /workspace")
    assert result["output"].split("\n")[0] == "/workspace"
    assert result["exitCode"] == 0
    assert bridge.requests("exec")[-1]["argv"][-1] == "echo $PWD; ls /workspace"
    client.prompt("/gondolin")
    info = client.wait_for_event(lambda e: e.get("method") == "notify" and "Gondolin VM:" in e["message"])
    lines = info["message"].split("\n")
    assert lines[:3] == ["Gondolin VM: f00dfeed-0000-4000-8000-gondolinfake", f"Host workspace: {example.cwd}",
                         "Guest workspace: /workspace"]
    assert re.fullmatch(r"Shell: /\S*bash", lines[3]), "the shell the start-up probe found in the guest"
    assert len(bridge.requests("start")) == 1, "one VM for the whole session"
    client.stop()
    assert bridge.requests()[-1]["op"] == "close"


def test_a_missing_bridge_is_a_clear_error(example, tmp_path: Path) -> None:
    example.server.add(Reply(tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "where", env={"PI_GONDOLIN_BRIDGE": "no-such-gondolin"})
    assert done.returncode == 0, done.stderr
    expected = ("Gondolin bridge not found: 'no-such-gondolin' is not on PATH. Install a bridge for the Gondolin VM "
                "or point --gondolin-bridge / PI_GONDOLIN_BRIDGE at one.")
    assert example.tool_results(1) == [expected]
    assert "Extension error (gondolin, pi_session_start): " in done.stderr and expected in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(example.cwd.iterdir()), "nothing ran on the host"


def test_garbage_from_the_bridge_is_reported(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    example.server.add(Reply(tool_calls=[("read", {"path": "x"})]), Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "--gondolin-bridge", str(bridge.bins.directory / "gondolin"),
                       "read", env={"FAKE_GONDOLIN_MODE": "garbage"})
    assert done.returncode == 0, done.stderr
    result = example.tool_results(1)[0]
    assert result.startswith(f"Gondolin bridge '{bridge.bins.directory / 'gondolin'}' broke the JSON-lines protocol: "
                             "it sent 'qemu-system-x86_64: -accel kvm: not JSON at all'")
    assert "Traceback" not in done.stderr


def test_a_bridge_that_dies_fails_the_call_with_its_last_words(example, tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    example.server.add(Reply(tool_calls=[("write", {"path": "a.txt", "content": "x"})]),
                       Reply(tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    done = example.run("gondolin", "--no-session", "-p", "write", env=bridge.env(FAKE_GONDOLIN_MODE="die-on-write"))
    assert done.returncode == 0, done.stderr
    died = "Gondolin bridge 'gondolin' exited with code 3: qemu-system-x86_64: guest panicked"
    assert example.tool_results(1) == [died]
    assert example.tool_results(2) == [died]
    assert not (example.cwd / "a.txt").exists()
    assert "Traceback" not in done.stderr
