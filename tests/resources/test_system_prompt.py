"""System prompt composition (docs/config.md#system-prompt)."""

from __future__ import annotations

import json
import re
import types
from datetime import date
from pathlib import Path

import pytest

from pi_core import hookimpl
from pi_core.app.system_prompt import (
    build_system_prompt,
    gather_prompt_hooks,
    load_prompt_texts,
    resolve_prompt_input,
)
from pi_core.loader.plugins import load_plugins, register_module
from pi_core.resources.context_files import ContextFile
from pi_core.resources.diagnostics import SourceInfo
from pi_core.resources.skills import Skill
from pi_core.tools import Tool

SPEC = Path("/work/shared/spec/reference/pi-first-request.anthropic.json")
EDIT_GUIDELINES = [
    "Use edit for precise changes (edits[].oldText must match exactly)",
    ("When changing multiple separate locations in one file, use one edit call with multiple entries in "
    "edits[] instead of multiple edit calls"),
    ("Each edits[].oldText is matched against the original file, not after earlier edits are applied. "
    "Do not emit overlapping or nested edits. Merge nearby changes into one edit."),
    ("Keep edits[].oldText as small as possible while still being unique in the file. "
    "Do not pad with large unchanged regions."),
]
NINE_BULLETS = [
    "Use bash for file operations like ls, rg, find",
    "Use read to examine files instead of cat or sed.",
    *EDIT_GUIDELINES,
    "Use write only for new files or complete rewrites.",
    "Be concise in your responses",
    "Show file paths clearly when working with files",
]
TODAY = date(2026, 11, 29)


def make_tool(name: str, snippet: str | None = None, guidelines: list[str] | None = None) -> Tool:
    return Tool(name=name, description=f"{name} tool", parameters={"type": "object", "properties": {}},
                execute=lambda args, ctx: "", prompt_snippet=snippet, prompt_guidelines=guidelines or [])


BUILTINS = {
    "read": lambda: make_tool("read", "Read file contents", ["Use read to examine files instead of cat or sed."]),
    "bash": lambda: make_tool("bash", "Execute bash commands (ls, grep, find, etc.)"),
    "edit": lambda: make_tool("edit", "Make precise file edits with exact text replacement, including "
                                      "multiple disjoint edits in one call", EDIT_GUIDELINES),
    "write": lambda: make_tool("write", "Create or overwrite files",
                               ["Use write only for new files or complete rewrites."]),
    "grep": lambda: make_tool("grep", "Search file contents for patterns (respects .gitignore)"),
    "find": lambda: make_tool("find", "Find files by glob pattern (respects .gitignore)"),
    "ls": lambda: make_tool("ls", "List directory contents"),
}


def tools(*names: str) -> list[Tool]:
    return [BUILTINS[n]() for n in names]


def build(tool_list: list[Tool], **overrides: object) -> str:
    args: dict[str, object] = {"tools": tool_list, "cwd": Path("/work/proj"), "agent_dir": Path("/agent"),
                                   "custom_prompt": None, "append_prompts": [], "context_files": [], "skills": [], "now": TODAY}
    args.update(overrides)
    return build_system_prompt(**args)  # type: ignore[arg-type]


def bullets(prompt: str) -> list[str]:
    section = prompt.split("\nGuidelines:\n", 1)[1].split("\n\n", 1)[0]
    return [line[2:] for line in section.split("\n")]


def tool_lines(prompt: str) -> list[str]:
    return prompt.split("\nAvailable tools:\n", 1)[1].split("\n\n", 1)[0].split("\n")


def make_skill(tmp_path: Path, name: str, description: str = "Does things.", hidden: bool = False) -> Skill:
    path = tmp_path / name / "SKILL.md"
    return Skill(name=name, description=description, file_path=path, base_dir=path.parent,
                 source_info=SourceInfo(path, "auto", "user"), disable_model_invocation=hidden)


