"""JSON Schemas as the TypeScript types scripts are shown (``pi_plugins.codemode.declarations``)."""

from __future__ import annotations

from pi_plugins.codemode.declarations import Declaration, js_identifier, schema_type


def test_identifiers() -> None:
    assert js_identifier("mcp__dev-radius__search") == "mcp__dev_radius__search"
    assert js_identifier("1tool") == "_tool"
    assert js_identifier("") == "_"


def test_schema_forms() -> None:
    assert schema_type({"enum": ["a", 1]}) == '"a" | 1'
    assert schema_type({"anyOf": [{"type": "string"}, {"type": "null"}]}) == "string | null"
    assert schema_type({"type": ["string", "number"]}) == "string | number"
    assert schema_type({"type": "array", "items": {"type": "integer"}}) == "Array<number>"
    assert schema_type({"type": "array", "prefixItems": [{"type": "string"}, {"const": True}]}) == "[string, true]"
    assert schema_type({"type": "object"}) == "{ [key: string]: unknown; }"
    assert schema_type({"type": "object", "properties": {"a-b": {"type": "string"}}, "additionalProperties": False}) \
        == '{ "a-b"?: string; }'
    assert schema_type({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                                  {"anyOf": [{"type": "string"}, {"type": "number"}]}]}) == "{ a: string; } & (string | number)"


def test_refs_resolve_and_cycles_stop() -> None:
    schema = {"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}},
                                 "additionalProperties": False}},
              "$ref": "#/$defs/node"}
    assert schema_type(schema) == "{ next?: unknown; }"


def test_descriptions_and_constraints_become_comments() -> None:
    schema = {"type": "object", "required": ["n"], "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "How many\nof them"}}}
    assert schema_type(schema) == ("{\n  // How many\n  // of them\n  // @integer @minimum 1 @maximum 10 @default 3\n"
                                   "  n: number;\n}")
    declaration = Declaration("my-tool", " Does things. ", schema, {"type": "string"})
    assert declaration.sample() == (
        "Does things.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { my_tool(args: {\n  // How many\n"
        "  // of them\n  // @integer @minimum 1 @maximum 10 @default 3\n  n: number;\n}): Promise<string>; };\n```")
    assert declaration.section().startswith("### `my_tool` (`my-tool`)\nDoes things.")
