"""tool_override: the audited read replaces pi's, refuses secrets, and logs every access."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_secrets_are_refused_and_every_access_is_logged(example) -> None:
    (example.cwd / ".env").write_text("TOKEN=hunter2\n")
    (example.cwd / "a.txt").write_text("one\ntwo\nthree\n")
    example.server.add(Reply(tool_calls=[("read", {"path": ".env"})]),
                       Reply(tool_calls=[("read", {"path": "a.txt", "offset": 2, "limit": 1})]),
                       Reply(text="done"))
    done = example.run("tool_override", "--no-session", "-p", "read")
    assert done.returncode == 0, done.stderr
    denied = example.tool_results(1)[0]
    assert denied == ('Access denied: ".env" matches a blocked pattern (sensitive file). This tool blocks access '
                      "to .env files, secrets, credentials, and SSH/AWS/GPG directories.")
    assert example.tool_results(2) == ["two"]
    tools = [t for t in example.server.requests[0].body["tools"] if t["name"] == "read"]
    assert len(tools) == 1 and tools[0]["description"].startswith("Read the contents of a file with access logging.")
    log = (example.home / "read-access.log").read_text().splitlines()
    assert log[0].endswith(f"] BLOCKED: {example.cwd / '.env'} (matches blocked pattern)")
    assert log[1].endswith(f"] ALLOWED: {example.cwd / 'a.txt'}")
    assert log[0].startswith("[20") and "Z] " in log[0]


def test_read_log_command_shows_recent_access(example) -> None:
    client = example.rpc("tool_override", "--no-session")
    client.request("prompt", message="/read-log")
    client.wait_for_event(lambda e: e.get("method") == "notify")
    (example.home / "read-access.log").write_text("[t] ALLOWED: /x\n[t] BLOCKED: /y/.env (matches blocked pattern)\n")
    client.request("prompt", message="/read-log")
    client.wait_for_event(lambda e: str(e.get("message", "")).startswith("Recent"))
    assert [n["message"] for n in example.ui_requests(client, "notify")] == [
        "No access log found", "Recent file access:\n[t] ALLOWED: /x\n[t] BLOCKED: /y/.env (matches blocked pattern)"]


def test_missing_file_is_a_clear_error(example) -> None:
    example.server.add(Reply(tool_calls=[("read", {"path": "nope.txt"})]), Reply(text="done"))
    assert example.run("tool_override", "--no-session", "-p", "read").returncode == 0
    assert example.tool_results(1) == ["Error reading file: nope.txt: no such file"]
