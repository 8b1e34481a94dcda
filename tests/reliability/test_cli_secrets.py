"""Keys given to pi stay private while it runs (issue 17 items 6 and 7): ``--api-key`` is not readable in
the process list, and JSON-mode stdout is redacted like session files."""

from __future__ import annotations

import json
import sys

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

from .conftest import wait_until

CLI_KEY = "cli-Wq7eR4tY1uI8oP3aS6dF"  # no known key shape: only pi's own registry can catch it
ENV_TOKEN = "tok-Mn5bV2cX9zL4kJ7hG1fD"
SHAPED_KEY = "sk-ant-api03-" + "Z9y8X7w6V5u4T3s2R1q0" * 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_api_key_is_not_in_the_process_list(pi: PiRunner) -> None:
    pi.server.add(Reply(text="slow answer", stall_after=1, stall_s=3))  # pi stays up while we look
    proc = pi.popen("--api-key", CLI_KEY, "-p", "hi")
    try:
        assert wait_until(lambda: len(pi.server.requests) == 1)
        with open(f"/proc/{proc.pid}/cmdline", "rb") as handle:
            cmdline = handle.read()
        assert CLI_KEY.encode() not in cmdline
        assert b"--api-key" not in cmdline and b"-p\0hi" in cmdline  # the rest of the command line stays
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out == "slow answer\n", err
    assert pi.server.requests[0].headers["x-goog-api-key"] == CLI_KEY  # the key was used all the same


def test_help_says_an_environment_variable_is_safer(pi: PiRunner) -> None:
    text = pi.run("--help").stdout
    assert "--api-key <key>" in text and "an environment variable such as ANTHROPIC_API_KEY" in text


def test_an_api_key_after_a_sub_command_is_the_commands_own(pi: PiRunner) -> None:
    # `pi plugins` has no --api-key: click must complain about it, not pi silently moving it away
    done = pi.run("plugins", "--api-key", CLI_KEY)
    assert done.returncode == 2 and "No such option '--api-key'" in done.stderr


def test_json_mode_output_is_redacted(pi: PiRunner) -> None:
    pi.extra_env["DEPLOY_TOKEN"] = ENV_TOKEN
    show = f"echo cli={CLI_KEY} env=$DEPLOY_TOKEN shaped={SHAPED_KEY}"
    pi.server.add(Reply(tool_calls=[("bash", {"command": show})]), Reply(text=f"I saw {SHAPED_KEY}"))
    done = pi.run("--api-key", CLI_KEY, "--mode", "json", "print the keys")
    assert done.returncode == 0, done.stderr
    assert CLI_KEY in json.dumps(pi.server.requests[1].body)  # the tool really printed them
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert any(e.get("type") == "tool_execution_end" for e in lines)
    for secret in (CLI_KEY, ENV_TOKEN, SHAPED_KEY):
        assert secret not in done.stdout, f"{secret} in JSON-mode stdout"
    assert "[REDACTED]" in done.stdout
