"""MCP start-up bench (run by hand): ``python -m bench.mcp [--runs 5]``.

1. ``pi --help`` imports no module of the MCP SDK (nor pi's MCP plugin).
2. With three stdio servers configured, none ``direct``, the first model request of ``pi -p`` is not delayed:
   the time from start to the first request is compared with the same run without servers (medians).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.testing.pi_home import FAKE_MODEL, FAKE_PROVIDER, write_models

BIN = Path(sys.executable).parent


def help_imports() -> list[str]:
    """Modules of the MCP SDK or the MCP plugin that ``pi --help`` imports."""
    code = ("import sys; from pi_core.app.cli import main; main(['--help']); "
            "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in done.stderr.split() if m == "mcp" or m.startswith(("mcp.", "mcp_types", "pi_plugins.mcp"))]


def first_request_delay(servers: int, runs: int) -> list[float]:
    """Seconds from starting ``pi -p`` to the fake model server receiving its first request."""
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
            home = Path(tmp) / "agent"
            write_models(home, server.base_url_for("anthropic-messages"), "anthropic-messages")
            config = {f"s{i}": {"command": str(BIN / "mcp-server-time"), "exposure": "deferred"}
                      for i in range(servers)}
            (home / "mcp.json").write_text(json.dumps({"mcpServers": config}))
            server.add(Reply(text="ok"))
            env = {**os.environ, "PI_CODING_AGENT_DIR": str(home)}
            started = time.monotonic()
            process = subprocess.Popen([str(BIN / "pi"), "--provider", FAKE_PROVIDER, "--model", FAKE_MODEL,
                                        "-p", "hi"], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            while not server.requests and process.poll() is None:
                time.sleep(0.005)
            samples.append(time.monotonic() - started)
            process.wait(timeout=60)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    imported = help_imports()
    print(f"pi --help imports of mcp: {imported or 'none'}")
    first_request_delay(0, 1)  # warm caches
    without = statistics.median(first_request_delay(0, options.runs))
    with_three = statistics.median(first_request_delay(3, options.runs))
    print(f"first model request, no servers:               {without * 1000:7.0f} ms")
    print(f"first model request, 3 stdio servers, none direct: {with_three * 1000:7.0f} ms "
          f"({(with_three - without) * 1000:+.0f} ms)")
    return 1 if imported else 0


if __name__ == "__main__":
    sys.exit(main())
