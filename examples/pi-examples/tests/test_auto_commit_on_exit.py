"""auto_commit_on_exit: when pi ends, every change is committed with the last reply's first line as the subject."""

from __future__ import annotations

import signal

from pi_core.testing.fake_script import Reply


def test_print_mode_commits_on_exit_and_a_clean_tree_is_left_alone(example, repo) -> None:
    (repo / "feature.py").write_text("x = 1\n")
    example.server.add(Reply(text="Added the feature\nwith details below"), Reply(text="nothing to do"))
    done = example.run("auto_commit_on_exit", "--no-session", "-p", "add it")
    assert done.returncode == 0, done.stderr
    assert example.git("log", "-1", "--format=%s").strip() == "[pi] Added the feature"
    assert example.git("status", "--porcelain") == ""
    assert "feature.py" in example.git("show", "--name-only", "--format=", "HEAD")

    done = example.run("auto_commit_on_exit", "--no-session", "-p", "again")
    assert done.returncode == 0, done.stderr
    assert example.git("rev-list", "--count", "HEAD").strip() == "2"


def test_long_subjects_are_cut_and_rpc_sigterm_commits(example, repo, ui) -> None:
    long_line = "Refactored the session store so that every entry is written once"
    example.server.add(Reply(text=long_line))
    client = example.rpc("auto_commit_on_exit", "--no-session")
    client.prompt_and_wait("refactor")
    (repo / "store.py").write_text("y = 2\n")
    client.process.send_signal(signal.SIGTERM)
    client.wait(30)
    assert example.git("log", "-1", "--format=%s").strip() == f"[pi] {long_line[:50]}..."
    assert example.git("status", "--porcelain") == ""
