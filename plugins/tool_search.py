"""tool_search: find tools that are not declared to the model (``deferred`` exposure, such as MCP tools) and
declare the matches from the next model call."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, NotRequired, TypedDict

from pi_core import Tool, ToolContext, ToolError, hookimpl
from pi_core.tools import ToolResult

NAME = "tool_search"
DEFAULT_LIMIT = 8
STOP_WORDS = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "with"])
NAME_WEIGHT = 3.0  # a query word in the name outweighs any number of mentions in the description
K1, B = 1.2, 0.75


# A JSON Schema rather than a pydantic model: this plugin loads on every start, pydantic costs 0.15 s to import.
PARAMETERS: dict[str, Any] = {
    "properties": {
        "query": {"description": "Search query for deferred tools.", "type": "string"},
        "limit": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None,
                  "description": f"Maximum number of tools to return. Defaults to {DEFAULT_LIMIT}."},
    },
    "required": ["query"],
    "type": "object",
}


class ToolSearchArgs(TypedDict):
    query: str
    limit: NotRequired[float | None]


DESCRIPTION = (
    "# Tool discovery\n\nSearches over deferred tool metadata with BM25 and exposes matching tools for the next model "
    "call.\n\nSome of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you "
    f"should use this tool (`{NAME}`) to search for the required tools. For MCP tool discovery, always use "
    f"`{NAME}`."
)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and re.search(r"(ches|shes|sses|xes|zes)$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case words split at identifier boundaries (camelCase, snake_case), without stop words."""
    import unicodedata  # a search only (a print run without one does not load it)

    text = unicodedata.normalize("NFC", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text).lower()
    found = [w for w in re.split(r"[\W_]+", text) if w and w not in STOP_WORDS]
    return [_singular(w) if w.isascii() and w.isalnum() else w for w in found]


def _schema_text(schema: Any, parts: list[str], depth: int = 0) -> None:
    if not isinstance(schema, dict) or depth > 8:
        return
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    for name, sub in (schema.get("properties") or {}).items():
        parts.append(name)
        _schema_text(sub, parts, depth + 1)
    _schema_text(schema.get("items"), parts, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            _schema_text(sub, parts, depth + 1)
    for sub in (schema.get("$defs") or {}).values():
        _schema_text(sub, parts, depth + 1)


def rank(query: str, tools: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """BM25 over description and parameter texts, with the tool name as a separate, heavier field. A tool
    matching more query words ranks first; a query that is exactly a tool's (local) name puts it on top."""
    terms = set(words(query))
    if not terms or not tools or limit <= 0:
        return []
    docs = []
    for tool in tools:
        parts = [tool.get("description") or ""]
        _schema_text(tool.get("parameters"), parts)
        counts: dict[str, int] = {}
        for word in words(" ".join(parts)):
            counts[word] = counts.get(word, 0) + 1
        local = tool["name"].split("__")[-1]
        docs.append((tool, set(words(tool["name"])), set(words(local)), counts, sum(counts.values())))
    average = sum(d[4] for d in docs) / len(docs) or 1.0
    idf = {t: math.log(1 + (len(docs) - (n := sum(1 for d in docs if t in d[1] or t in d[3])) + 0.5) / (n + 0.5))
           for t in terms}
    exact = re.sub(r"[^a-z0-9_$]", "_", query.strip().lower())
    scored = []
    for order, (tool, name_terms, local_terms, counts, length) in enumerate(docs):
        norm = K1 * (1 - B + B * length / average)
        score, covered = 0.0, 0
        for term in terms:
            count = counts.get(term, 0)
            weight = (NAME_WEIGHT if term in name_terms else 0.0) + count * (K1 + 1) / (count + norm)
            covered += weight > 0
            score += idf[term] * weight
        if score == 0:
            continue
        if local_terms and local_terms <= terms:
            score += sum(idf.values())
        name = re.sub(r"[^a-z0-9_$]", "_", tool["name"].lower())
        is_exact = name == exact or name.endswith(f"__{exact}")
        scored.append((not is_exact, -covered, -score, order, tool))
    scored.sort(key=lambda entry: entry[:4])
    return [entry[4] for entry in scored[:limit]]


def execute(args: ToolSearchArgs, ctx: ToolContext) -> ToolResult:
    query = args["query"]
    if not query.strip():
        raise ToolError("query must not be empty")
    given = args.get("limit")
    limit = DEFAULT_LIMIT if given is None else given
    if limit != int(limit) or limit <= 0:
        raise ToolError("limit must be a positive integer")
    pi = ctx.pi
    matches: list[dict[str, Any]] = []
    if pi is not None:
        active = pi.get_active_tools()
        candidates = [{"name": t.name, "description": t.description, "parameters": t.json_schema}
                      for t in pi.get_all_tools() if t.exposure == "deferred" and t.name not in active]
        matches = rank(query, candidates, int(limit))
        if matches:
            pi.set_active_tools([*active, *(m["name"] for m in matches)])
    loaded = [m["name"] for m in matches]
    if not matches:
        text = "No matching tools found."
    else:
        lines = [f"- {m['name']}: {(m.get('description') or '').strip().splitlines()[0] if m.get('description') else ''}"
                 for m in matches]
        text = (f"Loaded {len(matches)} tool{'s' if len(matches) != 1 else ''}. They are available from your next "
                "call:\n" + "\n".join(lines))
    return ToolResult.text(text, details={"loaded": loaded})


TOOL = Tool(
    name=NAME,
    label=NAME,
    description=DESCRIPTION,
    parameters=PARAMETERS,
    execute=execute,
    prompt_snippet="Search for tools that are not loaded yet and load the matches",
    active_by_default=False,
    reaches_tools=True,
)


def loaded_tools(messages: Iterable[Any]) -> list[str]:
    """Tools that tool_search loaded on this branch (their names, oldest first), from its results' details."""
    names: list[str] = []
    for message in messages:
        if getattr(message, "role", None) != "toolResult" or getattr(message, "tool_name", None) != NAME:
            continue
        details = getattr(message, "details", None)
        if isinstance(details, dict):
            names.extend(n for n in details.get("loaded") or [] if isinstance(n, str) and n not in names)
    return names


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]


@hookimpl
def pi_before_agent_start(ctx: Any, prompt: str, system_prompt: str) -> None:
    """Loaded tools stay declared on their branch, also after a resume (once their server is back)."""
    loaded = loaded_tools(ctx.get_messages())
    if not loaded:
        return
    active = ctx.get_active_tools()
    available = {t.name for t in ctx.get_all_tools()}
    missing = [n for n in loaded if n in available and n not in active]
    if missing:
        ctx.set_active_tools([*active, *missing])
