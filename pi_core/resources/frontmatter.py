"""Split a markdown file into its YAML frontmatter (a dict) and its body.

PyYAML is used (lazily imported) because real SKILL.md files use block scalars, quoting and nested
maps. Its loader is narrowed to YAML 1.2 rules, as Pi's parser applies them: only true/false are
booleans (``yes`` stays a string) and dates stay strings.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML; the message names the line ("... at line 2, column 14")."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(YAML text or None, body). Frontmatter must open the file with ``---`` and close with ``\\n---``.

    With frontmatter the body is trimmed; without it the normalised text is returned unchanged.
    """
    normalized = text.replace("\r\n", "\n").replace("\r", "\n")
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    return normalized[4:end], normalized[end + 4 :].strip()


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:  # open: YAML front matter, JSON-like
    """(frontmatter mapping, body). A frontmatter that is not a mapping counts as empty."""
    yaml_text, body = split_frontmatter(text)
    if not yaml_text:
        return {}, body
    import yaml

    try:
        data = yaml.load(yaml_text, Loader=_loader())  # a SafeLoader subclass
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else " at line ?"
        raise FrontmatterError(f"{problem}{where}") from err
    except yaml.YAMLError as err:
        raise FrontmatterError(f"{err} at line ?") from err
    return (data if isinstance(data, dict) else {}), body


def strip_frontmatter(text: str) -> str:
    return parse_frontmatter(text)[1]


@cache
def _loader() -> type:
    import yaml

    class Yaml12Loader(yaml.SafeLoader):
        pass

    resolvers: dict[str | None, list[tuple[str, Any]]] = {}
    for first, entries in yaml.SafeLoader.yaml_implicit_resolvers.items():
        kept = [(tag, rx) for tag, rx in entries
                if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
        if kept:
            resolvers[first] = kept
    Yaml12Loader.yaml_implicit_resolvers = resolvers
    Yaml12Loader.add_implicit_resolver(
        "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
    return Yaml12Loader
