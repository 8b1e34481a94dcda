"""Typed records with pydantic's model API, in plain Python: validated construction, camelCase aliases,
unknown keys kept, ``model_dump``/``model_dump_json``, ``model_validate(_json)``, ``model_copy``,
``model_fields`` and equality, with pydantic's lax conversions and error texts.

pi's wire types (pi_core.types) are built on every start and on every streamed delta. Importing pydantic
and building their schemas took ~0.19 s of a 0.7 s ``pi -p`` run; this module imports in about a
millisecond and builds each class's validators on its first use. It knows nothing about pi and imports
nothing of it: it is a foundation below the kernel (fields.py declarations, errors.py, checks.py validators).

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal[...]``,
``list[T]``, ``dict[K, V]``, unions (``X | Y``, ``X | None``), ``Annotated[X | Y, Field(discriminator=...)]``
and other ``Record`` classes.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self, dataclass_transform

from pi_core.records.checks import _build, _Spec, _spec, _values
from pi_core.records.errors import ValidationError, _Fail
from pi_core.records.fields import (
    _BEFORE,
    MISSING,
    Field,
    FieldInfo,
    PrivateAttr,
    _Private,
    model_validator,
    to_camel,
)

__all__ = ["Field", "FieldInfo", "PrivateAttr", "Record", "ValidationError", "model_validator", "to_camel"]


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
