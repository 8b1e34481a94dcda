"""Documentation that must stay true: hooks in CONTRIBUTING.md, the README set-up, and docs/ (every
citation resolves, links work, the tools page quotes the tools' current texts)."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from pi_core import hookspecs

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
SOURCE_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".sh", ".yml", ".yaml"}
SKIPPED_DIRS = {"node_modules", "__pycache__", "build", "dist"}
# A citation of a root-level docs page: docs/<name>.md, optionally #<slug>. The look-behind keeps
# paths such as somewhere/docs/x.md out; names and slugs are lower case by convention.
CITATION = re.compile(r"(?<![\w/.-])docs/([a-z0-9_-]+)\.md(?:#([A-Za-z0-9_-]+))?")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def test_every_hookspec_is_documented_with_its_signature() -> None:
    text = (REPO / "CONTRIBUTING.md").read_text()
    for name, function in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("pi_"):
            continue
        params = ", ".join(
            f"{p.name}: {p.annotation}" if p.annotation is not inspect.Parameter.empty else p.name
            for p in inspect.signature(function).parameters.values())
        documented = f"`{name}({params})".replace("|", "\\|")  # pipes are escaped inside a Markdown table
        assert documented in text or f"`{name}({params})" in text, f"{name}({params}) is not documented in CONTRIBUTING.md"


def test_readme_names_two_setup_commands() -> None:
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set-up", 1)[1].split("##", 1)[0]
    commands = [line for line in setup.splitlines() if line.startswith("    ")]
    assert len(commands) == 2
    assert "pytest" in commands[1] and (REPO / ".ci" / "run").read_text().count("pytest") >= 1


def github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def headings(path: Path) -> set[str]:
    """Anchors of a markdown file's headings (fenced code skipped; repeats get -1, -2 like GitHub)."""
    slugs: set[str] = set()
    counts: dict[str, int] = {}
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if in_fence or not match:
            continue
        slug = github_slug(match.group(1))
        seen = counts.get(slug, 0)
        counts[slug] = seen + 1
        slugs.add(slug if seen == 0 else f"{slug}-{seen}")
    return slugs


def source_files() -> list[Path]:
    """Text files of the repository, without hidden, virtualenv and build directories."""
    files = []
    for root, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        files += [Path(root, name) for name in names if Path(name).suffix in SOURCE_SUFFIXES]
    return files


def doc_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def test_every_docs_citation_in_the_tree_names_a_page_and_heading() -> None:
    anchors = {page.stem: headings(page) for page in doc_pages()}
    problems: list[str] = []
    cited = 0
    for path in source_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for match in CITATION.finditer(line):
                cited += 1
                name, slug = match.group(1), match.group(2)
                where = f"{path.relative_to(REPO)}:{number}: {match.group(0)}"
                if name not in anchors:
                    problems.append(f"{where}: no file docs/{name}.md")
                elif slug and slug not in anchors[name]:
                    problems.append(f"{where}: docs/{name}.md has no heading #{slug}")
    assert not problems, "\n".join(problems)
    assert cited > 50  # the scan really sees the code's citations


def test_links_between_docs_pages_resolve() -> None:
    problems: list[str] = []
    for page in doc_pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            file_part, _, anchor = target.partition("#")
            linked = page if not file_part else (page.parent / file_part).resolve()
            if not linked.is_file():
                problems.append(f"{page.name}: ({target}) names a missing file")
            elif anchor and linked.suffix == ".md" and anchor not in headings(linked):
                problems.append(f"{page.name}: ({target}) names a missing heading")
    assert not problems, "\n".join(problems)


def test_the_index_lists_every_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    missing = [page.name for page in doc_pages() if page.name != "README.md" and f"]({page.name})" not in index]
    assert not missing, f"docs/README.md does not link {missing}"


def test_docs_name_no_paths_of_a_particular_machine() -> None:
    machine = re.compile(r"(?<![\w.])/(?:work|tmp|root)/")
    found = [f"{page.name}:{n}" for page in doc_pages()
             for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if machine.search(line)]
    assert not found, found


def _builtin_tools() -> list[Any]:
    import pi_builtin_tools

    tools = []
    for info in pkgutil.iter_modules(pi_builtin_tools.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"pi_builtin_tools.{info.name}")
        if hasattr(module, "TOOL"):
            tools.append(module.TOOL)
    return tools


def _parameter_texts(schema: dict[str, Any]) -> list[str]:
    texts = []
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            if prop.get("description"):
                texts.append(prop["description"])
            texts += _parameter_texts(prop)
            if isinstance(prop.get("items"), dict):
                texts += _parameter_texts(prop["items"])
    return texts


