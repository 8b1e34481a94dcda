"""Path resolution shared by the file tools (docs/tools.md#paths)."""

from __future__ import annotations

import os
from pathlib import Path

from pi_core.toolkit.paths import (
    expand_path,
    read_path_candidates,
    resolve_read_path,
    resolve_to_cwd,
)
from pi_core.tools import ToolContext


def test_tilde_expands_to_home() -> None:
    assert "~" not in expand_path("~")
    assert expand_path("~") == os.path.expanduser("~")
    expanded = expand_path("~/Documents/file.txt")
    assert "~" not in expanded
    assert expanded == os.path.join(os.path.expanduser("~"), "Documents/file.txt")


def test_tilde_elsewhere_is_left_alone() -> None:
    assert expand_path("a/~/b") == "a/~/b"
    assert expand_path("~user/x") == "~user/x"


def test_unicode_spaces_become_ascii() -> None:
    assert expand_path("file\u00a0name.txt") == "file name.txt"
    assert expand_path("a\u2003b\u202fc\u3000d") == "a b c d"


def test_leading_at_is_dropped_once() -> None:
    assert expand_path("@src/a.ts") == "src/a.ts"
    assert expand_path("@@x") == "@x"
    assert expand_path("a@b") == "a@b"


def test_resolve_to_cwd() -> None:
    assert resolve_to_cwd("/absolute/path/file.txt", "/some/cwd") == "/absolute/path/file.txt"
    assert resolve_to_cwd("relative/file.txt", "/some/cwd") == "/some/cwd/relative/file.txt"
    assert resolve_to_cwd("../x/./y.txt", "/some/cwd") == "/some/x/y.txt"
    assert resolve_to_cwd("@~/f", "/cwd") == os.path.join(os.path.expanduser("~"), "f")


def test_tool_context_resolve_uses_it(tmp_path: Path) -> None:
    assert ToolContext(cwd=tmp_path).resolve("@a/b.txt") == tmp_path / "a" / "b.txt"


def test_read_path_existing_file(tmp_path: Path) -> None:
    (tmp_path / "test-file.txt").write_text("content")
    assert resolve_read_path("test-file.txt", str(tmp_path)) == str(tmp_path / "test-file.txt")


def test_read_path_missing_file_gives_plain_resolution(tmp_path: Path) -> None:
    assert resolve_read_path("nope's.txt", str(tmp_path)) == str(tmp_path / "nope's.txt")


def test_read_path_nfd_variant(tmp_path: Path) -> None:
    nfd_name = "file" + "e\u0301" + ".txt"
    (tmp_path / nfd_name).write_text("content")
    result = resolve_read_path("file\u00e9.txt", str(tmp_path))
    assert result.startswith(str(tmp_path)) and result.endswith(".txt")
    assert os.path.exists(result)
    assert result == str(tmp_path / nfd_name)


def test_read_path_curly_quote_variant(tmp_path: Path) -> None:
    curly = "Capture d\u2019cran.txt"
    (tmp_path / curly).write_text("content")
    assert resolve_read_path("Capture d'cran.txt", str(tmp_path)) == str(tmp_path / curly)


def test_read_path_nfd_and_curly_quote_variant(tmp_path: Path) -> None:
    import unicodedata

    name = unicodedata.normalize("NFD", "Capture d\u2019\u00e9cran.txt")
    (tmp_path / name).write_text("content")
    assert resolve_read_path("Capture d'\u00e9cran.txt", str(tmp_path)) == str(tmp_path / name)


def test_read_path_macos_am_pm_variant(tmp_path: Path) -> None:
    name = "Screenshot 2024-01-01 at 10.00.00\u202fAM.png"
    (tmp_path / name).write_text("content")
    assert resolve_read_path("Screenshot 2024-01-01 at 10.00.00 AM.png", str(tmp_path)) == str(tmp_path / name)
    # A model that copied the narrow space into a plain one or kept it gets the same file.
    assert resolve_read_path("Screenshot 2024-01-01 at 10.00.00\u202fAM.png", str(tmp_path)) == str(tmp_path / name)


def test_candidates_are_distinct_and_start_with_resolved() -> None:
    candidates = read_path_candidates("plain.txt", "/cwd")
    assert candidates == ["/cwd/plain.txt"]
    candidates = read_path_candidates("it's 9.00 pm.png", "/cwd")
    assert candidates[0] == "/cwd/it's 9.00 pm.png"
    assert "/cwd/it's 9.00\u202fpm.png" in candidates
    assert "/cwd/it\u2019s 9.00 pm.png" in candidates
    assert len(set(candidates)) == len(candidates)
