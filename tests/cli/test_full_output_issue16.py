"""Issue 16 item 2: the bash tool's full-output files outlive pi: beside the session (as long as it can be
resumed, deleted with it, orphans removed after a week), or with --no-session in the temp dir (kept past
exit, removed after a day), never at a predictable path."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from pi_core.sessions.outputs import ORPHAN_AGE_DAYS, delete_session
from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner

LONG = "seq 1 30000"  # past the 2000-line limit: the tool result names a full-output file


def _named_path(pi_request_body: object) -> Path:
    found = re.search(r"Full output: (/[^\]\s\\\\]+\.log)", json.dumps(pi_request_body))
    assert found, "the tool result names no full-output file"
    return Path(found.group(1))


def _age(path: Path, days: float) -> None:
    past = time.time() - days * 86400
    os.utime(path, (past, past))


def test_full_output_is_kept_beside_the_session_and_resumable(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        pi.extra_env["TMPDIR"] = str(tmp_path)
        pi.server.add(Reply(tool_calls=[("bash", {"command": LONG})]), Reply(text="saw it"), Reply(text="again"))
        first = pi.run("-p", "count")
        assert first.returncode == 0, first.stderr
        path = _named_path(pi.server.requests[1].body)
        [session] = pi.session_files()
        assert path.parent == session.with_name(session.stem + ".outputs")
        assert path.read_text().splitlines()[-1] == "30000"  # after pi exited
        assert path.stat().st_mode & 0o077 == 0 and re.fullmatch(r"pi-bash-[0-9a-f]{16}\.log", path.name)

        resumed = pi.run("-c", "-p", "read the full output")
        assert resumed.returncode == 0, resumed.stderr
        assert str(path) in json.dumps(pi.server.requests[2].body) and path.is_file()

        delete_session(session)
        assert not session.exists() and not path.parent.exists()


def test_no_session_keeps_them_in_the_temp_dir_and_cleans_day_old_ones(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    old, fresh, other = temp / "pi-bash-0123456789abcdef.log", temp / "pi-bash-fedcba9876543210.log", temp / "x.log"
    for stale in (old, fresh, other):
        stale.write_text("earlier run")
    _age(old, 2)
    _age(other, 2)
    with pi_runner(tmp_path) as pi:
        pi.extra_env["TMPDIR"] = str(temp)
        pi.server.add(Reply(tool_calls=[("bash", {"command": LONG})]), Reply(text="ok"))
        done = pi.run("--no-session", "-p", "count")
        assert done.returncode == 0, done.stderr
        path = _named_path(pi.server.requests[1].body)
    assert path.parent == temp and path.is_file()  # kept past exit, as Pi does
    assert path not in (old, fresh) and re.fullmatch(r"pi-bash-\w+\.log", path.name)
    assert not old.exists() and fresh.exists() and other.exists()  # only pi's own, only day-old ones


def test_orphaned_outputs_are_removed_at_start_up_after_a_week(tmp_path: Path) -> None:
    with pi_runner(tmp_path) as pi:
        project = pi.home / "sessions" / "--some-project--"
        project.mkdir(parents=True)
        kept_session = project / "2026-01-01T00-00-00-000Z_aaa.jsonl"
        kept_session.write_text("")
        outputs = {name: project / f"2026-01-01T00-00-00-000Z_{name}.outputs" for name in ("aaa", "bbb", "ccc")}
        for name, folder in outputs.items():
            folder.mkdir()
            log = folder / "pi-bash-1111222233334444.log"
            log.write_text("old output")
            if name != "ccc":
                _age(log, ORPHAN_AGE_DAYS + 1)
                _age(folder, ORPHAN_AGE_DAYS + 1)
        pi.server.add(Reply(text="hi"))
        assert pi.run("-p", "hi").returncode == 0
    assert outputs["aaa"].exists()  # its session is still there
    assert not outputs["bbb"].exists()  # session gone, a week old
    assert outputs["ccc"].exists()  # session gone, but recent
