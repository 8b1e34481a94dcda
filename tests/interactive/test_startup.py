"""Start-up: the header, lazy imports, the entry point and terminal restoration on errors."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

from pi_plugins.interactive import run_interactive
from pi_plugins.interactive.header import render_header, startup_info
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from pi_core.registry import Override
from pi_core.testing.fake_provider import FakeProvider
from tests.interactive.harness import make_session


def test_header_lists_context_files_plugins_overrides_and_skills(tmp_path: Path) -> None:
    resources = types.SimpleNamespace(
        context_files=[types.SimpleNamespace(path=tmp_path / "AGENTS.md")],
        skills=[types.SimpleNamespace(name="pdf")], templates=[types.SimpleNamespace(name="review")])
    session = make_session(FakeProvider(), tmp_path, resources=resources)
    session.registry.overrides.append(Override("tool", "read", "fast-read", "read"))
    from pi_core.loader.plugins import PluginInfo

    session.plugins.info["fast-read"] = PluginInfo("fast-read", "installed", "fast-read 1.0")
    console = Console(record=True, file=io.StringIO(), width=120, color_system=None)
    console.print(render_header(startup_info(session, ["models.json: bad entry"]), tmp_path))
    text = console.export_text()
    assert f"Context: {tmp_path / 'AGENTS.md'}" in text
    assert "Plugins: fast-read (installed)" in text
    assert "tool read: fast-read overrides read" in text
    assert "Skills: pdf" in text and "Templates: /review" in text
    assert "Warning: models.json: bad entry" in text


def test_importing_the_package_loads_no_ui_library() -> None:
    code = ("import sys, pi_plugins.interactive, pi_plugins.interactive.renderers; "
            "print([m for m in ('rich', 'prompt_toolkit') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_an_internal_error_ends_with_code_1_and_a_traceback(tmp_path: Path, capsys: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    def broken_subscribe(listener: Any) -> Any:
        raise RuntimeError("listener table is broken")

    session.subscribe = broken_subscribe  # type: ignore[method-assign]
    console = Console(file=io.StringIO())
    code = asyncio.run(run_interactive(session, output=DummyOutput(), console=console))
    assert code == 1
    assert "RuntimeError: listener table is broken" in capsys.readouterr().err


def test_an_error_while_running_ends_the_app_with_code_1(tmp_path: Path, pipe: Any, capsys: Any) -> None:
    session = make_session(FakeProvider(), tmp_path)

    async def main() -> int:
        from pi_plugins.interactive import layout as app_module

        task = asyncio.create_task(run_interactive(session, input=pipe, output=DummyOutput(),
                                                   console=Console(file=io.StringIO())))
        for _ in range(1000):
            await asyncio.sleep(0.01)
            if len(session.listeners):
                break
        original = app_module.footer_lines

        def exploding(*args: Any) -> Any:
            raise ValueError("footer exploded")

        app_module.footer_lines = exploding  # type: ignore[assignment]
        try:
            pipe.send_text("x")  # any key redraws
            return await asyncio.wait_for(task, 10)
        finally:
            app_module.footer_lines = original

    assert asyncio.run(main()) == 1
    assert "ValueError: footer exploded" in capsys.readouterr().err
    assert len(session.listeners) == 0  # the app unsubscribed on the way out
