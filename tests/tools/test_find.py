"""find tool (docs/tools.md#find): fd's results on top of rg --files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pi_builtin_tools.find as find_module
import pytest
from pi_builtin_tools.find import TOOL, FindOptions, create_find_tool

from pi_core.errors import AbortedError, ToolError
from pi_core.toolkit.globs import compile_glob
from pi_core.tools import ToolContext, ToolResult

REFERENCE = Path("/work/shared/spec/reference/pi-tools-all.json")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def find(ctx: ToolContext, **args: Any) -> ToolResult:
    result = TOOL.execute(args, ctx)
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    return node


def test_schema_matches_pi_wire_schema() -> None:
    pi = {t["name"]: t for t in json.loads(REFERENCE.read_text())}["find"]
    assert strip_descriptions(TOOL.json_schema) == strip_descriptions(pi["input_schema"])
    assert list(TOOL.json_schema["properties"]) == list(pi["input_schema"]["properties"])
    assert TOOL.description != pi["description"]
    assert TOOL.coercion == "typebox" and find_module.DEFAULT_ACTIVE is False


def test_hidden_files_included(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, ".secret/hidden.txt", "visible.txt")
    lines = text_of(find(ctx, pattern="**/*.txt")).splitlines()
    assert "visible.txt" in lines and ".secret/hidden.txt" in lines


def test_gitignore_respected_without_git(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "kept.txt", "ignored.txt")
    (tmp_path / ".gitignore").write_text("ignored.txt\n")
    lines = text_of(find(ctx, pattern="*.txt")).splitlines()
    assert "kept.txt" in lines and "ignored.txt" not in lines


def test_nested_gitignore_does_not_leak_into_siblings(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "a/secret.log", "b/secret.log")
    (tmp_path / "a" / ".gitignore").write_text("*.log\n")
    assert text_of(find(ctx, pattern="*.log")) == "b/secret.log"


def test_git_directory_is_skipped(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, ".git/config", "config")
    assert text_of(find(ctx, pattern="config")) == "config"


def test_basename_match_at_any_depth_and_directories(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "src/app.py", "src/util/helpers.py", "README.md")
    assert text_of(find(ctx, pattern="*.py")) == "src/app.py\nsrc/util/helpers.py"
    assert text_of(find(ctx, pattern="util")) == "src/util/"
    assert text_of(find(ctx, pattern="*.{md,py}")) == "README.md\nsrc/app.py\nsrc/util/helpers.py"


def test_pattern_with_slash_matches_full_path(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "src/a.spec.ts", "src/deep/b.spec.ts", "other/c.spec.ts", "src/d.ts")
    assert text_of(find(ctx, pattern="src/**/*.spec.ts")) == "src/a.spec.ts\nsrc/deep/b.spec.ts"
    assert text_of(find(ctx, pattern="**/*.spec.ts")).splitlines() == [
        "other/c.spec.ts", "src/a.spec.ts", "src/deep/b.spec.ts"]


def test_smart_case(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "Makefile", "notes.TXT")
    assert text_of(find(ctx, pattern="makefile")) == "Makefile"
    assert text_of(find(ctx, pattern="*.txt")) == "notes.TXT"
    assert text_of(find(ctx, pattern="*.Txt")) == "No files found matching pattern"


def test_path_argument(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "sub/x.py", "y.py")
    assert text_of(find(ctx, pattern="*.py", path="sub")) == "x.py"


def test_limit_notice(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, *(f"f{i}.txt" for i in range(5)))
    result = find(ctx, pattern="*.txt", limit=3)
    assert text_of(result) == ("f0.txt\nf1.txt\nf2.txt\n\n"
                               "[3 results limit reached. Use limit=6 for more, or refine pattern]")
    assert result.details == {"resultLimitReached": 3}


def test_byte_limit_notice(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, *(f"{'n' * 200}{i:03}.txt" for i in range(300)))
    result = find(ctx, pattern="*.txt")
    assert text_of(result).endswith("\n\n[50.0KB limit reached]")
    assert result.details["truncation"]["truncated"] is True


def test_no_results(ctx: ToolContext) -> None:
    result = find(ctx, pattern="*.nothing")
    assert text_of(result) == "No files found matching pattern" and result.details is None


def test_missing_path(ctx: ToolContext, tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        find(ctx, pattern="*", path="missing")
    assert str(info.value) == f"Path not found: {tmp_path / 'missing'}"


def test_aborted(ctx: ToolContext) -> None:
    ctx.signal.abort()
    with pytest.raises(AbortedError, match="Operation aborted"):
        find(ctx, pattern="*")


def test_custom_operations(ctx: ToolContext, tmp_path: Path) -> None:
    calls: list[tuple[str, str, list[str], float]] = []

    class Remote:
        def exists(self, path: str) -> bool:
            return path == str(tmp_path)

        def glob(self, pattern: str, cwd: str, ignore: list[str], limit: float) -> list[str]:
            calls.append((pattern, cwd, ignore, limit))
            return [f"{cwd}/a.py", "b.py"]

    tool = create_find_tool(FindOptions(operations=Remote()))
    result = tool.execute({"pattern": "*.py", "limit": 2}, ctx)
    assert text_of(result) == "a.py\nb.py\n\n[2 results limit reached]"  # type: ignore[arg-type]
    assert calls == [("*.py", str(tmp_path), ["**/node_modules/**", "**/.git/**"], 2)]
    with pytest.raises(ToolError, match="Path not found"):
        tool.execute({"pattern": "*", "path": "elsewhere"}, ctx)


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("*.ts", "a.ts", True), ("*.ts", "a/b.ts", False), ("a?c", "abc", True),
    ("**/*.json", "/x/y/z.json", True), ("**/src/**/*.ts", "/r/src/a/b.ts", True),
    ("**/src/**/*.ts", "/r/lib/b.ts", False), ("[!a]*", "b1", True), ("[!a]*", "a1", False),
    ("{foo,ba[rz]}.py", "baz.py", True), ("\\*.py", "*.py", True), ("\\*.py", "x.py", False),
])
def test_glob_semantics(glob: str, path: str, hit: bool) -> None:
    assert (compile_glob(glob).match(path) is not None) is hit


def test_empty_directory(ctx: ToolContext) -> None:
    assert text_of(find(ctx, pattern="*")) == "No files found matching pattern"


def test_unreadable_subdirectory_does_not_hide_other_results(ctx: ToolContext, tmp_path: Path) -> None:
    touch(tmp_path, "ok/a.txt", "locked/b.txt")
    (tmp_path / "locked").chmod(0)
    try:
        lines = text_of(find(ctx, pattern="*.txt")).splitlines()
    finally:
        (tmp_path / "locked").chmod(0o755)
    assert "ok/a.txt" in lines
