"""The declarations a record class is written with: ``Field``, ``PrivateAttr``, ``model_validator``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal


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
