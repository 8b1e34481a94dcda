"""A UI for tests and embedders that records what plugins showed and answers their dialogs from a list."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_core.ui import UI, ComponentFactory, NotifyLevel, WidgetPlacement


@dataclass
class RecordedUI(UI):
    """A UI for tests and embedders: records every call, answers dialogs from ``answers`` (in order)."""

    answers: list[object] = field(default_factory=list)
    calls: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)
    has_ui: bool = True

    def __post_init__(self) -> None:
        UI.__init__(self)

    def _answer(self, name: str, default: Any, *args: Any) -> Any:
        self.calls.append((name, args))
        return self.answers.pop(0) if self.answers else default

    async def select(self, title: str, options: list[str], **_: object) -> str | None:
        return self._answer("select", None, title, options)  # type: ignore[no-any-return]

    async def confirm(self, title: str, message: str = "", **_: object) -> bool:
        return bool(self._answer("confirm", False, title, message))

    async def input(self, title: str, placeholder: str = "", **_: object) -> str | None:
        return self._answer("input", None, title, placeholder)  # type: ignore[no-any-return]

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return self._answer("editor", None, title, prefill)  # type: ignore[no-any-return]

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        self.calls.append(("notify", (message, level)))

    def set_status(self, key: str, text: str | None = None) -> None:
        self.calls.append(("set_status", (key, text)))

    def set_widget(self, key: str, content: list[str] | ComponentFactory | None, placement: WidgetPlacement = "aboveEditor") -> None:
        self.calls.append(("set_widget", (key, content, placement)))

    def set_title(self, title: str) -> None:
        self.calls.append(("set_title", (title,)))

    def set_editor_text(self, text: str) -> None:
        self.calls.append(("set_editor_text", (text,)))
