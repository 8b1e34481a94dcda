"""ls tool (docs/tools.md#ls), plus sorting, limits, notices and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pi_builtin_tools.ls import PARAMETERS, TOOL, create_ls_tool

from pi_core.errors import ToolError
from pi_core.toolkit.fileops import LsOperations
from pi_core.tools import ToolContext, ToolResult


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def ls(ctx: ToolContext, run_tool: Any, **args: Any) -> ToolResult:
    return run_tool(TOOL, args, ctx)


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def test_dotfiles_and_dot_directories(ctx: ToolContext, run_tool: Any) -> None:
    (ctx.cwd / ".hidden-file").write_text("x")
    (ctx.cwd / ".hidden-dir").mkdir()
    text = text_of(ls(ctx, run_tool))
    assert ".hidden-file" in text and ".hidden-dir/" in text


def test_sorted_case_insensitively_with_slash_for_directories(ctx: ToolContext, run_tool: Any) -> None:
    for name in ("b.txt", "README.md", "a.txt", "Zed"):
        (ctx.cwd / name).write_text("x")
    (ctx.cwd / "src").mkdir()
    result = ls(ctx, run_tool)
    assert text_of(result) == "a.txt\nb.txt\nREADME.md\nsrc/\nZed"
    assert result.details is None


def test_subdirectory_and_symlinks(ctx: ToolContext, run_tool: Any) -> None:
    sub = ctx.cwd / "sub"
    sub.mkdir()
    (sub / "inner").mkdir()
    (sub / "link-to-dir").symlink_to(sub / "inner")
    (sub / "dangling").symlink_to(sub / "nowhere")
    assert text_of(ls(ctx, run_tool, path="sub")) == "inner/\nlink-to-dir/"


def test_empty_directory(ctx: ToolContext, run_tool: Any) -> None:
    (ctx.cwd / "empty").mkdir()
    result = ls(ctx, run_tool, path="empty")
    assert text_of(result) == "(empty directory)" and result.details is None


def test_entry_limit_notice(ctx: ToolContext, run_tool: Any) -> None:
    for i in range(5):
        (ctx.cwd / f"f{i}").write_text("")
    result = ls(ctx, run_tool, limit=3)
    assert text_of(result) == "f0\nf1\nf2\n\n[3 entries limit reached. Use limit=6 for more]"
    assert result.details == {"entryLimitReached": 3}
    assert text_of(ls(ctx, run_tool, limit=5)) == "f0\nf1\nf2\nf3\nf4"


def test_default_limit_is_500(ctx: ToolContext, run_tool: Any) -> None:
    for i in range(501):
        (ctx.cwd / f"f{i:03d}").write_text("")
    text = text_of(ls(ctx, run_tool))
    assert text.endswith("f499\n\n[500 entries limit reached. Use limit=1000 for more]")


def test_byte_limit_notice(ctx: ToolContext, run_tool: Any) -> None:
    for i in range(300):
        (ctx.cwd / (f"{i:03d}" + "n" * 200)).write_text("")
    result = ls(ctx, run_tool)
    text = text_of(result)
    assert text.endswith("\n\n[50.0KB limit reached]")
    assert result.details["truncation"]["truncatedBy"] == "bytes"
    assert "entryLimitReached" not in result.details
    both = text_of(ls(ctx, run_tool, limit=290))
    assert both.endswith("\n\n[290 entries limit reached. Use limit=580 for more. 50.0KB limit reached]")


def test_errors(ctx: ToolContext, run_tool: Any) -> None:
    with pytest.raises(ToolError) as info:
        ls(ctx, run_tool, path="missing")
    assert str(info.value) == f"Path not found: {ctx.cwd / 'missing'}"
    (ctx.cwd / "file.txt").write_text("x")
    with pytest.raises(ToolError) as info:
        ls(ctx, run_tool, path="file.txt")
    assert str(info.value) == f"Not a directory: {ctx.cwd / 'file.txt'}"


class MemoryLsOps(LsOperations):
    def __init__(self, tree: dict[str, list[str] | None]) -> None:
        self.tree = tree  # path -> entries (a directory) or None (a file)

    def exists(self, path: str) -> bool:
        return path in self.tree

    def is_dir(self, path: str) -> bool:
        if path not in self.tree:
            raise FileNotFoundError(2, "No such file or directory", path)
        return self.tree[path] is not None

    def list_dir(self, path: str) -> list[str]:
        if path == "/secret":
            raise PermissionError(13, "Permission denied", path)
        return list(self.tree[path] or [])


def test_ls_on_another_backend(tmp_path: Path, run_tool: Any) -> None:
    ops = MemoryLsOps({"/r": ["b", "A", "gone"], "/r/b": [], "/r/A": None, "/secret": []})
    tool = create_ls_tool(ops)
    assert text_of(run_tool(tool, {"path": "/r"}, ToolContext(cwd=tmp_path))) == "A\nb/"
    with pytest.raises(ToolError) as info:
        run_tool(tool, {"path": "/secret"}, ToolContext(cwd=tmp_path))
    assert str(info.value) == "Cannot read directory: EACCES: permission denied, scandir '/secret'"


def test_registry_serves_ls_with_pis_schema() -> None:
    from pi_core.loader.plugins import load_plugins
    from pi_core.registry import build_registry

    registry = build_registry(load_plugins(discover_extensions=False))
    tool = registry.tools.items["ls"]
    assert tool.json_schema is PARAMETERS and tool.coercion == "typebox"
    reference = json.loads(Path("/work/shared/spec/reference/pi-tools-all.json").read_text())
    pi = next(t["input_schema"] for t in reference if t["name"] == "ls")
    strip = lambda s: {**s, "properties": {k: {"type": v["type"]} for k, v in s["properties"].items()}}
    assert strip(tool.definition().parameters) == strip(pi)
