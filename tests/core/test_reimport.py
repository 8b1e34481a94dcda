"""``reimport_files``: ``/reload`` imports ``-e`` plugin files again, so an edited plugin's new code runs."""

from __future__ import annotations

from pathlib import Path

from pi_core.app.plugin_reload import reimport_files
from pi_core.loader.plugins import load_plugins, register_file

PLUGIN = '''
from pi_core import hookimpl


@hookimpl
def pi_prompt_guidelines():
    return [{text!r}]
'''


def guidelines(plugins) -> list[str]:
    return [g for _, found in plugins.call_sync("pi_prompt_guidelines", active_tools=frozenset()) for g in found]


def test_an_edited_file_runs_its_new_code_in_place(tmp_path: Path) -> None:
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text(PLUGIN.format(text="one"))
    second.write_text(PLUGIN.format(text="two"))
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_file(plugins, first)
    register_file(plugins, second)
    first.write_text(PLUGIN.format(text="one, edited"))
    assert reimport_files(plugins) == ["first", "second"]
    assert guidelines(plugins) == ["one, edited", "two"], "new code, same order"
    assert plugins.failures == []


def test_a_broken_edit_keeps_the_running_version(tmp_path: Path) -> None:
    path = tmp_path / "plugin.py"
    path.write_text(PLUGIN.format(text="working"))
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_file(plugins, path)
    path.write_text("def broken(:\n")
    assert reimport_files(plugins) == []
    assert guidelines(plugins) == ["working"]
    assert [(f.name, f.fatal) for f in plugins.failures] == [("plugin", False)]
    assert "SyntaxError" in plugins.failures[0].reason
    path.write_text(PLUGIN.format(text="fixed").replace("pi_prompt_guidelines", "pi_prompt_guideline"))
    assert reimport_files(plugins) == [], "a misspelt hook is refused as at start-up"
    assert guidelines(plugins) == ["working"]
    assert "did you mean" in plugins.failures[-1].reason and not plugins.failures[-1].fatal
