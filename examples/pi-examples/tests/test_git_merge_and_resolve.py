"""git_merge_and_resolve: after a run, the upstream branch is merged; conflicts come back as a follow-up prompt."""

from __future__ import annotations

from pathlib import Path

from pi_core.testing.fake_script import Reply


def _with_upstream(example, repo: Path, theirs: str, file: str = "README.md") -> None:
    """A bare "origin" that main tracks, with one commit pushed from another clone."""
    origin = repo.parent / "origin.git"
    example.git("init", "-q", "--bare", "-b", "main", str(origin))
    example.git("remote", "add", "origin", str(origin))
    example.git("push", "-q", "-u", "origin", "main")
    other = repo.parent / "other"
    example.git("clone", "-q", str(origin), str(other))
    (other / file).write_text(theirs)
    example.git("-C", str(other), "add", file)
    example.git("-C", str(other), "commit", "-q", "-m", "theirs")
    example.git("-C", str(other), "push", "-q")


CONFLICTS = "Merged origin/main with conflicts:\n\n  README.md:1-5 (ours 2, theirs 4)\n\nResolve these conflicts."
RESOLVE = ("bash", {"command": "printf 'both\\n' > README.md && git add README.md && git commit -q --no-edit"})


def _conflicting(example, repo: Path) -> None:
    _with_upstream(example, repo, "theirs\n")
    (repo / "README.md").write_text("ours\n")
    example.git("commit", "-q", "-am", "ours")
    example.server.add(Reply(text="done"), Reply(tool_calls=[RESOLVE]), Reply(text="resolved"))


def test_rpc_conflicts_become_a_follow_up_the_model_resolves(example, repo) -> None:
    _conflicting(example, repo)
    client = example.rpc("git_merge_and_resolve", "--no-session")
    client.prompt("work")
    client.wait_for_event(lambda e: e.get("type") == "agent_end" and len(example.server.requests) == 3, timeout=60)
    assert example.user_text(1) == CONFLICTS
    assert (repo / "README.md").read_text() == "both\n"
    assert len(example.git("log", "-1", "--format=%P").split()) == 2  # the merge the model finished


def test_print_mode_conflicts_become_a_follow_up_the_model_resolves(example, repo) -> None:
    _conflicting(example, repo)
    done = example.run("git_merge_and_resolve", "--no-session", "-p", "work")
    assert done.returncode == 0, done.stderr
    assert len(example.server.requests) == 3
    assert example.user_text(1) == CONFLICTS


def test_clean_merge_is_silent_and_dirty_trees_are_not_merged(example, repo) -> None:
    _with_upstream(example, repo, "upstream\n", file="UPSTREAM.md")
    (repo / "local.txt").write_text("uncommitted\n")
    example.server.add(Reply(text="done"), Reply(text="done"))
    done = example.run("git_merge_and_resolve", "--no-session", "-p", "work")
    assert done.returncode == 0, done.stderr
    assert not (repo / "UPSTREAM.md").exists()  # uncommitted work: no merge

    (repo / "local.txt").unlink()
    done = example.run("git_merge_and_resolve", "--no-session", "-p", "work")
    assert done.returncode == 0, done.stderr
    assert (repo / "UPSTREAM.md").read_text() == "upstream\n"
    assert len(example.server.requests) == 2  # no follow-up run
    assert len(example.git("log", "-1", "--format=%P").split()) == 2


def test_rpc_tells_the_user_what_it_merges(example, repo, ui) -> None:
    _with_upstream(example, repo, "upstream\n", file="UPSTREAM.md")
    example.server.add(Reply(text="done"))
    client = example.rpc("git_merge_and_resolve", "--no-session")
    client.prompt_and_wait("work")
    assert ui(client, "notify")["message"] == "git-merge-and-resolve: fetching origin, merging origin/main"
