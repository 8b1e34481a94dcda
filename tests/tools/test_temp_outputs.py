"""Start-up housekeeping of full-output files in the system temp dir: only pi's own, only day-old ones."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from pi_core.toolkit.tempdir import clean_old_temp_outputs, clean_temp_outputs_when_due


def test_only_day_old_pi_output_files_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    day_ago = time.time() - 2 * 86400
    stale = [tmp_path / name for name in ("pi-bash-00ff.log", "pi-powershell-11aa.log", "pi-mcp-22bb.json",
                                          "pi-bash-.log")]
    kept = [tmp_path / name for name in ("pi-bash-33cc.txt", "pi-mcp", "mcp-notes.txt", "other-pi-bash-1.log",
                                         "pi-run-44dd.log")]
    for path in stale + kept:
        path.write_text("earlier run")
        os.utime(path, (day_ago, day_ago))
    fresh = tmp_path / "pi-bash-55ee.log"
    fresh.write_text("this run")
    (tmp_path / "pi-mcp-dir").mkdir()
    os.utime(tmp_path / "pi-mcp-dir", (day_ago, day_ago))
    target = tmp_path / "elsewhere.log"
    target.write_text("not an output")
    (tmp_path / "pi-bash-link.log").symlink_to(target)
    os.utime(tmp_path / "pi-bash-link.log", (day_ago, day_ago), follow_symlinks=False)

    assert sorted(clean_old_temp_outputs()) == sorted(stale)
    assert all(p.exists() for p in [*kept, fresh, target, tmp_path / "pi-mcp-dir"])
    assert (tmp_path / "pi-bash-link.log").is_symlink()
    assert clean_old_temp_outputs() == []


def test_start_up_lists_the_temp_dir_again_only_once_an_output_can_be_a_day_old(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    now = time.time()
    stale, recent = tmp_path / "pi-bash-00aa.log", tmp_path / "pi-mcp-11bb.txt"
    for path, age in ((stale, 2 * 86400), (recent, 3600)):
        path.write_text("earlier run")
        os.utime(path, (now - age, now - age))
    assert clean_temp_outputs_when_due() == [stale]
    stamp = tmp_path / f"pi-outputs-due-{os.getuid()}"
    assert stamp.stat().st_mtime == pytest.approx(now - 3600 + 86400, abs=1)  # when `recent` turns a day old

    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: listed.append(path) or real_scandir(path))
    (tmp_path / "pi-bash-22cc.log").write_text("a later run: younger than `recent`")
    assert clean_temp_outputs_when_due() == [] and listed == []  # nothing can be due yet: not even listed
    monkeypatch.setattr(time, "time", lambda: now + 86400)
    assert clean_temp_outputs_when_due() == [recent] and listed == [str(tmp_path)]
    assert (tmp_path / "pi-bash-22cc.log").exists()


@pytest.mark.parametrize("stamp_kind", ["symlink", "far future"])
def test_a_stamp_pi_did_not_write_does_not_stop_the_cleaning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             stamp_kind: str) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = tmp_path / "pi-bash-00aa.log"
    stale.write_text("earlier run")
    os.utime(stale, (time.time() - 2 * 86400,) * 2)
    stamp = tmp_path / f"pi-outputs-due-{os.getuid()}"
    later = time.time() + 30 * 86400
    if stamp_kind == "symlink":
        target = tmp_path / "elsewhere"
        target.write_text("x")
        os.utime(target, (later, later))
        stamp.symlink_to(target)
    else:
        stamp.write_text("")
        os.utime(stamp, (later, later))
    assert clean_temp_outputs_when_due() == [stale]
