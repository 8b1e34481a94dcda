"""Typed records with pydantic's model API, in plain Python: validated construction, camelCase aliases,
unknown keys kept, ``model_dump``/``model_dump_json``, ``model_validate(_json)``, ``model_copy``,
``model_fields`` and equality, with pydantic's lax conversions and error texts.

pi's wire types (pi_core.types) are built on every start and on every streamed delta. Importing pydantic
and building their schemas took ~0.19 s of a 0.7 s ``pi -p`` run; this module imports in about a
millisecond and builds each class's validators on its first use. It knows nothing about pi.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal[...]``,
``list[T]``, ``dict[K, V]``, unions (``X | Y``, ``X | None``), ``Annotated[X | Y, Field(discriminator=...)]``
and other ``Record`` classes.
"""

from __future__ import annotations

import inspect
import json
import math
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    NoReturn,
    Self,
    TypeVar,
    dataclass_transform,
)

__all__ = ["Field", "FieldInfo", "PrivateAttr", "Record", "ValidationError", "model_validator", "to_camel"]

R = TypeVar("R", bound="Record")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def to_camel(name: str) -> str:
    """``base_url`` -> ``baseUrl`` (pydantic's ``to_camel``)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] if part else "_" for part in rest)


class FieldInfo:
    """One declared field: what ``Model.model_fields[name]`` returns."""

    __slots__ = ("alias", "annotation", "default", "default_factory", "description", "discriminator", "name")

    def __init__(self, default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None,
                 discriminator: str | None = None, description: str | None = None) -> None:
        self.default = default
        self.default_factory = default_factory
        self.discriminator = discriminator
        self.description = description
        self.name = ""
        self.alias = ""
        self.annotation: Any = None

    def is_required(self) -> bool:
        return self.default is MISSING and self.default_factory is None

    def get_default(self, *, call_default_factory: bool = False) -> Any:
        if self.default_factory is not None:
            return self.default_factory() if call_default_factory else None
        return None if self.default is MISSING else self.default

    def __repr__(self) -> str:
        return f"FieldInfo(name={self.name!r}, alias={self.alias!r}, required={self.is_required()})"


def Field(default: Any = MISSING, *, default_factory: Callable[[], Any] | None = None,
          discriminator: str | None = None, description: str | None = None) -> Any:
    """A field's default (or ``default_factory``), a union's ``discriminator`` key, a description."""
    return FieldInfo(default, default_factory=default_factory, discriminator=discriminator, description=description)


class _Private:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None) -> None:
        self.default = default
        self.default_factory = default_factory

    def make(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


def PrivateAttr(default: Any = None, *, default_factory: Callable[[], Any] | None = None) -> Any:
    """An underscore attribute each instance gets, never validated, dumped or taken from input."""
    return _Private(default, default_factory)


_BEFORE = "__records_before__"


def model_validator(*, mode: Literal["before"]) -> Callable[[Any], Any]:
    """Mark a classmethod ``(cls, data) -> data`` that rewrites the input dict before validation."""

    def mark(method: Any) -> Any:
        setattr(getattr(method, "__func__", method), _BEFORE, True)
        return method

    return mark


# --- errors -------------------------------------------------------------------------------------------


class ValidationError(ValueError):
    """What pydantic raises, with the same ``errors()`` entries: type, loc, msg, input."""

    def __init__(self, title: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(title)
        self.title = title
        self._errors = errors

    def errors(self) -> list[dict[str, Any]]:
        return [dict(error) for error in self._errors]

    def error_count(self) -> int:
        return len(self._errors)

    def __str__(self) -> str:
        count = len(self._errors)
        lines = [f"{count} validation error{'' if count == 1 else 's'} for {self.title}"]
        for error in self._errors:
            value = repr(error["input"])
            if len(value) > 100:
                value = value[:49] + "..." + value[-48:]
            lines.append(".".join(str(part) for part in error["loc"]) or self.title)
            lines.append(f"  {error['msg']} [type={error['type']}, input_value={value}, "
                         f"input_type={type(error['input']).__name__}]")
        return "\n".join(lines)


class _Fail(Exception):
    """Raised by validators; ``loc`` grows as it passes up through containers."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__()
        self.errors = errors

    def under(self, *loc: Any) -> list[dict[str, Any]]:
        for error in self.errors:
            error["loc"] = (*loc, *error["loc"])
        return self.errors


def _fail(kind: str, msg: str, value: Any) -> NoReturn:
    raise _Fail([{"type": kind, "loc": (), "msg": msg, "input": value}])


# --- validators: Callable[[Any], Any] that return the converted value or raise _Fail ---------------------

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
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if math.isfinite(number) and number.is_integer():
                return int(number)
            _fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)
    _fail("int_type", "Input should be a valid integer", value)


