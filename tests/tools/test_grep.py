"""grep tool (docs/tools.md#grep)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pi_builtin_tools.grep as grep_module
import pytest
from pi_builtin_tools.grep import TOOL, GrepOptions, create_grep_tool

from pi_core.errors import AbortedError, ToolError
from pi_core.toolkit.ripgrep import RG_MISSING, find_rg
from pi_core.tools import ToolContext, ToolResult

REFERENCE = Path("/work/shared/spec/reference/pi-tools-all.json")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def grep(ctx: ToolContext, **args: Any) -> ToolResult:
    result = TOOL.execute(args, ctx)
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    return node


def test_schema_matches_pi_wire_schema() -> None:
    pi = {t["name"]: t for t in json.loads(REFERENCE.read_text())}["grep"]
    assert strip_descriptions(TOOL.json_schema) == strip_descriptions(pi["input_schema"])
    assert list(TOOL.json_schema["properties"]) == list(pi["input_schema"]["properties"])
    assert TOOL.description != pi["description"]
    assert TOOL.coercion == "typebox" and grep_module.DEFAULT_ACTIVE is False


def test_rg_comes_from_the_venv() -> None:
    rg = find_rg()
    assert rg is not None and Path(rg).name == "rg"


def test_single_match(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "example.txt").write_text("first line\nmatch line\nlast line")
    result = grep(ctx, pattern="match")
    assert "example.txt:2: match line" in text_of(result)
    assert result.details is None


def test_context_and_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "context.txt").write_text("before\nmatch one\nafter\nmiddle\nmatch two\nafter two")
    result = grep(ctx, pattern="match", path="context.txt", limit=1, context=1)
    text = text_of(result)
    assert text == ("context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n"
                    "[1 matches limit reached. Use limit=2 for more, or refine pattern]")
    assert "match two" not in text
    assert result.details == {"matchLimitReached": 1}


def test_no_matches(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("nothing here\n")
    result = grep(ctx, pattern="absent")
    assert text_of(result) == "No matches found" and result.details is None


def test_relative_paths_in_subdirectories_and_gitignore(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "mod.py").write_text("x = 1\nneedle = 2\n")
    (tmp_path / ".hidden.py").write_text("needle\n")
    (tmp_path / "build.py").write_text("needle\n")
    (tmp_path / ".gitignore").write_text("build.py\n")
    (tmp_path / ".git").mkdir()  # like Pi, grep applies .gitignore inside a git work tree (rg's default)
    lines = sorted(text_of(grep(ctx, pattern="needle")).splitlines())
    assert lines == [".hidden.py:1: needle", "src/pkg/mod.py:2: needle = 2"]


def test_flags(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("Foo(1)\nfoo.bar\n")
    (tmp_path / "b.txt").write_text("Foo(1)\n")
    assert text_of(grep(ctx, pattern="foo", ignoreCase=True, glob="*.py")) == "a.py:1: Foo(1)\na.py:2: foo.bar"
    assert text_of(grep(ctx, pattern="Foo(1)", literal=True, path="b.txt")) == "b.txt:1: Foo(1)"
    # A pattern that looks like a flag is still a pattern.
    (tmp_path / "c.txt").write_text("use -e here\n")
    assert text_of(grep(ctx, pattern="-e", path="c.txt")) == "c.txt:1: use -e here"


def test_limit_zero_becomes_one(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\nhit\n")
    assert text_of(grep(ctx, pattern="hit", limit=0)).endswith("[1 matches limit reached. Use limit=2 for more, "
                                                               "or refine pattern]")


def test_crlf_and_long_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"short hit\r\n" + b"hit " + b"y" * 600 + b"\r\n")
    result = grep(ctx, pattern="hit", path="a.txt")
    assert text_of(result) == ("a.txt:1: short hit\na.txt:2: hit " + "y" * 496 + "... [truncated]\n\n"
                               "[Some lines truncated to 500 chars. Use read tool to see full lines]")
    assert result.details == {"linesTruncated": True}


def test_context_lines_truncated_and_clamped(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hit\n" + "z" * 501 + "\n")
    text = text_of(grep(ctx, pattern="hit", path="a.txt", context=5))
    assert text.startswith("a.txt:1: hit\na.txt-2- " + "z" * 500 + "... [truncated]\na.txt-3- \n\n[Some lines")


def test_byte_limit(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(("hit " + "q" * 400 + "\n") * 200)
    result = grep(ctx, pattern="hit", path="a.txt", limit=1000)
    text = text_of(result)
    assert text.endswith("\n\n[50.0KB limit reached]")
    assert result.details["truncation"]["truncatedBy"] == "bytes"
    assert len(text.encode()) < 51200 + 100


def test_missing_path(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        grep(ctx, pattern="x", path="nope")
    assert str(info.value) == f"Path not found: {tmp_path / 'nope'}"


def test_bad_regex_reports_rg_stderr(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="regex parse error"):
        grep(ctx, pattern="(")


def test_aborted(ctx: ToolContext, tmp_path: Path) -> None:
    ctx.signal.abort()
    with pytest.raises(AbortedError, match="Operation aborted"):
        grep(ctx, pattern="x")


@pytest.mark.parametrize("tool", ["grep", "find"])
def test_an_abort_mid_run_kills_rg(tool: str, ctx: ToolContext, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An rg that never ends (as on a FIFO or a stalled network mount) stops when the run is aborted."""
    import threading
    import time

    from pi_builtin_tools.find import TOOL as FIND

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "rg").write_text(f"#!/bin/sh\necho $$ > {tmp_path / 'rg.pid'}\nexec sleep 60\n")
    (bin_dir / "rg").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    threading.Timer(0.5, ctx.signal.abort).start()
    started = time.monotonic()
    with pytest.raises(AbortedError):
        (TOOL if tool == "grep" else FIND).execute({"pattern": "x"}, ctx)
    assert time.monotonic() - started < 5
    pid = int((tmp_path / "rg.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_missing_rg_is_a_clear_error(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pi_core.toolkit.ripgrep.find_rg", lambda: None)
    with pytest.raises(ToolError) as info:
        grep(ctx, pattern="x")
    assert str(info.value) == RG_MISSING


def test_operations_supply_context_lines(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\nhit\nthree\n")

    class Remote:
        def is_directory(self, path: str) -> bool:
            return Path(path).is_dir()

        def read_file(self, path: str) -> str:
            return "REMOTE-1\nhit\nREMOTE-3\n"

    tool = create_grep_tool(GrepOptions(operations=Remote()))
    result = tool.execute({"pattern": "hit", "context": 1}, ctx)
    assert text_of(result) == "a.txt-1- REMOTE-1\na.txt:2: hit\na.txt-3- REMOTE-3"  # type: ignore[arg-type]
