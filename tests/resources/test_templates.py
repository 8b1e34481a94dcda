"""Prompt templates: argument parsing, substitution, discovery, expansion (docs/config.md#prompt-templates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_core.resources import Resources, expand_input, load_resources
from pi_core.resources.templates import (
    expand_template,
    load_templates,
    parse_command_args,
    substitute_args,
)

# --- substitution -----------------------------------------------------------------------------

@pytest.mark.parametrize(("template", "args", "expected"), [
    ("Args: $ARGUMENTS", ["a", "b", "c"], "Args: a b c"),
    ("Args: $@", ["a", "b", "c"], "Args: a b c"),
    ("$ARGUMENTS", ["$1", "$ARGUMENTS"], "$1 $ARGUMENTS"),  # values are never re-scanned
    ("$@", ["$1", "${@:2}"], "$1 ${@:2}"),
    ("$1 $2", ["$2", "x"], "$2 x"),
    ("$1: $@", ["prefix", "a", "b"], "prefix: prefix a b"),
    ("Test: $ARGUMENTS", [], "Test: "),
    ("$1 $2 $3 $4 $5", ["a", "b"], "a b   "),
    ("$1$2", ["a", "b"], "ab"),
    ("[$0]", ["a"], "[]"),
    ("$1.5", ["a"], "a.5"),
    ("$10 $12 $15", [str(i) for i in range(1, 16)], "10 12 15"),
    ("Price: \\$100", [], "Price: \\"),
    ("$arguments $Arguments", ["a"], "$arguments $Arguments"),
    ("${@:2}", ["a", "b", "c", "d"], "b c d"),
    ("${@:2:2}", ["a", "b", "c", "d"], "b c"),
    ("[${@:9}] [${@:9:2}]", ["a", "b"], "[] []"),
    ("${@:0}", ["a", "b"], "a b"),
    ("${@:1:0}", ["a", "b"], ""),
    ("${@:2} then $@", ["a", "b", "c"], "b c then a b c"),
    ("$A $$ {{focus}} $", ["a"], "$A $$ {{focus}} $"),
    ("\\g<0> $1", ["\\g<0>"], "\\g<0> \\g<0>"),
])
def test_substitute_args(template: str, args: list[str], expected: str) -> None:
    assert substitute_args(template, args) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("a b c", ["a", "b", "c"]),
    ('"quoted arg" plain', ["quoted arg", "plain"]),
    ("'single quoted' x", ["single quoted", "x"]),
    ("a\tb  \t c", ["a", "b", "c"]),
    ("'' \" \"", [" "]),
    ('"quoted \\"text\\""', ["quoted \\text\\"]),
    ('pre"mid dle"post', ["premid dlepost"]),
    ('"unterminated rest', ["unterminated rest"]),
    ("", []),
    ("a\nb", ["a\nb"]),
])
def test_parse_command_args(text: str, expected: list[str]) -> None:
    assert parse_command_args(text) == expected


# --- discovery and descriptions ---------------------------------------------------------------

@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    (cwd / ".pi" / "prompts").mkdir(parents=True)
    (agent / "prompts").mkdir(parents=True)
    return cwd, agent


def test_descriptions_from_frontmatter_or_first_line(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    prompts = agent / "prompts"
    (prompts / "review.md").write_text("---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1 now")
    (prompts / "short.md").write_text("\n\n  First line here\nsecond")
    (prompts / "long.md").write_text("x" * 61)
    (prompts / "exact.md").write_text("y" * 60)
    (prompts / "empty.md").write_text("")
    by_name = {t.name: t for t in load_templates(cwd=cwd, agent_dir=agent).templates}
    assert sorted(by_name) == ["empty", "exact", "long", "review", "short"]
    assert by_name["review"].description == "Review code"
    assert by_name["review"].argument_hint == "<file>"
    assert by_name["review"].content == "Review $1 now"
    assert by_name["short"].description == "  First line here"
    assert by_name["long"].description == "x" * 60 + "..."
    assert by_name["exact"].description == "y" * 60
    assert by_name["empty"].description == ""
    assert (by_name["review"].source_info.source, by_name["review"].source_info.scope) == ("auto", "user")


def test_non_recursive_and_skips_dot_and_non_md(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    prompts = cwd / ".pi" / "prompts"
    (prompts / "nested").mkdir()
    (prompts / "nested" / "deep.md").write_text("deep")
    (prompts / ".hidden.md").write_text("hidden")
    (prompts / "notes.txt").write_text("text")
    (prompts / "top.md").write_text("top")
    assert [t.name for t in load_templates(cwd=cwd, agent_dir=agent).templates] == ["top"]


def test_project_beats_user_and_collision_reported(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    (agent / "prompts" / "fix.md").write_text("user fix")
    (cwd / ".pi" / "prompts" / "fix.md").write_text("project fix")
    result = load_templates(cwd=cwd, agent_dir=agent)
    assert [(t.name, t.content, t.source_info.scope) for t in result.templates] == [("fix", "project fix", "project")]
    assert [d.message for d in result.diagnostics] == ['name "/fix" collision']


def test_invalid_yaml_template_is_skipped(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    (agent / "prompts" / "broken.md").write_text("---\ndescription: [oops\n---\nbody")
    (agent / "prompts" / "fine.md").write_text("fine")
    result = load_templates(cwd=cwd, agent_dir=agent)
    assert [t.name for t in result.templates] == ["fine"]
    assert len(result.diagnostics) == 1 and "at line" in result.diagnostics[0].message


def test_explicit_paths_and_no_prompt_templates(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    cwd, agent = dirs
    (agent / "prompts" / "auto.md").write_text("auto")
    extra = tmp_path / "extra.md"
    extra.write_text("explicit $1")
    folder = tmp_path / "more"
    folder.mkdir()
    (folder / "folder-one.md").write_text("from folder")
    res = load_resources(cwd, agent, no_prompt_templates=True,
                         template_paths=[str(extra), str(folder), "nope.md"])
    assert [t.name for t in res.templates] == ["extra", "folder-one"]
    assert res.templates[0].source_info.source == "local"
    assert [(d.type, d.message, d.path) for d in res.diagnostics] == [
        ("error", "Prompt template path does not exist", cwd / "nope.md")]
    assert [t.name for t in load_resources(cwd, agent).templates] == ["auto"]


# --- expansion --------------------------------------------------------------------------------

def test_expand_template(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    (agent / "prompts" / "fix.md").write_text("---\ndescription: Fix\n---\nFix $1 in ${@:2}. All: $ARGUMENTS")
    templates = load_templates(cwd=cwd, agent_dir=agent).templates
    assert expand_template('/fix bug "src/a.py" b.py', templates) == "Fix bug in src/a.py b.py. All: bug src/a.py b.py"
    assert expand_template("/fix", templates) == "Fix  in . All: "
    assert expand_template("/fixes now", templates) == "/fixes now"
    assert expand_template("fix it", templates) == "fix it"
    assert expand_template("/unknown x", templates) == "/unknown x"


def test_expand_input_skill_then_template(dirs: tuple[Path, Path]) -> None:
    cwd, agent = dirs
    (agent / "prompts" / "greet.md").write_text("Hello $1")
    skill_dir = agent / "skills" / "greet"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text("---\ndescription: Greets.\n---\n/greet world")
    res = load_resources(cwd, agent, no_context_files=True)
    assert expand_input("/greet Bob", res) == "Hello Bob"
    # The skill body is wrapped in <skill>, so the template inside it is not expanded again.
    assert expand_input("/skill:greet", res).startswith('<skill name="greet"')
    assert "/greet world\n</skill>" in expand_input("/skill:greet", res)
    assert expand_input("plain text", Resources()) == "plain text"
