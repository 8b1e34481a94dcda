"""protected_paths: write/edit on .env, .git/ or node_modules/ are refused with the example's reason."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_print_mode_refuses_env_and_lets_other_writes_through(example) -> None:
    example.server.add(Reply(tool_calls=[("write", {"path": ".env", "content": "SECRET=1"}),
                                         ("write", {"path": "src/a.py", "content": "x = 1\n"})]),
                       Reply(text="ok"))
    done = example.run("protected_paths", "--no-session", "-p", "write")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1)[0] == 'Path ".env" is protected'
    assert not (example.cwd / ".env").exists()
    assert (example.cwd / "src/a.py").read_text() == "x = 1\n"


def test_edit_in_node_modules_is_refused_and_reads_are_not(example) -> None:
    (example.cwd / "node_modules").mkdir()
    (example.cwd / "node_modules/x.js").write_text("a\n")
    example.server.add(Reply(tool_calls=[("edit", {"path": "node_modules/x.js",
                                                   "edits": [{"oldText": "a", "newText": "b"}]}),
                                         ("read", {"path": "node_modules/x.js"})]),
                       Reply(text="ok"))
    done = example.run("protected_paths", "--no-session", "-p", "edit")
    assert done.returncode == 0, done.stderr
    assert example.tool_results(1)[0] == 'Path "node_modules/x.js" is protected'
    assert (example.cwd / "node_modules/x.js").read_text() == "a\n"
    assert "a" in example.tool_results(1)[1]


def test_rpc_warns_the_user(example, ui) -> None:
    example.server.add(Reply(tool_calls=[("write", {"path": ".git/config", "content": "x"})]), Reply(text="ok"))
    client = example.rpc("protected_paths", "--no-session")
    client.prompt("write")
    notice = ui(client, "notify")
    assert notice["message"] == "Blocked write to protected path: .git/config"
    assert notice["notifyType"] == "warning"
    client.wait_for_event("agent_end", timeout=30)
    assert example.tool_results(1)[-1] == 'Path ".git/config" is protected'