def test_default_tools_match_reference_structure() -> None:
    prompt = build(tools("read", "bash", "edit", "write"))
    reference = json.loads(SPEC.read_text())["system"][0]["text"]
    assert bullets(prompt) == NINE_BULLETS == bullets(reference)
    assert tool_lines(prompt) == tool_lines(reference)
    # Same skeleton as Pi's prompt: fixed lines in the same order, the docs block right before the date.
    for text in (prompt, reference):
        fixed = [line for line in text.split("\n") if line in (
            "Available tools:", "Guidelines:",
            "In addition to the tools above, you may have access to other custom tools depending on the project.")]
        assert fixed == ["Available tools:",
                         "In addition to the tools above, you may have access to other custom tools depending on the project.",
                         "Guidelines:"]
        assert re.search(r"\n- Show file paths clearly when working with files\n\n[^\n]*documentation", text)
        assert re.search(r"[^\n]\nCurrent date: \d{4}-\d\d-\d\d\nCurrent working directory: [^\n]+$", text)
    assert prompt.endswith("\nCurrent date: 2026-11-29\nCurrent working directory: /work/proj")


def skeleton(prompt: str) -> str:
    """The prompt minus our-own-words prose (intro paragraph, docs block), with date and cwd normalised."""
    _intro, rest = prompt.split("\n\n", 1)
    body, tail = rest.rsplit("\n\n", 1)  # tail = docs block + date + cwd
    tail_lines = [line for line in tail.split("\n") if line.startswith("Current ")]
    text = "<intro>\n\n" + body + "\n\n<docs>\n" + "\n".join(tail_lines)
    text = re.sub(r"Current date: \d{4}-\d\d-\d\d", "Current date: <date>", text)
    return re.sub(r"Current working directory: .*", "Current working directory: <cwd>", text)


def test_default_tools_equal_reference_after_normalising() -> None:
    reference = json.loads(SPEC.read_text())["system"][0]["text"]
    assert skeleton(build(tools("read", "bash", "edit", "write"))) == skeleton(reference)


def test_docs_block_points_at_installed_package_files() -> None:
    prompt = build(tools("read"))
    root = Path(__import__("pi_core").__file__).resolve().parent.parent
    assert str(root / "README.md") in prompt
    assert str(root / "CONTRIBUTING.md") in prompt


def test_empty_tool_list_says_none_and_keeps_fixed_guidelines() -> None:
    prompt = build([])
    assert "Available tools:\n(none)" in prompt
    assert bullets(prompt) == ["Be concise in your responses", "Show file paths clearly when working with files"]


def test_read_and_grep_only_has_no_bash_rule() -> None:
    prompt = build(tools("read", "grep"))
    assert tool_lines(prompt) == ["- read: Read file contents",
                                  "- grep: Search file contents for patterns (respects .gitignore)"]
    assert not any("bash" in b for b in bullets(prompt))


def test_bash_with_exploration_tools_prefers_them() -> None:
    prompt = build(tools("read", "bash", "ls"))
    assert bullets(prompt)[0] == "Prefer grep/find/ls tools over bash for file exploration (faster, respects .gitignore)"
    assert "Use bash for file operations like ls, rg, find" not in prompt


def test_tool_without_snippet_is_not_listed_but_with_one_it_is() -> None:
    prompt = build([*tools("read"), make_tool("quiet")])
    assert tool_lines(prompt) == ["- read: Read file contents"]
    prompt = build([*tools("read"), make_tool("dynamic_tool", "Run dynamic test behavior")])
    assert "- dynamic_tool: Run dynamic test behavior" in tool_lines(prompt)


def test_snippet_is_collapsed_to_one_line() -> None:
    prompt = build([make_tool("multi", "  Does\n  several\tthings  ")])
    assert tool_lines(prompt) == ["- multi: Does several things"]


def test_tool_order_is_activation_order() -> None:
    prompt = build(tools("write", "read"))
    assert tool_lines(prompt) == ["- write: Create or overwrite files", "- read: Read file contents"]


