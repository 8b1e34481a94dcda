"""Check a JSON request body against a vendor SDK's own request ``TypedDict`` (the SDK as an oracle).

``problems(body, MessageCreateParamsStreaming)`` walks the body and the SDK's type hints together and
lists every key the SDK does not know, every required key missing, and every value of the wrong type
or literal, each with its path (``messages[1].content[0].type``). A union passes when one member does.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

_NOT_REQUIRED = {typing.NotRequired}
_REQUIRED = {typing.Required}


def problems(value: Any, hint: Any, path: str = "$") -> list[str]:
    hint = _strip(hint)
    origin = get_origin(hint)
    if hint is Any or hint is object:
        return []
    if _is_typeddict(hint):
        return _typeddict(value, hint, path)
    if origin in (Union, types.UnionType):
        results = [problems(value, member, path) for member in get_args(hint)]
        if any(not found for found in results):
            return []
        return min(results, key=len)
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{path}: {value!r} is not one of {get_args(hint)}"]
    if hint is type(None):
        return [] if value is None else [f"{path}: expected null, got {type(value).__name__}"]
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {type(value).__name__}"]
        args = get_args(hint)
        return [p for key, item in value.items() for p in (problems(item, args[1], f"{path}.{key}") if args else [])]
    if origin in (list, Iterable, Sequence, tuple) or hint in (list, Iterable, Sequence):
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {type(value).__name__}"]
        args = get_args(hint)
        return [p for i, item in enumerate(value) for p in (problems(item, args[0], f"{path}[{i}]") if args else [])]
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number, got {value!r}"]
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer, got {value!r}"]
    if hint in (str, bool):
        return [] if isinstance(value, hint) else [f"{path}: expected {hint.__name__}, got {value!r}"]
    if isinstance(hint, type):
        return [] if isinstance(value, hint) else [f"{path}: expected {hint.__name__}, got {type(value).__name__}"]
    return []  # a construct the checker does not model (e.g. a TypeVar): accept


def _strip(hint: Any) -> Any:
    while True:
        origin = get_origin(hint)
        if origin is typing.Annotated or origin in _NOT_REQUIRED or origin in _REQUIRED:
            hint = get_args(hint)[0]
        else:
            return hint


def _is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


@functools.cache
def _hints(hint: Any) -> dict[str, Any]:
    return get_type_hints(hint, include_extras=True)


def _typeddict(value: Any, hint: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({hint.__name__}), got {type(value).__name__}"]
    fields = _hints(hint)
    found = [f"{path}.{key}: not a field of {hint.__name__}" for key in value if key not in fields]
    found += [f"{path}.{key}: required by {hint.__name__}" for key in hint.__required_keys__ if key not in value]
    for key, item in value.items():
        if key in fields:
            found += problems(item, fields[key], f"{path}.{key}")
    return found
