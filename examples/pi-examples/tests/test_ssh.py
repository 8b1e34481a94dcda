"""ssh: with ``--ssh`` the tools and the user's ``!`` commands run "remotely"; a fake ``ssh`` on PATH runs the
command with bash in a folder standing in for the remote host and records its argv (no sshd here)."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_script import Reply
from pi_core.testing.fakebin import FakeBin

FAKE_SSH = """
import os, subprocess
os.chdir(os.environ["FAKE_SSH_HOME"])  # where a login on the "remote" host starts
host, command = ARGV[0], ARGV[1]
sys.exit(subprocess.run(["bash", "-c", command]).returncode)
"""


def fake_ssh(tmp_path: Path) -> tuple[FakeBin, Path, dict[str, str]]:
    bins, remote = FakeBin(tmp_path / "bin"), tmp_path / "remote"
    remote.mkdir()
    (remote / "remote-only.txt").write_text("on the remote\n")
    bins.add("ssh", FAKE_SSH)
    return bins, remote, {"PATH": bins.env()["PATH"], "FAKE_SSH_HOME": str(remote)}


def test_tools_run_on_the_remote(example, tmp_path: Path) -> None:
    bins, remote, env = fake_ssh(tmp_path)
    example.server.add(
        Reply(tool_calls=[("bash", {"command": "ls"})]),
        Reply(tool_calls=[("write", {"path": "made.txt", "content": "hello remote\n"})]),
        Reply(tool_calls=[("edit", {"path": "made.txt", "edits": [{"oldText": "hello", "newText": "bye"}]})]),
        Reply(tool_calls=[("read", {"path": "made.txt"})]),
        Reply(text="done"))
    done = example.run("ssh", "--no-session", "-p", "--ssh", f"me@box:{remote}", "look", env=env)
    assert done.returncode == 0, done.stderr
    assert "remote-only.txt" in example.tool_results(1)[0]
    assert (remote / "made.txt").read_text() == "bye remote\n"
    assert not (example.cwd / "made.txt").exists(), "nothing is written locally"
    assert "bye remote" in example.tool_results(4)[0]
    assert example.system_prompt(0).count(f"Current working directory: {remote} (via SSH: me@box)") == 1
    calls = bins.calls("ssh")
    assert calls and all(call.argv[0] == "me@box" for call in calls)
    assert calls[0].argv[1] == f"cd {remote} && ls"


def test_without_a_path_the_remote_folder_is_asked_and_user_bash_goes_remote(example, tmp_path: Path) -> None:
    bins, remote, env = fake_ssh(tmp_path)
    client = example.rpc("ssh", "--no-session", "--ssh", "me@box", env=env)
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == f"SSH mode: me@box:{remote}"
    status = example.ui_requests(client, "setStatus")[0]
    assert status["statusKey"] == "ssh" and f"SSH: me@box:{remote}" in status["statusText"]
    assert bins.calls("ssh")[0].argv == ["me@box", "pwd"]
    result = client.bash("pwd; cat remote-only.txt")
    assert result["output"].split("\n")[:2] == [str(remote), "on the remote"]
    assert result["exitCode"] == 0


def test_without_the_flag_everything_stays_local(example, tmp_path: Path) -> None:
    bins, _, env = fake_ssh(tmp_path)
    example.server.add(Reply(tool_calls=[("bash", {"command": "pwd"})]), Reply(text="done"))
    done = example.run("ssh", "--no-session", "-p", "where", env=env)
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1)[0].strip() == str(example.cwd)
    assert bins.calls("ssh") == []
    assert f"Current working directory: {example.cwd}" in example.system_prompt(0)


def test_the_flag_needs_a_value(example, tmp_path: Path) -> None:
    done = example.run("ssh", "--no-session", "-p", "hi", "--ssh")
    assert done.returncode != 0
    assert "--ssh" in done.stderr and "Traceback" not in done.stderr
    assert json.dumps(example.server.requests) == "[]"
