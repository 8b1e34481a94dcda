"""Real MCP servers nobody here wrote: mcp-server-git (PyPI), server-filesystem and server-everything (npm),
driven by the fake model through the real ``pi`` command (issue 18)."""

from __future__ import annotations

import json
import subprocess

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import BIN, npm_server, tool_names, tool_results, write_mcp


def test_git_filesystem_and_everything_servers(pi: PiRunner) -> None:
    filesystem = npm_server("mcp-server-filesystem", str(pi.cwd), exposure="direct")
    everything = npm_server("mcp-server-everything", exposure="direct")
    repo = pi.cwd / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "new.txt").write_text("untracked\n")
    (pi.cwd / "notes.md").write_text("# Notes\nThe filesystem server read this.\n")
    write_mcp(pi.home / "mcp.json", {
        "git": {"command": str(BIN / "mcp-server-git"), "exposure": "direct"},
        "filesystem": filesystem,
        "everything": everything,
    })
    pi.server.add(
        Reply(tool_calls=[("mcp__git__git_status", {"repo_path": str(repo)})]),
        Reply(tool_calls=[("mcp__filesystem__read_text_file", {"path": str(pi.cwd / "notes.md")})]),
        Reply(tool_calls=[("mcp__filesystem__read_text_file", {"path": "/etc/passwd"})]),
        Reply(tool_calls=[("mcp__everything__get_tiny_image", {})]),
        Reply(tool_calls=[("mcp__everything__get_resource_links", {"count": 2})]),
        Reply(tool_calls=[("list_mcp_resources", {"server": "everything"})]),
        Reply(tool_calls=[("read_mcp_resource", {"server": "everything",
                                                 "uri": "demo://resource/static/document/extension.md"})]),
        Reply(tool_calls=[("list_mcp_resource_templates", {})]),
        Reply(text="all done"),
    )
    result = pi.run("-p", "tour", timeout=180)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "all done\n"
    declared = tool_names(pi.server.requests[0].body)
    # names are sanitised: server-everything's get-tiny-image becomes mcp__everything__get_tiny_image
    assert {"mcp__git__git_status", "mcp__filesystem__read_text_file", "mcp__everything__get_tiny_image",
            "list_mcp_resources", "read_mcp_resource"} <= set(declared)

    def result_of(index: int) -> dict:
        return tool_results(pi.server.requests[index].body)[-1]

    status = result_of(1)
    assert not status["is_error"] and "new.txt" in status["text"]  # git's own status output
    read = result_of(2)
    assert not read["is_error"] and "The filesystem server read this." in read["text"]
    denied = result_of(3)  # the server's own refusal reaches the model as an error result
    assert denied["is_error"] and "/etc/passwd" in denied["text"]
    image = result_of(4)
    assert [c["type"] for c in image["content"]].count("image") == 1
    links = result_of(5)
    assert '[Resource demo://resource/dynamic/blob/1 "Blob Resource 1" (text/plain): Resource 1: plaintext ' \
           'resource. Read it with read_mcp_resource (server "everything")]' in links["text"]
    listing = json.loads(result_of(6)["text"])
    assert listing["server"] == "everything"
    assert {"server": "everything", "uri": "demo://resource/static/document/extension.md"}.items() <= \
        next(r for r in listing["resources"] if r["uri"].endswith("extension.md")).items()
    document = result_of(7)
    assert document["text"].startswith("# Everything Server - Extension Points")
    templates = json.loads(result_of(8)["text"])
    assert {t["uriTemplate"] for t in templates["resourceTemplates"] if t["server"] == "everything"} >= \
        {"demo://resource/dynamic/text/{resourceId}"}
