"""RPC mode figures (run by hand: ``python bench/rpc.py``).

- start-up: spawn ``pi --mode rpc`` until the first ``get_state`` response;
- command round trips per second (``get_state``), one at a time and pipelined;
- a 1 MB prompt: time from sending it to ``agent_end`` with a one-line scripted answer;
- exit after EOF on stdin while idle.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pi_core.modes.rpc.client import RpcClient
from pi_core.modes.rpc.framing import serialize_json_line
from pi_core.testing.fake_server import FakeModelServer, Reply

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
API = "google-generative-ai"  # no vendor SDK import: the figures show pi, not the SDK
ROUND_TRIPS = int(os.environ.get("BENCH_ROUND_TRIPS", "500"))


def client_for(server: FakeModelServer, home: Path, cwd: Path) -> RpcClient:
    models = {"providers": {"fake": {"baseUrl": server.base_url_for(API), "api": API, "apiKey": "k",
                                     "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}]}}}
    home.mkdir(parents=True, exist_ok=True)
    (home / "models.json").write_text(json.dumps(models))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PI_CODING_AGENT_DIR"] = str(home)
    return RpcClient(["--no-session"], command=PI, provider="fake", model="fake-model", cwd=cwd, env=env)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        cwd = Path(tmp) / "project"
        cwd.mkdir()
        client = client_for(server, Path(tmp) / "agent", cwd)
        start = time.perf_counter()
        client.start()
        client.get_state()
        print(f"start-up to first response: {time.perf_counter() - start:.3f} s")

        samples = []
        for _ in range(ROUND_TRIPS):
            begin = time.perf_counter()
            client.get_state()
            samples.append(time.perf_counter() - begin)
        print(f"get_state round trip: median {statistics.median(samples) * 1e3:.3f} ms, "
              f"{len(samples) / sum(samples):.0f}/s sequential")

        before = len(client.responses)
        begin = time.perf_counter()
        client.send_raw("".join(serialize_json_line({"type": "get_state", "id": f"p{i}"})
                                for i in range(ROUND_TRIPS)))
        while len(client.responses) < before + ROUND_TRIPS:
            time.sleep(0.001)
        elapsed = time.perf_counter() - begin
        print(f"get_state pipelined: {ROUND_TRIPS / elapsed:.0f}/s")

        server.add(Reply(text="ok"))
        big = "x" * 1_000_000
        begin = time.perf_counter()
        client.prompt_and_wait(big)
        print(f"1 MB prompt to agent_end: {time.perf_counter() - begin:.3f} s")

        begin = time.perf_counter()
        client.close_stdin()
        code = client.wait()
        print(f"exit after EOF: {time.perf_counter() - begin:.3f} s (code {code})")


if __name__ == "__main__":
    main()
