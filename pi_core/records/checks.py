"""Validators compiled from annotations, and each record class's compiled form (``_Spec``, built on the
class's first use): fields in order, aliases, validators, private attributes, ``before`` hooks."""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, TypeVar

from pi_core.records.errors import _Fail, _fail
from pi_core.records.fields import MISSING, FieldInfo, _Private, to_camel

# Record classes are typed ``type[Any]`` here: the base class (pi_core.records.Record) builds on this module.
Recordtype = type[Any]
R = TypeVar("R")


Check = Callable[[Any], Any]
_NONE = type(None)
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            _fail("string_unicode", "Input should be a valid string, unable to parse raw data as a unicode string",
                  value)
    _fail("string_type", "Input should be a valid string", value)


def _int(value: Any) -> Any:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            _fail("finite_number", "Input should be a finite number", value)
        if value.is_integer():
            return int(value)
        _fail("int_from_float", "Input should be a valid integer, got a number with a fractional part", value)
    if isinstance(value, str):
        # pydantic's strings: ASCII digits (underscores between them), "12.000" but not "12.", "1e3" or ".0"
        text = value.strip()
        head, dot, tail = text.partition(".")
        if text.isascii() and (not dot or (tail and not tail.strip("0"))):
            try:
                return int(head)
            except ValueError:
                pass
        _fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)
    _fail("int_type", "Input should be a valid integer", value)


def _float(value: Any) -> Any:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            if value.isascii():
                return float(value.strip())
        except ValueError:
            pass
        _fail("float_parsing", "Input should be a valid number, unable to parse string as a number", value)
    _fail("float_type", "Input should be a valid number", value)


def _bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:  # no surrounding blanks, as pydantic
        return value.lower() in _TRUE
    if isinstance(value, (int, float, str)):
        _fail("bool_parsing", "Input should be a valid boolean, unable to interpret input", value)
    _fail("bool_type", "Input should be a valid boolean", value)


def _none(value: Any) -> Any:
    if value is not None:
        _fail("none_required", "Input should be None", value)
    return None


def _or_list(values: list[str]) -> str:
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


_SCALARS: dict[Any, tuple[Check, tuple[type, ...]]] = {
    str: (_str, (str,)), int: (_int, (int,)), float: (_float, (float,)), bool: (_bool, (bool,)),
    _NONE: (_none, (_NONE,)), None: (_none, (_NONE,)),
}


class _Compiled:
    """A validator for one annotation: ``check`` (None: accept anything as is) and the ``exact`` types
    whose values need no check at all (a fast path taken before calling it)."""

    __slots__ = ("check", "exact", "label")

    def __init__(self, check: Check | None, exact: tuple[type, ...] | None, label: str) -> None:
        self.check = check
        self.exact = exact
        self.label = label


