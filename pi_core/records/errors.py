"""Validation errors: the public ``ValidationError`` (pydantic's ``errors()`` entries) and the internal
failure validators raise while ``loc`` is built up."""

from __future__ import annotations

from typing import Any, NoReturn


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
