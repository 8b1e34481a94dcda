"""The codemode worker: one process per script, running it in QuickJS (the quickjs-ng binding).

Started by ``sandbox.py`` as ``python -I -S worker.py DIR`` (DIR holds the binding); it imports nothing of pi. Protocol, one JSON object a line:
pi sends the job first (``code``, ``tools``, ``globals``, ``store``, ``memory_limit``), then results of calls
(``{"id", "ok", "payload"}``); the worker sends ``call``, ``output``, and last ``done`` or ``crash``. The script
has no file system, network or timers: it reaches the world only through the calls pi answers. A script that
runs forever is ended by pi killing this process, which also frees everything it allocated.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

MAX_STACK_BYTES = 512 * 1024
PR_SET_PDEATHSIG = 1
# The script becomes the body of an async function. The head stands on the script's first line, so line numbers
# in errors are the script's own, and is as wide as Pi's, so columns on the first line read as Pi reports them.
WRAPPER = "(async function () {" + " " * 8


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def bridge(kind: str, *args: Any) -> None:
    """The one host function the prelude calls: pass a call, an output item or the end of the script to pi."""
    if kind == "call":
        call_id, target, name, args_json = args
        send({"t": "call", "id": call_id, "target": target, "name": name, "args": args_json})
    elif kind == "output":
        item_kind, data, mime_type = (*args, None)[:3]
        send({"t": "output", "kind": item_kind, "data": data, "mimeType": mime_type})
    elif kind == "done":
        ok, payload, writes = (*args, None, None)[:3]
        send({"t": "done", "ok": bool(ok), "payload": payload, "writes": writes})


def syntax_error(err: Exception) -> str:
    text = str(err).strip().replace("<input>:", "codemode.js:")
    name, _, rest = text.partition(": ")
    message = rest.split("\n", 1)[0] if rest else text
    return json.dumps({"name": name if rest else "Error", "message": message, "stack": text})


def die_with_pi() -> None:
    """A script that loops forever must not outlive a pi that was killed: on Linux the kernel ends this process
    when its parent dies (elsewhere pi's exit closes the pipe, which ends a script waiting for a call)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != int(os.environ.get("PI_CODEMODE_PARENT", os.getppid())):
            sys.exit(0)  # pi died before the call above


def main() -> int:
    die_with_pi()
    for stream in (sys.stdin, sys.stdout):
        stream.reconfigure(encoding="utf-8", errors="surrogatepass")  # type: ignore[union-attr]
    sys.path.insert(0, sys.argv[1])  # where _quickjs is: started with -S, without site's start-up cost
    import _quickjs as quickjs  # type: ignore[import-not-found]  # the binding's C module (its package adds threads)

    job = json.loads(sys.stdin.readline())
    context = quickjs.Context()
    context.set_memory_limit(int(job["memory_limit"]))
    context.set_max_stack_size(MAX_STACK_BYTES)
    context.add_callable("__codemode_bridge", bridge)
    prelude = (Path(__file__).with_name("prelude.js")).read_text(encoding="utf-8")
    setup = context.eval(prelude)
    control = setup(context.get("__codemode_bridge"), json.dumps(job["tools"]), json.dumps(job["globals"]),
                    json.dumps(job["store"]))
    context.eval("delete globalThis.__codemode_bridge")
    try:
        script = context.eval(WRAPPER + job["code"] + "\n})")
    except quickjs.JSException as err:
        send({"t": "done", "ok": False, "payload": syntax_error(err), "writes": None})
        return 0
    control("run", script)
    while True:
        while context.execute_pending_job():
            pass
        if control("stalled"):
            return 0
        line = sys.stdin.readline()
        if not line:
            return 0  # pi went away
        result = json.loads(line)
        control("settle", result["id"], result["ok"], result.get("payload"))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MemoryError:
        send({"t": "crash", "message": "The codemode worker ran out of memory"})
    except Exception as err:  # noqa: BLE001 - the worker's own failure, reported to pi as such
        send({"t": "crash", "message": f"{type(err).__name__}: {err}"})
