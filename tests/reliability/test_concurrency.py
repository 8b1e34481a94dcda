"""Many edits and writes of one file in one parallel batch: no update is lost, no file is half-written."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import check_every_call_answered, run_tool_calls

LINES = 24


def numbered(prefix: str = "line") -> str:
    return "".join(f"{prefix}-{i:02d}\n" for i in range(LINES))


def spellings(root: Path) -> list[str]:
    """Ways to name the same file: relative, ./, absolute, via a parent hop, through a symlink, @-prefixed."""
    (root / "sub").mkdir(exist_ok=True)
    (root / "alias.txt").symlink_to("shared.txt")
    return ["shared.txt", "./shared.txt", str(root / "shared.txt"), "sub/../shared.txt", "alias.txt",
            "@shared.txt"]


@pytest.mark.parametrize("repeat", range(3))
def test_parallel_edits_of_one_file_all_land(tmp_path: Path, repeat: int) -> None:
    (tmp_path / "shared.txt").write_text(numbered())
    names = spellings(tmp_path)
    calls = [("edit", {"path": names[i % len(names)],
                       "edits": [{"oldText": f"line-{i:02d}\n", "newText": f"EDITED-{i:02d}\n"}]})
             for i in range(LINES)]
    results = check_every_call_answered(run_tool_calls(calls, tmp_path), LINES)
    assert not [r.text() for r in results if r.is_error]
    assert (tmp_path / "shared.txt").read_text() == numbered("EDITED")
    assert (tmp_path / "alias.txt").is_symlink()  # the alias still points at the file, not a copy


def test_parallel_multi_edit_calls_and_other_files(tmp_path: Path) -> None:
    (tmp_path / "shared.txt").write_text(numbered())
    (tmp_path / "other.txt").write_text(numbered("other"))
    calls = []
    for i in range(0, LINES, 2):  # each call changes two lines of shared.txt and one of other.txt
        calls.append(("edit", {"path": "shared.txt", "edits": [
            {"oldText": f"line-{i:02d}\n", "newText": f"EDITED-{i:02d}\n"},
            {"oldText": f"line-{i + 1:02d}\n", "newText": f"EDITED-{i + 1:02d}\n"}]}))
        calls.append(("edit", {"path": "other.txt", "edits": [{"oldText": f"other-{i:02d}", "newText": f"OTHER-{i:02d}"}]}))
    results = check_every_call_answered(run_tool_calls(calls, tmp_path), len(calls))
    assert not [r.text() for r in results if r.is_error]
    assert (tmp_path / "shared.txt").read_text() == numbered("EDITED")
    other = (tmp_path / "other.txt").read_text().splitlines()
    assert other == [f"{'OTHER' if i % 2 == 0 else 'other'}-{i:02d}" for i in range(LINES)]


def test_parallel_writes_leave_one_whole_version(tmp_path: Path) -> None:
    names = spellings(tmp_path)
    versions = [f"version {i}\n" + "payload " * 20_000 + f"\nend {i}\n" for i in range(12)]
    calls = [("write", {"path": names[i % len(names)], "content": text}) for i, text in enumerate(versions)]
    results = check_every_call_answered(run_tool_calls(calls, tmp_path), len(calls))
    assert not [r.text() for r in results if r.is_error]
    assert (tmp_path / "shared.txt").read_text() in versions
    assert (tmp_path / "alias.txt").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias.txt", "shared.txt", "sub"]  # no temp files


def test_writes_then_edits_in_one_batch_are_serialised(tmp_path: Path) -> None:
    # Every write puts back the base text, so whichever order the slot grants, each edit finds its line
    # (edits never fight over the same line) unless a write after it restores the line: then the final
    # text shows which ones came last. What must hold: no half state and no error other than "not found".
    (tmp_path / "shared.txt").write_text(numbered())
    calls = [("write", {"path": "shared.txt", "content": numbered()}) for _ in range(4)]
    calls += [("edit", {"path": "shared.txt", "edits": [{"oldText": f"line-{i:02d}\n", "newText": f"EDITED-{i:02d}\n"}]})
              for i in range(8)]
    results = check_every_call_answered(run_tool_calls(calls, tmp_path), len(calls))
    assert not [r.text() for r in results if r.is_error]
    final = (tmp_path / "shared.txt").read_text().splitlines()
    assert len(final) == LINES
    for i, line in enumerate(final):
        assert line in (f"line-{i:02d}", f"EDITED-{i:02d}")
    assert [p.name for p in tmp_path.iterdir()] == ["shared.txt"]
