"""A small record base for the classes ``pi --help`` and start-up read (settings, trust).

No dataclasses or NamedTuples there: importing ``dataclasses`` (with ``inspect``) or building NamedTuples costs
``pi --help`` more than the reading itself.
"""

from __future__ import annotations


class SlotRecord:
    """Equality and a repr over ``__slots__``; unhashable, as a dataclass with ``eq`` is."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"