def _compile(annotation: Any, discriminator: str | None = None) -> _Compiled:
    if annotation is Any or annotation is object:
        return _Compiled(None, None, "any")
    if annotation in _SCALARS:
        check, exact = _SCALARS[annotation]
        return _Compiled(check, exact, getattr(annotation, "__name__", "none"))
    if isinstance(annotation, type) and hasattr(annotation, "_records_declared"):  # a Record class
        return _model_check(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        found = next((a.discriminator for a in args[1:] if isinstance(a, FieldInfo) and a.discriminator), None)
        return _compile(args[0], found or discriminator)
    if origin is Literal:
        return _literal_check(args)
    if origin in (typing.Union, types.UnionType):
        return _union_check(list(args), discriminator)
    if origin is list:
        return _list_check(_compile(args[0]) if args else _compile(Any))
    if origin is dict:
        key, value = (_compile(args[0]), _compile(args[1])) if args else (_compile(Any), _compile(Any))
        return _dict_check(key, value)
    raise TypeError(f"pi_core.records cannot validate {annotation!r}")


def _model_check(model: Recordtype) -> _Compiled:
    message = f"Input should be a valid dictionary or instance of {model.__name__}"

    def check(value: Any) -> Any:
        if isinstance(value, model):
            return value
        if type(value) is dict or isinstance(value, Mapping):
            return _build(model, value)
        _fail("model_type", message, value)

    return _Compiled(check, (model,), model.__name__)


def _literal_check(values: tuple[Any, ...]) -> _Compiled:
    allowed = frozenset(values)
    message = f"Input should be {_or_list([repr(v) for v in values])}"

    def check(value: Any) -> Any:
        try:
            if value in allowed and type(value) in (str, int, bool, _NONE):
                return value
        except TypeError:
            pass
        _fail("literal_error", message, value)

    return _Compiled(check, None, f"literal[{','.join(repr(v) for v in values)}]")


def _list_check(item: _Compiled) -> _Compiled:
    item_check, item_exact = item.check, item.exact

    def check(value: Any) -> Any:
        if not isinstance(value, list):
            if isinstance(value, (tuple, set, frozenset)):
                value = list(value)
            else:
                _fail("list_type", "Input should be a valid list", value)
        if item_check is None:
            return list(value)
        out = []
        errors: list[dict[str, Any]] = []
        for index, element in enumerate(value):
            if item_exact is not None and type(element) in item_exact:
                out.append(element)
                continue
            try:
                out.append(item_check(element))
            except _Fail as failed:
                errors += failed.under(index)
        if errors:
            raise _Fail(errors)
        return out

    return _Compiled(check, None, f"list[{item.label}]")


def _dict_check(key: _Compiled, value_: _Compiled) -> _Compiled:
    key_check, key_exact, value_check, value_exact = key.check, key.exact, value_.check, value_.exact

    def check(value: Any) -> Any:
        if type(value) is not dict and not isinstance(value, Mapping):
            _fail("dict_type", "Input should be a valid dictionary", value)
        if key_check is None and value_check is None:
            return dict(value)
        out = {}
        errors: list[dict[str, Any]] = []
        for k, v in value.items():
            try:
                if key_check is not None and (key_exact is None or type(k) not in key_exact):
                    k = key_check(k)
            except _Fail as failed:
                errors += failed.under(k, "[key]")
                continue
            try:
                if value_check is not None and (value_exact is None or type(v) not in value_exact):
                    v = value_check(v)
            except _Fail as failed:
                errors += failed.under(k)
                continue
            out[k] = v
        if errors:
            raise _Fail(errors)
        return out

    return _Compiled(check, None, f"dict[{key.label},{value_.label}]")


def _union_check(members: list[Any], discriminator: str | None) -> _Compiled:
    nullable = _NONE in members or None in members
    members = [m for m in members if m is not _NONE and m is not None]
    if len(members) == 1:
        inner = _compile(members[0], discriminator)
    elif discriminator is not None:
        inner = _tagged_check(members, discriminator)
    else:
        inner = _smart_check([_compile(m) for m in members])
    if not nullable:
        return inner
    inner_check = inner.check
    exact = None if inner.exact is None else (*inner.exact, _NONE)

    def check(value: Any) -> Any:
        if value is None or inner_check is None:
            return value
        return inner_check(value)

    return _Compiled(check, exact, f"nullable[{inner.label}]")


def _tagged_check(members: list[Any], key: str) -> _Compiled:
    by_tag: dict[Any, Recordtype] = {}
    for member in members:
        spec = _spec(member)
        tag = next(f.default for f in spec.fields if f.name == key)
        by_tag[tag] = member
    classes = tuple(by_tag.values())
    expected = ", ".join(repr(t) for t in by_tag)

    def check(value: Any) -> Any:
        if isinstance(value, classes):
            return value
        if type(value) is not dict and not isinstance(value, Mapping):
            _fail("model_attributes_type", "Input should be a valid dictionary or object to extract fields from", value)
        if key not in value:
            _fail("union_tag_not_found", f"Unable to extract tag using discriminator '{key}'", value)
        tag = value[key]
        try:
            member = by_tag.get(tag)
        except TypeError:
            member = None
        if member is None:
            _fail("union_tag_invalid", f"Input tag '{tag}' found using '{key}' does not match any of the expected "
                                       f"tags: {expected}", value)
        try:
            return _build(member, value)
        except _Fail as failed:
            raise _Fail(failed.under(tag)) from None

    label = f"tagged-union[{','.join(c.__name__ for c in classes)}]"
    return _Compiled(check, classes, label)


def _smart_check(members: list[_Compiled]) -> _Compiled:
    """pydantic's smart union, as far as these annotations need it: a value whose type a member takes
    as is wins; otherwise the first member that converts it."""
    exact_types = tuple(t for m in members if m.exact is not None for t in m.exact)
    if any(m.check is None for m in members):
        return _Compiled(None, None, "any")

    def check(value: Any) -> Any:
        errors: list[dict[str, Any]] = []
        for member in members:
            try:
                return member.check(value)  # type: ignore[misc]
            except _Fail as failed:
                errors += failed.under(member.label)
        raise _Fail(errors)

    return _Compiled(check, exact_types or None, f"union[{','.join(m.label for m in members)}]")


class _Spec:
    """A record class, compiled on first use: fields in order, aliases, validators, private attributes."""

    __slots__ = ("alias_of", "before", "by_alias", "field_names", "fields", "floats", "keys", "private", "rows",
                 "title")

    def __init__(self, cls: Recordtype) -> None:
        hints = typing.get_type_hints(cls, include_extras=True)
        declared: dict[str, Any] = {}
        private: dict[str, _Private] = {}
        before: list[Callable[[Any], Any]] = []
        for klass in reversed(cls.__mro__):
            declared.update(klass.__dict__.get("_records_declared", {}))
            private.update(klass.__dict__.get("_records_private", {}))
            before += [getattr(cls, name) for name in klass.__dict__.get("_records_before", ())]
        self.title = cls.__name__
        self.fields: list[FieldInfo] = []
        self.rows: list[tuple[str, str, tuple[type, ...] | None, Check | None, Any, Callable[[], Any] | None]] = []
        self.floats: set[str] = set()
        for name, hint in hints.items():
            if name.startswith("_") or typing.get_origin(hint) is ClassVar:
                continue
            given = declared.get(name, MISSING)
            info = given if isinstance(given, FieldInfo) else FieldInfo(given)
            info.name, info.alias, info.annotation = name, to_camel(name), hint
            compiled = _compile(hint, info.discriminator)
            self.fields.append(info)
            self.rows.append((name, info.alias, compiled.exact, compiled.check, info.default, info.default_factory))
            if hint is float:
                self.floats.add(name)
        self.field_names = frozenset(f.name for f in self.fields)
        self.alias_of = {f.name: f.alias for f in self.fields if f.alias != f.name}
        self.by_alias = frozenset(self.alias_of.values())
        self.keys = self.field_names | self.by_alias
        self.private = private
        self.before = before


def _spec(cls: Recordtype) -> _Spec:
    spec = cls.__dict__.get("_records_spec")
    if spec is None:
        spec = _Spec(cls)
        cls._records_spec = spec
    return spec


def _build(cls: type[R], data: Mapping[str, Any]) -> R:
    """A validated instance of ``cls`` from ``data`` (aliases or field names); raises _Fail."""
    record = cls.__new__(cls)
    record.__dict__ = _values(cls, data)
    return record


def _values(cls: Recordtype, data: Mapping[str, Any]) -> dict[str, Any]:
    spec = cls.__dict__.get("_records_spec") or _spec(cls)
    for hook in spec.before:
        data = hook(data)
    values: dict[str, Any] = {}
    errors: list[dict[str, Any]] | None = None
    used = 0
    get = data.get  # one lookup per field: this loop runs for every model of the catalog at each start
    for name, alias, exact, check, default, factory in spec.rows:
        key = alias
        value = get(alias, MISSING)
        if value is MISSING and name != alias:
            key = name
            value = get(name, MISSING)
        if value is MISSING:
            if factory is not None:
                values[name] = factory()
            elif default is not MISSING:
                values[name] = default
            else:
                errors = errors or []
                errors.append({"type": "missing", "loc": (alias,), "msg": "Field required", "input": data})
            continue
        used += 1
        if check is not None and (exact is None or type(value) not in exact):
            try:
                value = check(value)
            except _Fail as failed:
                errors = errors or []
                errors += failed.under(key)
                continue
        values[name] = value
    if errors:
        raise _Fail(errors)
    if used < len(data):
        _add_extras(spec, data, values)
    for name, attr in spec.private.items():
        values[name] = attr.make()
    return values


def _add_extras(spec: _Spec, data: Mapping[str, Any], values: dict[str, Any]) -> None:
    """Unknown keys are kept, after the fields, in their order. (A field's Python name given next to its
    alias is dropped: the alias wins; pydantic would keep it as an unknown key shadowed by the field.)"""
    keys = spec.keys
    for key, value in data.items():
        if key not in keys:
            values[key] = value