@pytest.mark.parametrize("tool", _builtin_tools(), ids=lambda tool: tool.name)
def test_tools_page_quotes_each_builtin_tools_model_facing_texts(tool: Any) -> None:
    page = (DOCS / "tools.md").read_text(encoding="utf-8")
    texts = [tool.description, *_parameter_texts(tool.json_schema), *tool.prompt_guidelines]
    if tool.prompt_snippet:
        texts.append(tool.prompt_snippet)
    missing = [text for text in texts if text not in page]
    assert f"## {tool.name}" in page
    assert not missing, f"docs/tools.md does not quote {tool.name}'s current texts: {missing}"


def test_slugs_follow_github() -> None:
    assert github_slug("Tree navigation") == "tree-navigation"
    assert github_slug("The `pi` command") == "the-pi-command"
    assert github_slug("Models.toml, and more!") == "modelstoml-and-more"


# --- docs/plugins.md is checked against the hook specs --------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def hook_reference_rows() -> list[str]:
    """docs/plugins.md#hook-reference as the specs say it: one row per hook (topic module, policy, result)."""
    rows = []
    for name, function in sorted(inspect.getmembers(hookspecs, inspect.isfunction)):
        if not name.startswith("pi_"):
            continue
        policy = function.pi_policy
        kind = f"{policy.kind} (`{policy.chain}`)" if policy.chain else policy.kind
        topic = function.__module__.rpartition(".")[2]
        rows.append(f"| `{name}` | {topic} | {kind} | `{_cell(str(inspect.signature(function).return_annotation))}` |")
    return rows


def _members(kind: Any) -> list[str]:
    import dataclasses

    if dataclasses.is_dataclass(kind):
        return [f.name for f in dataclasses.fields(kind)]
    if hasattr(kind, "model_fields"):  # a pydantic model
        return list(kind.model_fields)
    return sorted(m for m in {*vars(kind), *getattr(kind, "__annotations__", {})}  # a Protocol or a class
                  if not m.startswith("_") and m != "store")


def type_rows(module_name: str) -> list[str]:
    """A table of docs/plugins.md as ``module_name`` says it: each public type, its fields, where it is named."""
    import dataclasses

    from pi_core.extension import CommandContext
    from pi_core.hookspecs import results

    module = importlib.import_module(module_name)
    # Where each type appears: hook signatures, the context's methods, the fields of the hook types.
    specs = {f"`{name}`": str(inspect.signature(function))
             for name, function in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("pi_")}
    specs |= {f"`ctx.{name}`": str(inspect.signature(method))
              for name, method in inspect.getmembers(CommandContext, inspect.isfunction) if not name.startswith("_")}
    specs |= {f"`ctx.{name}`": str(inspect.signature(prop.fget).return_annotation)
              for name, prop in inspect.getmembers(CommandContext, lambda m: isinstance(m, property))}
    specs |= {f"`{name}.{f.name}`": str(f.type) for name in results.__all__
              if dataclasses.is_dataclass(kind := getattr(results, name)) for f in dataclasses.fields(kind)}
    rows = []
    for name in sorted(module.__all__):
        kind = getattr(module, name)
        if not isinstance(kind, type):
            continue
        named_by = [where for where, signature in sorted(specs.items()) if re.search(rf"\b{name}\b", signature)]
        rows.append(f"| `{name}` | {', '.join(f'`{m}`' for m in _members(kind))} | {', '.join(named_by)} |")
    return rows


def hook_type_rows() -> list[str]:
    return type_rows("pi_core.hookspecs.results")


def entry_type_rows() -> list[str]:
    return type_rows("pi_core.hookspecs.entries")


def _section(page: str, heading: str) -> list[str]:
    body = page.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    return [line for line in body.splitlines() if line.startswith("| `")]


@pytest.mark.parametrize(("heading", "rows"), [("### Hook reference", hook_reference_rows),
                                               ("### Hook types", hook_type_rows),
                                               ("### Session entries", entry_type_rows)])
def test_plugins_page_lists_every_hook_hook_type_and_entry_type_as_the_code_says(heading: str, rows: Any) -> None:
    page = (DOCS / "plugins.md").read_text(encoding="utf-8")
    assert heading in page, f"docs/plugins.md has no {heading!r} section"
    expected = rows()
    documented = _section(page, heading)
    assert documented == expected, (f"docs/plugins.md {heading!r} is not what the specs say; its rows should be:\n"
                                    + "\n".join(expected))


def test_the_hook_reference_check_notices_a_missing_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    def pi_made_up_hook() -> None:
        """Not a real hook."""

    pi_made_up_hook.pi_policy = hookspecs.Policy("notify", None)  # type: ignore[attr-defined]
    monkeypatch.setattr(hookspecs, "pi_made_up_hook", pi_made_up_hook, raising=False)
    page = (DOCS / "plugins.md").read_text(encoding="utf-8")
    assert any("`pi_made_up_hook`" in row for row in hook_reference_rows())
    assert hook_reference_rows() != _section(page, "### Hook reference")
