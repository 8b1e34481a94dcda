"""A fake Gondolin bridge for the tests (installed with FakeBin): it speaks pi's JSON-lines bridge protocol and plays
the VM on the host by mapping each mount's guest path onto its host folder (in file requests, in exec argv and cwd,
and back in exec output; shells run without ``-l``). Every request is logged to ``gondolin.requests.jsonl`` next to the program.

``FAKE_GONDOLIN_MODE``: ``garbage`` answers every request with a line that is not JSON; ``die-on-write`` exits
with code 3 (after a line on stderr) at the first writeFile; ``deaf`` ignores ``signal``; ``vm-error`` fails every
file request with a code that is no errno name.
"""

import base64
import errno
import json
import os
import signal
import subprocess
import sys
import threading

REQUESTS_LOG = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "gondolin.requests.jsonl")
MODE = os.environ.get("FAKE_GONDOLIN_MODE", "")
out_lock = threading.Lock()
mounts: dict[str, str] = {}
procs: dict[int, subprocess.Popen[bytes]] = {}


def send(message: dict) -> None:
    with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def host(path: str) -> str:
    for guest, local in mounts.items():
        if path == guest or path.startswith(guest + "/"):
            return local + path[len(guest):]
    return path


def to_host_text(text: str) -> str:
    for guest, local in mounts.items():
        text = text.replace(guest, local)
    return text


def to_guest_bytes(data: bytes) -> bytes:
    for guest, local in mounts.items():
        data = data.replace(local.encode(), guest.encode())
    return data


def pump(call_id: int, stream: str, pipe) -> None:
    for line in iter(pipe.readline, b""):
        send({"id": call_id, "stream": stream, "data": base64.b64encode(to_guest_bytes(line)).decode()})


def run(call_id: int, request: dict, started: threading.Event) -> None:
    env = {**os.environ, **(request.get("env") or {})}
    # A login shell here would read this machine's profile, which is not the guest's (and may be slow): drop -l.
    argv = ["-c" if arg == "-lc" else to_host_text(arg) for arg in request["argv"]]
    proc = subprocess.Popen(argv, cwd=host(request["cwd"]), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    procs[call_id] = proc
    started.set()
    pumps = [threading.Thread(target=pump, args=(call_id, name, pipe))
             for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    for thread in pumps:
        thread.start()
    for thread in pumps:
        thread.join()
    code = proc.wait()
    send({"id": call_id, "ok": True, "result": {"exitCode": None if code < 0 else code}})


def answer(request: dict) -> dict:
    op, path = request["op"], host(request.get("path", ""))
    if op == "start":
        mounts.update(request["mounts"])
        return {"id": "f00dfeed-0000-4000-8000-gondolinfake"}
    if op == "signal":
        if MODE != "deaf" and request["target"] in procs:
            os.killpg(procs[request["target"]].pid, signal.SIGKILL)
        return {}
    if op == "close":
        return {}
    if MODE == "vm-error":
        raise LookupError("guest agent not responding")
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
    raise LookupError("unknown op " + op)


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        with open(REQUESTS_LOG, "a") as log:
            log.write(json.dumps(request) + "\n")
        if MODE == "garbage":
            sys.stdout.write("qemu-system-x86_64: -accel kvm: not JSON at all\n")
            sys.stdout.flush()
            continue
        if MODE == "die-on-write" and request["op"] == "writeFile":
            sys.stderr.write("qemu-system-x86_64: guest panicked\n")
            sys.exit(3)
        if request["op"] == "exec":
            started = threading.Event()
            threading.Thread(target=run, args=(request["id"], request, started), daemon=True).start()
            started.wait()
            continue
        try:
            send({"id": request["id"], "ok": True, "result": answer(request)})
        except OSError as err:
            code = errno.errorcode.get(err.errno or 0, "EIO")
            send({"id": request["id"], "ok": False, "error": {"code": code, "message": str(err)}})
        except LookupError as err:
            send({"id": request["id"], "ok": False, "error": {"code": "VM_BUSY", "message": str(err)}})
        if request["op"] == "close":
            break
    for proc in procs.values():  # the VM goes away with everything running in it
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    main()
