"""Tools as TypeScript declarations, the way codemode shows them to the model (in its description, through
``describeTool()`` and ``ALL_TOOLS``): each tool's description, then ``declare const tools: { name(args: {...}):
Promise<...>; };`` built from its JSON Schema, property descriptions and constraints as comments."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

INDENT = "  "
INPUT_MAX_CHARS = 16000
MAX_REF_EXPANSIONS = 32
MAX_TAG_CHARS = 80
TAG_KEYWORDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
                "pattern", "format", "minItems", "maxItems")
LOWER_BOUNDS = frozenset(["minimum", "exclusiveMinimum", "minLength", "minItems"])
UPPER_BOUNDS = frozenset(["maximum", "exclusiveMaximum", "maxLength", "maxItems"])
IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
LINE_TERMINATORS = re.compile("[\r\n\u2028\u2029]")
TEXT_OUTPUT: dict[str, Any] = {"type": "string"}


def js_identifier(name: str) -> str:
    """A tool name as a JavaScript identifier: each character that cannot stand there becomes ``_``."""
    out = ""
    for char in name:
        valid = re.match(r"[A-Za-z_$]" if out == "" else r"[A-Za-z0-9_$]", char) is not None and char.isascii()
        out += char if valid else "_"
    return out or "_"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _union(types: list[str]) -> str:
    unique = list(dict.fromkeys(types))
    if "unknown" in unique:
        return "unknown"
    return " | ".join(unique) if unique else "never"


@dataclass
class _Walk:
    root: Any
    tags: bool
    resolving: set[str] = field(default_factory=set)
    expansions: int = 0


def _resolve_ref(ref: str, root: Any) -> Any:
    if ref != "#" and not ref.startswith("#/"):
        return None
    current = root
    for segment in (s for s in ref[2:].split("/") if s):
        key = unquote(segment).replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current if isinstance(current, (bool, dict)) else None


def _type(schema: Any, walk: _Walk) -> str:
    if schema is True:
        return "unknown"
    if schema is False:
        return "never"
    if not isinstance(schema, dict):
        return "unknown"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref in walk.resolving or walk.expansions >= MAX_REF_EXPANSIONS:
            return "unknown"
        target = _resolve_ref(ref, walk.root)
        if target is None:
            return "unknown"
        walk.expansions += 1
        walk.resolving.add(ref)
        try:
            return _type(target, walk)
        finally:
            walk.resolving.discard(ref)
    if "const" in schema:
        return _json(schema["const"])
    if isinstance(schema.get("enum"), list):
        return _union([_json(v) for v in schema["enum"]])
    variants = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else schema.get("oneOf")
    if isinstance(variants, list):
        return _union([_type(v, walk) for v in variants])
    if isinstance(schema.get("allOf"), list):
        parts = [p for p in (_type(part, walk) for part in schema["allOf"]) if p != "unknown"]
        return " & ".join(f"({p})" if " | " in p else p for p in parts) if parts else "unknown"
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_type({**schema, "type": k}, walk) for k in kind])
    if kind == "string":
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind in ("boolean", "null"):
        return str(kind)
    if kind == "array":
        return _array(schema, walk)
    if kind == "object":
        return _object(schema, walk)
    if kind is None:
        if any(k in schema for k in ("properties", "additionalProperties", "required")):
            return _object(schema, walk)
        if "items" in schema or "prefixItems" in schema:
            return _array(schema, walk)
    return "unknown"


def _array(schema: dict[str, Any], walk: _Walk) -> str:
    items = schema.get("items")
    if items is not None and not isinstance(items, list):
        return f"Array<{_type(items, walk)}>"
    tuple_items = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else items or []
    return f"[{', '.join(_type(i, walk) for i in tuple_items)}]" if tuple_items else "unknown[]"


def _tags(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    variants = schema.get("anyOf") if isinstance(schema.get("anyOf"), list) else schema.get("oneOf")
    non_null = [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")] if isinstance(
        variants, list) else []
    schemas = [schema, non_null[0]] if len(non_null) == 1 and isinstance(non_null[0], dict) else [schema]
    fixed = []
    for s in schemas:  # draft-4 boolean exclusive bounds
        s = dict(s)
        if s.get("exclusiveMinimum") is True:
            s["exclusiveMinimum"], s["minimum"] = s.get("minimum"), None
        if s.get("exclusiveMaximum") is True:
            s["exclusiveMaximum"], s["maximum"] = s.get("maximum"), None
        fixed.append(s)
    tags = []
    if any(s.get("type") == "integer" or (isinstance(s.get("type"), list) and "integer" in s["type"]) for s in fixed):
        tags.append("@integer")
    for keyword in TAG_KEYWORDS:
        values = [s.get(keyword) for s in fixed]
        if keyword in LOWER_BOUNDS or keyword in UPPER_BOUNDS:
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if numbers:
                bound = max(numbers) if keyword in LOWER_BOUNDS else min(numbers)
                tags.append(f"@{keyword} {_js_number(bound)}")
            continue
        for value in dict.fromkeys(v for v in values if isinstance(v, (int, float, str)) and not isinstance(v, bool)):
            tags.append(f"@{keyword} {_js_number(value) if not isinstance(value, str) else value}")
    if any(s.get("uniqueItems") is True for s in fixed):
        tags.append("@uniqueItems")
    if schema.get("default") is not None:
        tags.append(f"@default {_json(schema['default'])}")
    if schema.get("deprecated") is True:
        tags.append("@deprecated")
    return " ".join(LINE_TERMINATORS.sub(lambda m: f"\\u{ord(m.group()):04x}", t) for t in tags
                    if len(t) <= MAX_TAG_CHARS)


def _js_number(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _object(schema: dict[str, Any], walk: _Walk) -> str:
    raw = schema.get("properties")
    properties: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    names = sorted(properties)
    members = [f"{n if IDENTIFIER.match(n) else _json(n)}{'' if n in required else '?'}: {_type(properties[n], walk)};"
               for n in names]
    additional = schema.get("additionalProperties")
    if additional is not None and additional is not False:
        members.append(f"[key: string]: {'unknown' if additional is True else _type(additional, walk)};")
    elif additional is None and not names:
        members.append("[key: string]: unknown;")
    if not members:
        return "{}"
    comments = []
    for name in names:
        description = properties[name].get("description") if isinstance(properties[name], dict) else None
        lines = [ln.strip() for ln in LINE_TERMINATORS.split(description.strip())] if isinstance(description, str) else []
        lines = [ln for ln in lines if ln]
        tags = _tags(properties[name]) if walk.tags else ""
        comments.append([*lines, tags] if tags else lines)
    if not any(comments):
        return "{ " + " ".join(members) + " }"
    out = ["{"]
    for comment, member in zip(comments, members, strict=False):
        out.extend(f"{INDENT}// {line}" for line in comment)
        out.append(INDENT + member.replace("\n", "\n" + INDENT))
    out.extend(INDENT + member for member in members[len(names):])
    out.append("}")
    return "\n".join(out)


def schema_type(schema: Any, max_chars: int | None = None) -> str:
    """The TypeScript type of a JSON Schema; past ``max_chars`` without the tag comments, then ``unknown``."""
    typed = _type(schema, _Walk(schema, tags=True))
    if max_chars is None or len(typed) <= max_chars:
        return typed
    plain = _type(schema, _Walk(schema, tags=False))
    return plain if len(plain) <= max_chars else "unknown"


@dataclass(frozen=True)
class Declaration:
    name: str
    description: str
    input_schema: Any
    output_schema: Any = None

    def signature(self) -> str:
        args = "unknown" if self.input_schema is None else schema_type(self.input_schema, INPUT_MAX_CHARS)
        output = "unknown" if self.output_schema is None else schema_type(self.output_schema)
        return f"{js_identifier(self.name)}(args: {args}): Promise<{output}>;"

    def sample(self) -> str:
        """The description and the declaration, as ``describeTool()`` resolves and ``ALL_TOOLS`` lists them."""
        return (f"{self.description.strip()}\n\ncodemode tool declaration:\n```ts\n"
                f"declare const tools: {{ {self.signature()} }};\n```")

    def section(self) -> str:
        """The tool's entry in the codemode description."""
        ident = js_identifier(self.name)
        title = f"### `{ident}`" if ident == self.name else f"### `{ident}` (`{self.name}`)"
        return f"{title}\n{self.sample().strip()}"
