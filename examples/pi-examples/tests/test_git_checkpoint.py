"""git_checkpoint: each turn snapshots the tree with ``git stash create``; checkpoints end with the run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pi_core.testing.fake_script import Reply


def _git_shim(folder: Path) -> tuple[dict[str, str], Path]:
    """A ``git`` first on PATH that logs its arguments, then runs the real git."""
    folder.mkdir()
    log = folder / "git.log"
    shim = folder / "git"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec {shutil.which("git")} "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, log


def test_every_turn_takes_a_checkpoint_and_a_later_fork_is_not_held_up(example, repo, background) -> None:
    (repo / "README.md").write_text("edited\n")
    env, log = _git_shim(repo.parent / "bin")
    example.server.add(Reply(tool_calls=[("write", {"path": "new.txt", "content": "x"})]), Reply(text="done"))
    client = example.rpc("git_checkpoint", env=env)
    client.prompt_and_wait("work")
    assert log.read_text().splitlines().count("stash create") == 2  # one per turn
    assert example.git("stash", "list") == ""  # a checkpoint is a loose commit, the stash list is untouched
    assert (repo / "README.md").read_text() == "edited\n"

    entry_id = client.get_fork_messages()[0]["entryId"]
    first = client.get_state()["sessionFile"]
    mark = client.event_count()
    assert background(client.fork, entry_id).result(30)["cancelled"] is False
    assert client.get_state()["sessionFile"] != first
    # The run settled, so its checkpoints were dropped: no restore question, no stash applied.
    assert not [e for e in client.events[mark:] if e.get("method") == "select"]
    assert "stash apply" not in log.read_text()