def test_extra_guidelines_trimmed_deduplicated_blank_dropped() -> None:
    tool = make_tool("dynamic_tool", "Run dynamic test behavior",
                     ["Use dynamic_tool for project summaries.", "  Use dynamic_tool for project summaries.  ", "   "])
    prompt = build([*tools("read"), tool], extra_guidelines=["Use dynamic_tool for project summaries.", ""])
    assert prompt.count("- Use dynamic_tool for project summaries.") == 1
    assert bullets(prompt) == ["Use read to examine files instead of cat or sed.",
                               "Use dynamic_tool for project summaries.",
                               "Be concise in your responses", "Show file paths clearly when working with files"]


def test_custom_prompt_replaces_base_but_keeps_append_context_skills_date(tmp_path: Path) -> None:
    ctx = [ContextFile(Path("/p/AGENTS.md"), "Use tabs.")]
    prompt = build(tools("read", "bash"), custom_prompt="You are a pirate.", append_prompts=["Arr."],
                   context_files=ctx, skills=[make_skill(tmp_path, "sail")])
    assert prompt.startswith("You are a pirate.\n\nArr.\n\n# Project Context\n\n")
    assert "Available tools:" not in prompt and "Guidelines:" not in prompt and "documentation" not in prompt
    assert "<name>sail</name>" in prompt
    assert prompt.endswith("</available_skills>\nCurrent date: 2026-11-29\nCurrent working directory: /work/proj")


def test_empty_custom_prompt_falls_back_to_default() -> None:
    assert "Available tools:" in build(tools("read"), custom_prompt="")


def test_append_texts_joined_after_docs_block() -> None:
    plain = build(tools("read"))
    prompt = build(tools("read"), append_prompts=["First.", "Second."])
    docs_end = plain.split("\nCurrent date:")[0]
    assert prompt.startswith(docs_end + "\n\nFirst.\n\nSecond.\nCurrent date:")


def test_context_files_in_order_with_headers() -> None:
    files = [ContextFile(Path("/agent/AGENTS.md"), "global rules"), ContextFile(Path("/work/AGENTS.md"), "outer"),
             ContextFile(Path("/work/proj/CLAUDE.md"), "inner")]
    prompt = build(tools("read"), append_prompts=["APPENDED"], context_files=files)
    expected = ("\n\nAPPENDED\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
                "## /agent/AGENTS.md\n\nglobal rules\n\n## /work/AGENTS.md\n\nouter\n\n"
                "## /work/proj/CLAUDE.md\n\ninner\n\n\nCurrent date: 2026-11-29")
    assert expected in prompt


def test_skills_block_only_when_read_active(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "brave-search", "Web <search> & \"more\"")
    with_read = build(tools("read", "bash"), skills=[skill])
    block = ("\n\nThe following skills provide specialized instructions for specific tasks.\n"
             "Use the read tool to load a skill's file when the task matches its description.\n"
             "When a skill file references a relative path, resolve it against the skill directory (parent of "
             "SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\n"
             "<available_skills>\n  <skill>\n    <name>brave-search</name>\n"
             "    <description>Web &lt;search&gt; &amp; &quot;more&quot;</description>\n"
             f"    <location>{skill.file_path}</location>\n  </skill>\n</available_skills>\nCurrent date:")
    assert block in with_read
    assert "<available_skills>" not in build(tools("bash"), skills=[skill])
    assert "<available_skills>" not in build(tools("bash"), custom_prompt="Custom", skills=[skill])


def test_hidden_skills_give_no_block(tmp_path: Path) -> None:
    prompt = build(tools("read"), skills=[make_skill(tmp_path, "secret", hidden=True)])
    assert "available_skills" not in prompt and "The following skills" not in prompt


def test_cwd_backslashes_become_slashes() -> None:
    prompt = build(tools("read"), cwd=Path("C:\\Users\\me\\proj"))
    assert prompt.endswith("Current working directory: C:/Users/me/proj")


def test_date_defaults_to_local_today() -> None:
    prompt = build(tools("read"), now=None)
    assert f"\nCurrent date: {date.today().isoformat()}\n" in prompt


