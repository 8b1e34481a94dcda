"""Start-up housekeeping of full-output files in the system temp dir: only pi's own, only day-old ones."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from pi_core.toolkit.tempdir import clean_old_temp_outputs


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
