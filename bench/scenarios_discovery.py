"""Micro-bench of plugin discovery: importlib.metadata's scan against ``pi_core.loader.discovery``.

    python -m bench.scenarios_discovery [--runs 21] [--plugins 50]

Each figure is the median CPU time of one discovery (entry points of group ``pi`` plus each one's
distribution name and version, which ``pi_core.loader.plugins`` reads for labels and the built-in check) in a
fresh interpreter, measured inside the child after its imports, with the venv as installed and with
``--plugins`` extra one-tool distributions on PYTHONPATH. The cache is warm (written by a first run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scenarios_fixtures import python_plugins

PRELUDE = "import time, importlib.metadata, json, hashlib, pi_core\nt = time.process_time()\n"
SCAN = "eps = importlib.metadata.entry_points(group='pi')\n"
CACHED = "from pi_core.loader.discovery import entry_points\neps = entry_points('pi')\n"
USE = "rows = [(e.name, e.value, e.dist.name, e.dist.version) for e in eps]\nprint((time.process_time() - t) * 1000)\n"


def median_ms(body: str, env: dict[str, str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PRELUDE + body + USE], env=env, capture_output=True,
                             text=True, check=True).stdout
        samples.append(float(out))
    return statistics.median(samples)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scenarios_discovery")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--plugins", type=int, default=50)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        site = python_plugins(Path(tmp) / "site", args.plugins)
        for label, env in (("venv as installed", base),
                           (f"+{args.plugins} plugin distributions", {**base, "PYTHONPATH": str(site)})):
            subprocess.run([sys.executable, "-c", CACHED], env=env, check=True)  # writes the cache
            scan, cached = median_ms(SCAN, env, args.runs), median_ms(CACHED, env, args.runs)
            print(f"{label:<34} importlib.metadata scan {scan:6.1f} ms   discovery_cache hit {cached:6.1f} ms   "
                  f"saved {scan - cached:5.1f} ms (CPU, median of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