def test_plugin_hook_snippet_and_guideline_appear() -> None:
    seen: list[frozenset[str]] = []
    plugin = types.ModuleType("web_plugin")

    @hookimpl
    def pi_prompt_snippets(active_tools: frozenset[str]) -> str | None:
        seen.append(active_tools)
        return "- web: Fetch pages from the internet" if "read" in active_tools else None

    @hookimpl
    def pi_prompt_guidelines(active_tools: frozenset[str]) -> list[str]:
        return ["Cite the URL of every page you fetched.", "Be concise in your responses"]

    plugin.pi_prompt_snippets = pi_prompt_snippets  # type: ignore[attr-defined]
    plugin.pi_prompt_guidelines = pi_prompt_guidelines  # type: ignore[attr-defined]
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "web")
    active = tools("read", "bash")
    snippets, guidelines = gather_prompt_hooks(plugins, frozenset(t.name for t in active))
    assert seen == [frozenset({"read", "bash"})]
    prompt = build(active, extra_snippets=snippets, extra_guidelines=guidelines)
    assert tool_lines(prompt)[-1] == "- web: Fetch pages from the internet"
    assert bullets(prompt) == ["Use bash for file operations like ls, rg, find",
                               "Use read to examine files instead of cat or sed.",
                               "Cite the URL of every page you fetched.",
                               "Be concise in your responses", "Show file paths clearly when working with files"]
    snippets, _ = gather_prompt_hooks(plugins, frozenset({"bash"}))
    assert snippets == []


def test_hook_with_wrong_return_type_is_recorded_and_skipped() -> None:
    plugin = types.ModuleType("bad_plugin")

    @hookimpl
    def pi_prompt_guidelines(active_tools: frozenset[str]) -> object:
        return 42

    plugin.pi_prompt_guidelines = pi_prompt_guidelines  # type: ignore[attr-defined]
    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, plugin, "bad")
    assert gather_prompt_hooks(plugins, frozenset()) == ([], [])
    assert [f.name for f in plugins.failures] == ["bad"]
    assert "expected a string or a list of strings" in plugins.failures[0].reason


# --- base / append text sources ---------------------------------------------------------------

@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    (cwd / ".pi").mkdir(parents=True)
    agent.mkdir()
    return cwd, agent


def test_no_sources_means_builtin_prompt(dirs: tuple[Path, Path]) -> None:
    texts = load_prompt_texts(*dirs)
    assert texts.custom is None and texts.append == []


def test_project_system_md_beats_global(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    (agent / "SYSTEM.md").write_text("global system")
    assert load_prompt_texts(cwd, agent).custom == "global system"
    (cwd / ".pi" / "SYSTEM.md").write_text("project system")
    assert load_prompt_texts(cwd, agent).custom == "project system"


def test_flag_beats_system_md_and_reads_named_file(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    (cwd / ".pi" / "SYSTEM.md").write_text("project system")
    assert load_prompt_texts(cwd, agent, system_prompt="literal text").custom == "literal text"
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("from file")
    assert load_prompt_texts(cwd, agent, system_prompt=str(prompt_file)).custom == "from file"


def test_append_project_beats_global_and_flags_replace_both(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    (agent / "APPEND_SYSTEM.md").write_text("global append")
    assert load_prompt_texts(cwd, agent).append == ["global append"]
    (cwd / ".pi" / "APPEND_SYSTEM.md").write_text("project append")
    assert load_prompt_texts(cwd, agent).append == ["project append"]
    extra = tmp_path / "extra.md"
    extra.write_text("file append")
    texts = load_prompt_texts(cwd, agent, append_system_prompt=["one", str(extra)])
    assert texts.append == ["one", "file append"]
    prompt = build(tools("read"), append_prompts=texts.append)
    assert "\n\none\n\nfile append\nCurrent date:" in prompt


def test_unreadable_named_file_warns_and_uses_text(tmp_path: Path) -> None:
    directory = tmp_path / "a-directory"
    directory.mkdir()
    warnings: list[str] = []
    assert resolve_prompt_input(str(directory), "system prompt", warnings.append) == str(directory)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"Warning: Could not read system prompt file {directory}: ")