def _float(value: Any) -> Any:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            _fail("float_parsing", "Input should be a valid number, unable to parse string as a number", value)
    _fail("float_type", "Input should be a valid number", value)


def _bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
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
    if isinstance(annotation, type) and issubclass(annotation, Record):
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
    raise TypeError(f"pi_records cannot validate {annotation!r}")


def _model_check(model: type[Record]) -> _Compiled:
    message = f"Input should be a valid dictionary or instance of {model.__name__}"

    def check(value: Any) -> Any:
        if isinstance(value, model):
            return value
        if isinstance(value, Mapping):
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
        if not isinstance(value, Mapping):
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
    by_tag: dict[Any, type[Record]] = {}
    for member in members:
        spec = _spec(member)
        tag = next(f.default for f in spec.fields if f.name == key)
        by_tag[tag] = member
    classes = tuple(by_tag.values())
    expected = ", ".join(repr(t) for t in by_tag)

    def check(value: Any) -> Any:
        if isinstance(value, classes):
            return value
        if not isinstance(value, Mapping):
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


# --- the record base ----------------------------------------------------------------------------------


class _Spec:
    """A record class, compiled on first use: fields in order, aliases, validators, private attributes."""

    __slots__ = ("alias_of", "before", "by_alias", "field_names", "fields", "floats", "keys", "private", "rows",
                 "title")

    def __init__(self, cls: type[Record]) -> None:
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


def _spec(cls: type[Record]) -> _Spec:
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


def _values(cls: type[Record], data: Mapping[str, Any]) -> dict[str, Any]:
    spec = cls.__dict__.get("_records_spec") or _spec(cls)
    for hook in spec.before:
        data = hook(data)
    values: dict[str, Any] = {}
    errors: list[dict[str, Any]] | None = None
    used = 0
    for name, alias, exact, check, default, factory in spec.rows:
        if alias in data:
            key = alias
        elif name in data:
            key = name
        elif factory is not None:
            values[name] = factory()
            continue
        elif default is not MISSING:
            values[name] = default
            continue
        else:
            errors = errors or []
            errors.append({"type": "missing", "loc": (alias,), "msg": "Field required", "input": data})
            continue
        used += 1
        value = data[key]
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


def _plain(value: Any, json_mode: bool, by_alias: bool, exclude_none: bool) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if isinstance(value, Record):
        return _dump(value, json_mode, by_alias, exclude_none)
    if isinstance(value, list):
        return [_plain(v, json_mode, by_alias, exclude_none) for v in value]
    if isinstance(value, dict):
        return {(_key(k) if json_mode and not isinstance(k, str) else k): _plain(v, json_mode, by_alias, exclude_none)
                for k, v in value.items()}
    if isinstance(value, (tuple, set, frozenset)):
        items = [_plain(v, json_mode, by_alias, exclude_none) for v in value]
        if json_mode:
            return items
        return frozenset(items) if isinstance(value, frozenset) else set(items) if isinstance(value, set) else tuple(items)
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model (an SDK's type) inside details or an unknown key
        return dump(mode="json" if json_mode else "python", by_alias=by_alias, exclude_none=exclude_none)
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), json_mode, by_alias, exclude_none)
                for f in dataclasses.fields(value)}
    return _json_scalar(value) if json_mode else value


def _key(key: Any) -> str:
    return str(_json_scalar(key)) if not isinstance(key, (int, float)) else json.dumps(key)


def _json_scalar(value: Any) -> Any:
    import datetime
    import enum
    import pathlib

    if isinstance(value, enum.Enum):
        return _plain(value.value, True, True, False)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode(errors="replace")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    raise ValueError(f"Unable to serialize unknown type: {type(value)!r}")


def _dump(record: Record, json_mode: bool, by_alias: bool, exclude_none: bool) -> dict[str, Any]:
    spec = type(record).__dict__.get("_records_spec") or _spec(type(record))
    aliases = spec.alias_of if by_alias else {}
    private = spec.private
    floats = spec.floats if json_mode else ()
    out: dict[str, Any] = {}
    for name, value in record.__dict__.items():
        if value is None:
            if not exclude_none:
                out[aliases.get(name, name)] = None
            continue
        if name in private:
            continue
        kind = type(value)
        if kind is not str and kind is not bool and kind is not float:
            if kind is int:
                if name in floats:
                    value = float(value)
            else:
                value = _plain(value, json_mode, by_alias, exclude_none)
        out[aliases.get(name, name)] = value
    return out


