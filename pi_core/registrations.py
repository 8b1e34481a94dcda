"""What a plugin registers besides tools and providers: slash commands, command-line flags, keyboard shortcuts.

Each is returned from its hook (``pi_commands``, ``pi_flags``, ``pi_shortcuts``) as plain data; handlers
receive a ``pi_core.extension.CommandContext`` and may be ``def`` or ``async def``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

CommandContext = Any  # pi_core.extension.CommandContext (named loosely: extension imports this module)


@dataclass
class CompletionItem:
    """One argument completion: ``value`` is inserted, ``label`` and ``description`` are shown."""

    value: str
    label: str | None = None
    description: str | None = None


@dataclass
class SlashCommand:
    """A ``/name`` command (interactive editor, RPC ``prompt``). ``handler(args, ctx)`` gets the text after the
    name; ``complete(prefix)`` offers argument completions in the interactive editor (None: none)."""

    name: str
    description: str
    handler: Callable[[str, CommandContext], Awaitable[None] | None]
    complete: Callable[[str], list[CompletionItem] | None] | None = None


@dataclass
class CommandInfo:
    """A command as ``ctx.get_commands()`` and RPC ``get_commands`` list it: a plugin's, a prompt template or a
    skill. ``source_info``: path, source, scope, origin (RPC's ``sourceInfo``)."""

    name: str
    description: str | None
    source: Literal["extension", "prompt", "skill"]
    source_info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        data.update(source=self.source, sourceInfo=self.source_info)
        return data


@dataclass
class Flag:
    """A command-line flag a plugin reads with ``ctx.get_flag(name)``: ``--name`` (boolean) or ``--name VALUE``
    / ``--name=VALUE`` (string). ``default`` is what ``get_flag`` returns when the flag is not given."""

    name: str
    description: str = ""
    type: Literal["boolean", "string"] = "boolean"
    default: bool | str | None = None

    def __post_init__(self) -> None:
        expected = bool if self.type == "boolean" else str
        if self.default is not None and not isinstance(self.default, expected):
            raise TypeError(f'Invalid default for flag "{self.name}": expected {self.type}, '
                            f"got {type(self.default).__name__}")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "type": self.type, "default": self.default}


@dataclass
class Shortcut:
    """A key of the interactive UI in Pi's key syntax (``"ctrl+shift+u"``, ``"alt+p"``, ``"f5"``) and what it
    does: ``handler(ctx)`` with a ``CommandContext``."""

    key: str
    description: str
    handler: Callable[[CommandContext], Awaitable[None] | None]
