"""Each task's working copy: its own ``cwd``, a fresh clone or ``git worktree`` of ``repo``, or an empty folder."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pi_plugins.batch.tasks import TaskSpec

GIT_TIMEOUT_S = 600


class WorkspaceError(Exception):
    """The working copy could not be made; the message becomes the task's error."""


def prepare(task: TaskSpec, root: Path, *, env: Mapping[str, str] | None = None) -> Path:
    """The directory the task's session runs in. ``repo`` and bare tasks get ``root/<slug>``, made anew
    on every attempt, so a retry never sees what a dead attempt left behind. ``env``: git's environment
    (the task's markers, so a git that hangs can be found and killed with the task)."""
    if task.cwd is not None:
        path = Path(task.cwd)
        if not path.is_dir():
            raise WorkspaceError(f"cwd {task.cwd} is not a directory")
        return path
    dest = root / task.slug
    root.mkdir(parents=True, exist_ok=True)
    if task.repo is None:
        _remove(dest)
        dest.mkdir(parents=True)
        return dest
    git = _Git(env)
    source = Path(task.repo)
    if source.is_dir() and git(["rev-parse", "--is-bare-repository"], cwd=source).strip() == "false":
        _worktree(git, source, dest, task.ref)
    else:
        _clone(git, task.repo, dest, task.ref)
    return dest


def _worktree(git: _Git, repo: Path, dest: Path, ref: str | None) -> None:
    top = Path(git(["rev-parse", "--show-toplevel"], cwd=repo).strip())
    common = Path(git(["rev-parse", "--path-format=absolute", "--git-common-dir"], cwd=top).strip())
    # Two tasks adding worktrees to one repository at once race on its worktree metadata.
    with (common / "pi-batch.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if dest.exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(dest)], cwd=top, capture_output=True,
                           check=False, timeout=GIT_TIMEOUT_S, env=git.env)
            _remove(dest)
        git(["worktree", "prune"], cwd=top)
        git(["worktree", "add", "--detach", "--force", str(dest), ref or "HEAD"], cwd=top)


def _clone(git: _Git, repo: str, dest: Path, ref: str | None) -> None:
    _remove(dest)
    git(["clone", "--quiet", repo, str(dest)], cwd=dest.parent)
    if ref:
        try:
            git(["checkout", "--quiet", "--detach", ref], cwd=dest)
        except WorkspaceError:
            git(["checkout", "--quiet", "--detach", f"origin/{ref}"], cwd=dest)  # a branch the clone only tracks


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


class _Git:
    """Runs git in one environment; raises ``WorkspaceError`` with git's last line when it fails."""

    def __init__(self, env: Mapping[str, str] | None) -> None:
        self.env = dict(env) if env is not None else None

    def __call__(self, args: list[str], *, cwd: Path) -> str:
        try:
            done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL, check=False, env=self.env)
        except FileNotFoundError as err:
            raise WorkspaceError("git is not installed; tasks with repo need it") from err
        except subprocess.TimeoutExpired as err:
            raise WorkspaceError(f"git {args[0]} took longer than {GIT_TIMEOUT_S}s") from err
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise WorkspaceError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else done.returncode}")
        return done.stdout