def _finite_or_null(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite_or_null(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite_or_null(v) for k, v in value.items()}
    return value


class _FieldsOf:
    """``Model.model_fields`` (on the class or an instance): name -> FieldInfo, in declaration order."""

    def __get__(self, record: object, owner: type[Record]) -> dict[str, FieldInfo]:
        return {f.name: f for f in _spec(owner).fields}


@dataclass_transform(kw_only_default=True, field_specifiers=(Field, PrivateAttr))
class Record:
    """Base class: declare fields as annotations (``name: str``, ``size: int = 0``,
    ``items: list[str] = Field(default_factory=list)``). Python names are snake_case; input and dumps use
    their camelCase aliases (either spelling is accepted). Unknown keys are kept and dumped after the fields.
    Assigning an attribute is not validated, as in pydantic's default configuration."""

    if TYPE_CHECKING:
        model_fields: ClassVar[dict[str, FieldInfo]]
        _records_spec: ClassVar[_Spec]
    else:
        model_fields = _FieldsOf()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = inspect.get_annotations(cls)
        declared: dict[str, Any] = {}
        private: dict[str, _Private] = {}
        for name in own:
            if name not in cls.__dict__:
                continue
            value = cls.__dict__[name]
            if isinstance(value, _Private):
                private[name] = value
            elif not name.startswith("_"):
                declared[name] = value
            else:
                continue
            delattr(cls, name)  # as in pydantic: a field's default is not a class attribute
        cls._records_declared = declared  # type: ignore[attr-defined]
        cls._records_private = private  # type: ignore[attr-defined]
        cls._records_before = [name for name, value in cls.__dict__.items()  # type: ignore[attr-defined]
                               if getattr(getattr(value, "__func__", value), _BEFORE, False)]

    def __init__(self, /, **data: Any) -> None:
        try:
            self.__dict__ = _values(type(self), data)
        except _Fail as failed:
            raise ValidationError(type(self).__name__, failed.errors) from None

    # --- pydantic's API ---

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, Mapping):
            raise ValidationError(cls.__name__, [{
                "type": "model_type", "loc": (), "input": obj,
                "msg": f"Input should be a valid dictionary or instance of {cls.__name__}"}])
        try:
            return _build(cls, obj)
        except _Fail as failed:
            raise ValidationError(cls.__name__, failed.errors) from None

    @classmethod
    def model_validate_json(cls, data: str | bytes | bytearray) -> Self:
        try:
            parsed = json.loads(data)
        except ValueError as err:
            raise ValidationError(cls.__name__, [{"type": "json_invalid", "loc": (), "input": data,
                                                  "msg": f"Invalid JSON: {err}"}]) from None
        return cls.model_validate(parsed)

    @classmethod
    def model_construct(cls, **values: Any) -> Self:
        """An instance from trusted values, without validation (defaults filled in)."""
        spec = _spec(cls)
        out: dict[str, Any] = {}
        for name, alias, _exact, _check, default, factory in spec.rows:
            if alias in values:
                out[name] = values[alias]
            elif name in values:
                out[name] = values[name]
            elif factory is not None:
                out[name] = factory()
            elif default is not MISSING:
                out[name] = default
        for key, value in values.items():
            if key not in spec.keys:
                out[key] = value
        for name, attr in spec.private.items():
            out[name] = attr.make()
        record = cls.__new__(cls)
        record.__dict__ = out
        return record

    def model_dump(self, *, mode: str = "python", by_alias: bool | None = None, exclude_none: bool = False
                   ) -> dict[str, Any]:
        return _dump(self, mode == "json", by_alias is not False, exclude_none)

    def model_dump_json(self, *, indent: int | None = None, by_alias: bool | None = None,
                        exclude_none: bool = False) -> str:
        data = _dump(self, True, by_alias is not False, exclude_none)
        separators = (",", ":") if indent is None else None
        try:
            return json.dumps(data, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False)
        except ValueError:
            return json.dumps(_finite_or_null(data), ensure_ascii=False, indent=indent, separators=separators)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A shallow (or ``deep``) copy; ``update`` values (by field name) are set as given, unvalidated."""
        record = type(self).__new__(type(self))
        if deep:
            import copy

            values = copy.deepcopy(self.__dict__)
        else:
            values = dict(self.__dict__)
        if update:
            values.update(update)
        record.__dict__ = values
        return record

    @property
    def model_extra(self) -> dict[str, Any]:
        spec = _spec(type(self))
        return {k: v for k, v in self.__dict__.items() if k not in spec.field_names and k not in spec.private}

    # --- plain object behaviour ---

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value (as pydantic models)

    def _shown(self) -> Iterator[tuple[str, Any]]:
        private = _spec(type(self)).private
        return ((k, v) for k, v in self.__dict__.items() if k not in private)

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return self._shown()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._shown())})"

    def __str__(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self._shown())
