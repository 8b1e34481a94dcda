"""dirty_repo_guard: with uncommitted changes, new/fork ask (and "no" cancels); clean or non-git folders pass."""

from __future__ import annotations

from pi_core.testing.fake_script import Reply


def test_dirty_repo_asks_before_new_session_and_fork(example, repo, ui, background) -> None:
    (repo / "notes.txt").write_text("draft\n")
    example.server.add(Reply(text="first"))
    client = example.rpc("dirty_repo_guard")
    client.prompt_and_wait("hello")
    first = client.get_state()["sessionFile"]

    mark = client.event_count()
    pending = background(client.new_session)
    ask = ui(client, "select", after=mark)
    assert ask["title"] == "You have 1 uncommitted file(s). new session anyway?"
    assert ask["options"] == ["Yes, proceed anyway", "No, let me commit first"]
    client.respond_ui(ask["id"], value="No, let me commit first")
    assert pending.result(30) == {"cancelled": True}
    assert ui(client, "notify", after=mark, message="Commit your changes first")["notifyType"] == "warning"
    assert client.get_state()["sessionFile"] == first

    (repo / "README.md").write_text("changed\n")
    entry_id = client.get_fork_messages()[0]["entryId"]
    mark = client.event_count()
    pending = background(client.fork, entry_id)
    ask = ui(client, "select", after=mark)
    assert ask["title"] == "You have 2 uncommitted file(s). fork anyway?"
    client.respond_ui(ask["id"], value="Yes, proceed anyway")
    assert pending.result(30)["cancelled"] is False
    assert client.get_state()["sessionFile"] != first


def test_clean_repo_and_plain_folder_are_not_guarded(example, git_repo) -> None:
    client = example.rpc("dirty_repo_guard")  # example.cwd is not a git repository
    first = client.get_state()["sessionId"]
    assert client.new_session() == {"cancelled": False}
    assert client.get_state()["sessionId"] != first

    git_repo(example.cwd)
    second = client.get_state()["sessionId"]
    assert client.new_session() == {"cancelled": False}
    assert client.get_state()["sessionId"] != second
    assert not [e for e in client.events if e.get("method") in ("select", "notify")]



def test_without_a_ui_a_dirty_repo_vetoes(example, repo, fresh_command) -> None:
    helper = fresh_command
    (repo / "notes.txt").write_text("draft\n")
    done = example.run("dirty_repo_guard", "-e", str(helper), "--no-session", "-p", "/fresh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "cancelled"
    (repo / "notes.txt").unlink()
    done = example.run("dirty_repo_guard", "-e", str(helper), "--no-session", "-p", "/fresh")
    assert done.stdout.strip() == "replaced", done.stderr
