"""MCP stdio servers start inside the sandbox (one spawn-wrapping call in the MCP plugin); ``"sandbox": false``
in a server's mcp.json entry lets it out."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .conftest import SECRET, Box

PROBE = Path(__file__).resolve().parent / "servers" / "probe_server.py"


def _server(**fields: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(PROBE)], "exposure": "direct", **fields}


def test_an_mcp_server_runs_confined_unless_its_entry_opts_out(box: Box, mechanism: str) -> None:
    (box.pi.home / "mcp.json").write_text(json.dumps({"mcpServers": {
        "boxed": _server(), "trusted": _server(sandbox=False)}}))
    box.settings(mode="workspace-write", mechanism=mechanism)
    box.pi.extra_env["PI_MCP_STARTUP_WAIT"] = "60"  # as tests/mcp: a loaded machine starts the SDK slowly
    key = str(box.home / ".ssh" / "id_ed25519")
    calls = [
        ("mcp__boxed__touch", {"path": str(box.outside / "boxed.txt"), "text": "x"}),
        ("mcp__boxed__touch", {"path": str(box.workspace / "boxed.txt"), "text": "x"}),
        ("mcp__boxed__peek", {"path": key}),
        ("mcp__trusted__touch", {"path": str(box.outside / "trusted.txt"), "text": "x"}),
        ("mcp__trusted__peek", {"path": key}),
    ]
    run = box.run(calls)
    assert run.process.returncode == 0, run.process.stderr
    texts = [text for _tool, text, _failed in run.results]
    assert texts[0].startswith("refused: ") and texts[1] == "wrote", (texts, run.process.stderr)
    assert texts[2].startswith("refused: ") and SECRET not in texts[2]
    assert texts[3] == "wrote" and texts[4] == f"read: {SECRET}"
    assert sorted(box.outside_files()) == ["target.txt", "trusted.txt"]
