"""Tool-argument validation: Pi's coercions, then jsonschema, then Pi's exact failure text
(docs/loop.md#argument-validation). The agent loop reaches it through ``pi_core.toolkit.arguments``."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_core.errors import ValidationError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from pi_core.tools import Tool
    from pi_core.types import ToolCall

_validators: dict[str, Validator] = {}
_by_identity: dict[int, tuple[dict[str, Any], Validator]] = {}  # fast path: the same schema object again

_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _validator_for(schema: dict[str, Any]) -> Validator:
    known = _by_identity.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    key = json.dumps(schema, sort_keys=True)
    validator = _validators.get(key)
    if validator is None:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = cls(schema)
        _validators[key] = validator
    _by_identity[id(schema)] = (schema, validator)
    return validator


def check_call(tool: Tool, call: ToolCall) -> dict[str, Any]:  # open: the model's tool arguments, JSON
    """The arguments to run ``call`` with: NaN/Infinity refused, ``tool.prepare_arguments`` applied, then
    ``validate_tool_arguments``."""
    if call.non_finite:
        raise non_finite_error(tool, call.non_finite, call.arguments)
    raw = tool.prepare_arguments(call.arguments) if tool.prepare_arguments is not None else call.arguments
    return validate_tool_arguments(tool, raw)


def validate_tool_arguments(tool: Tool, arguments: Any) -> dict[str, Any]:  # open: the model's tool arguments, JSON
    """Coerce and validate ``arguments`` for ``tool``; return the converted copy or raise ValidationError."""
    schema = tool.json_schema
    value = _coerce(copy.deepcopy(arguments), schema, tool.coercion, top=True)
    validator = _validator_for(schema)
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return value  # type: ignore[no-any-return]  # validated: a JSON object by the schema's own rule
    # jsonschema reports `required` once per missing name, and Pi's one line names them all: each line once
    lines = list(dict.fromkeys(line for error in errors for line in _describe(error)))
    raise _failure(tool, lines, arguments)


def non_finite_error(tool: Tool, non_finite: dict[str, str], arguments: Any) -> ValidationError:  # open: the model's tool arguments, JSON
    """The validation error for NaN/±Infinity the model sent (``{"offset": "NaN"}``); ``arguments`` hold
    null there (docs/loop.md#argument-validation)."""
    lines = [f"  - {path}: must be number ({token} is not a number JSON allows)" for path, token in non_finite.items()]
    shown = copy.deepcopy(arguments)
    for path, token in non_finite.items():
        *parents, last = path.split(".")
        holder = shown
        try:
            for part in parents:
                holder = holder[int(part)] if isinstance(holder, list) else holder[part]
            holder[int(last) if isinstance(holder, list) else last] = float(token)
        except (KeyError, IndexError, TypeError, ValueError):
            continue  # a key with a dot in it: the line above still names the path
    return _failure(tool, lines, shown)  # json.dumps prints NaN/Infinity as the model did


def tool_args(tool: Tool, validated: dict[str, Any]) -> Any:  # open: the tool's arguments: JSON in, a pydantic model or JSON out
    """``tool.build_args``; arguments the schema accepted but the tool's pydantic model refused (its own
    validators) raise Pi's text, with pydantic's wording for each problem."""
    from pydantic import ValidationError as PydanticError

    try:
        return tool.build_args(validated)
    except PydanticError as err:
        lines = [f"  - {_path(problem['loc'])}: {problem['msg']}" for problem in err.errors(include_url=False)]
        raise _failure(tool, lines, validated) from None


def _failure(tool: Tool, lines: list[str], arguments: Any) -> ValidationError:
    """Pi's text: the problems, one a line, then the arguments as received."""
    received = json.dumps(arguments, indent=2, ensure_ascii=False)
    return ValidationError(
        f'Validation failed for tool "{tool.name}":\n' + "\n".join(lines) + f"\n\nReceived arguments:\n{received}")


def _path(parts: Any) -> str:
    joined = ".".join(str(p) for p in parts)
    return joined or "root"


def _describe(error: Any) -> list[str]:
    """Pi's (TypeBox) wording for one jsonschema error; may yield several lines."""
    where = list(error.absolute_path)
    kind = error.validator
    if kind == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        return [f"  - {_path(where + missing[:1])}: must have required properties {', '.join(missing)}"]
    if kind == "additionalProperties" and error.validator_value is False:
        allowed = set(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in allowed]
        lines = [f"  - {_path(where + [k])}: schema is false" for k in extras]
        return lines + [f"  - {_path(where)}: must not have additional properties"]
    if kind == "type":
        wanted = error.validator_value
        wanted = wanted if isinstance(wanted, str) else ",".join(wanted)
        return [f"  - {_path(where)}: must be {wanted}"]
    if kind is False or (kind == "false"):
        return [f"  - {_path(where)}: schema is false"]
    messages: dict[str, Callable[[], str]] = {
        "minimum": lambda: f"must be >= {error.validator_value}",
        "maximum": lambda: f"must be <= {error.validator_value}",
        "exclusiveMinimum": lambda: f"must be > {error.validator_value}",
        "exclusiveMaximum": lambda: f"must be < {error.validator_value}",
        "minLength": lambda: f"must NOT have fewer than {error.validator_value} characters",
        "maxLength": lambda: f"must NOT have more than {error.validator_value} characters",
        "minItems": lambda: f"must NOT have fewer than {error.validator_value} items",
        "maxItems": lambda: f"must NOT have more than {error.validator_value} items",
        "enum": lambda: "must be equal to one of the allowed values",
        "const": lambda: "must be equal to constant",
        "pattern": lambda: f'must match pattern "{error.validator_value}"',
        "anyOf": lambda: "must match a schema in anyOf",
        "oneOf": lambda: "must match exactly one schema in oneOf",
    }
    make = messages.get(kind)
    text = make() if make is not None else str(error.message)
    return [f"  - {_path(where)}: {text}"]


# --- coercion (docs/loop.md#argument-validation) ------------------------------------------------


def _coerce(value: Any, schema: Any, style: str, top: bool = False) -> Any:
    if not isinstance(schema, dict):
        return value
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return _coerce_union(value, schema[union], style)
    wanted = schema.get("type")
    if isinstance(wanted, list):
        if any(_TYPE_CHECKS.get(t, lambda v: False)(value) for t in wanted):
            return _coerce_children(value, schema, style)
        for t in wanted:
            converted = _coerce_scalar(value, t, style)
            if converted is not _NO:
                return converted
        return value
    if wanted == "object" and isinstance(value, dict):
        return _coerce_children(value, schema, style)
    if wanted == "array":
        if not isinstance(value, list):
            if style != "typebox" or value is None:
                return value
            value = [value]
        items = schema.get("items")
        return [_coerce(v, items, style) for v in value]
    if isinstance(wanted, str):
        converted = _coerce_scalar(value, wanted, style)
        return value if converted is _NO else converted
    return value


def _coerce_children(value: Any, schema: dict[str, Any], style: str) -> Any:
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    for name in list(value):
        sub = properties.get(name)
        if sub is None:
            continue
        # Null as omission: a null for an optional, non-nullable property means "not given".
        if value[name] is None and name not in required and not _allows_null(sub):
            del value[name]
            continue
        value[name] = _coerce(value[name], sub, style)
    return value


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return True
    wanted = schema.get("type")
    if wanted == "null" or (isinstance(wanted, list) and "null" in wanted):
        return True
    return any(_allows_null(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))


def _coerce_union(value: Any, members: list[Any], style: str) -> Any:
    for member in members:
        if not _validator_for(member).is_valid(value):
            continue
        return value
    for member in members:
        converted = _coerce(copy.deepcopy(value), member, style)
        if _validator_for(member).is_valid(converted):
            return converted
    return value


class _No:
    pass


_NO: Any = _No()


def _coerce_scalar(value: Any, wanted: str, style: str) -> Any:
    """Convert a primitive to ``wanted``; return _NO when this table has no rule for it."""
    check = _TYPE_CHECKS.get(wanted)
    if check is not None and check(value):
        return value
    if wanted in ("number", "integer"):
        if isinstance(value, bool):
            return int(value)
        if value is None:
            return 0
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                return _NO
            if not math.isfinite(number):
                return _NO
            if number.is_integer():
                return int(number)
            return _NO if wanted == "integer" else number
        return _NO
    if wanted == "string":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return _js_number(value)
        if value is None:
            return "null" if style == "typebox" else ""
        return _NO
    if wanted == "boolean":
        if value in ("true", "false"):
            return value == "true"
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
        if value is None and style != "typebox":
            return False
        return _NO
    if wanted == "null":
        if value == "" or (value == 0 and not isinstance(value, str)) or value is False:
            return None
        return _NO
    return _NO


def _js_number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
