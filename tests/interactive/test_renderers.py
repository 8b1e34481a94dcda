"""Built-in tool renderers and the renderer hook, drawn on rich's recording console."""

from __future__ import annotations

import io
import types
from typing import Any

from pi_plugins.interactive import renderers
from pi_plugins.interactive.renderers import resolve_renderers
from pi_plugins.interactive.view import ToolBlock, render_tool
from rich.console import Console

from pi_core import hookimpl
from pi_core.loader.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.render import Renderer
from pi_core.tools import ToolResult


def draw(renderable: Any, width: int = 80) -> tuple[str, Console]:
    console = Console(record=True, file=io.StringIO(), width=width, color_system="truecolor")
    console.print(renderable)
    text = "\n".join(line.rstrip() for line in console.export_text(clear=False).splitlines())
    return text + "\n", console


def tool(name: str, args: dict[str, Any], result: Any = None, *, is_error: bool = False, expanded: bool = False,
         table: dict[str, Renderer] | None = None, done: bool = True, partial: Any = None) -> str:
    table = table or resolve_renderers({})
    block = ToolBlock("c1", name, args, result=result, partial=partial, is_error=is_error, done=done)
    renderer = table.get(name) or renderers.default_renderer(name)
    return draw(render_tool(block, renderer, expanded))[0]


def test_read_shows_path_and_range_and_collapses_content() -> None:
    text = tool("read", {"path": "src/app.py", "offset": 10, "limit": 5}, ToolResult.text("a\nb\nc\n"))
    assert "read src/app.py:10-14" in text
    assert "3 lines (ctrl+o to show)" in text and "\nb" not in text
    expanded = tool("read", {"path": "src/app.py"}, ToolResult.text("alpha\nbeta"), expanded=True)
    assert "alpha" in expanded and "beta" in expanded
    assert "src/app.py:" not in expanded  # no range when none was asked


def test_bash_shows_command_and_live_tail_of_output() -> None:
    output = "\n".join(f"line {i}" for i in range(1, 21))
    running = tool("bash", {"command": "make test"}, done=False, partial=ToolResult.text(output))
    assert "$ make test" in running
    assert "line 20" in running and "line 16" in running and "line 15\n" not in running
    assert "15 earlier lines" in running
    full = tool("bash", {"command": "make test"}, ToolResult.text(output), expanded=True)
    assert "line 1\n" in full


def test_bash_error_and_full_output_path() -> None:
    result = ToolResult.text("boom", details={"fullOutputPath": "/tmp/pi-bash-1.log"})
    text = tool("bash", {"command": "false", "timeout": 5}, result, is_error=True)
    assert "(timeout 5s)" in text and "boom" in text and "Full output: /tmp/pi-bash-1.log" in text


def test_edit_draws_coloured_diff() -> None:
    diff = " 1 keep\n-2 old line\n+2 new line\n 3 tail"
    block = ToolBlock("c1", "edit", {"path": "a.py", "edits": [{}, {}]},
                      result=ToolResult.text("Successfully replaced 2 block(s) in a.py.", details={"diff": diff}),
                      done=True)
    text, console = draw(render_tool(block, resolve_renderers({})["edit"], False))
    assert "edit a.py (2 edits)" in text
    assert "-2 old line" in text and "+2 new line" in text
    html = console.export_html(inline_styles=True)
    from pi_plugins.interactive import style

    added, removed = style.current().color("toolDiffAdded"), style.current().color("toolDiffRemoved")
    assert f"color: {added}" in html and f"color: {removed}" in html  # the theme's diff colours


def test_write_previews_content() -> None:
    content = "\n".join(f"print({i})" for i in range(30))
    text = tool("write", {"path": "gen.py", "content": content}, ToolResult.text("Successfully wrote 300 bytes"))
    assert "write gen.py" in text and "print(0)" in text and "print(9)" in text
    assert "print(10)" not in text and "20 more lines" in text


def test_unknown_tool_gets_default_rendering() -> None:
    text = tool("deploy", {"target": "prod"}, ToolResult.text("deployed"))
    assert 'deploy {"target": "prod"}' in text and "deployed" in text


def test_plugin_renderer_replaces_builtin_by_tool_name() -> None:
    plugin = types.SimpleNamespace(pi_renderers=hookimpl(lambda: [
        Renderer("read", lambda args: f"CUSTOM READ {args['path']}", lambda r, e, x: "custom body")]))
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, renderers, "interactive-renderers", layer="builtin")
    register_module(plugins, plugin, "fancy")
    registry = build_registry(plugins)
    table = resolve_renderers(dict(registry.renderers.items))
    text = tool("read", {"path": "x"}, ToolResult.text("hi"), table=table)
    assert "CUSTOM READ x" in text and "custom body" in text
    assert tool("bash", {"command": "ls"}, table=table).startswith(" $ ls")  # the others stay built-in


def test_broken_renderer_shows_its_error() -> None:
    def broken(args: dict[str, Any]) -> Any:
        raise KeyError("path")

    text = tool("read", {}, table={"read": Renderer("read", broken)})
    assert "renderer failed: KeyError" in text
