"""The event bus between plugins (``ctx.events``): named channels, handlers reported under their plugin."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.registry import PluginSet


class EventBus:
    """Channels between plugins (``ctx.events``): ``emit`` never waits; async handlers are scheduled.

    A raising handler is reported as an extension error of its plugin, hook ``events:<channel>``.
    """

    def __init__(self, plugins: PluginSet | None = None) -> None:
        self._handlers: dict[str, list[tuple[str, Callable[[Any], Any]]]] = {}
        self._plugins = plugins

    def on(self, channel: str, handler: Callable[[Any], object], plugin: str = "") -> Callable[[], None]:  # open: plugin-defined event data (ctx.events)
        entry = (plugin, handler)
        self._handlers.setdefault(channel, []).append(entry)

        def unsubscribe() -> None:
            handlers = self._handlers.get(channel, [])
            if entry in handlers:
                handlers.remove(entry)

        return unsubscribe

    def emit(self, channel: str, data: Any = None) -> None:  # open: plugin-defined event data (ctx.events)
        for plugin, handler in list(self._handlers.get(channel, [])):
            try:
                outcome = handler(data)
                if inspect.isawaitable(outcome):
                    asyncio.ensure_future(outcome).add_done_callback(self._watch(plugin, channel))
            except Exception as err:  # noqa: BLE001 - one plugin's handler must not break the emitter
                self._failed(plugin, channel, err)

    def _watch(self, plugin: str, channel: str) -> Callable[[asyncio.Future[Any]], None]:
        def done(task: asyncio.Future[Any]) -> None:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                self._failed(plugin, channel, error)

        return done

    def drop_plugin(self, plugin: str) -> None:
        for handlers in self._handlers.values():
            handlers[:] = [h for h in handlers if h[0] != plugin]

    def _failed(self, plugin: str, channel: str, err: BaseException) -> None:
        if self._plugins is None:
            raise err
        from pi_core.registry import ExtensionError

        self._plugins.report(ExtensionError(plugin, self._plugins.source_of(plugin), f"events:{channel}", err))


@dataclass(eq=False, repr=False)
class PluginEvents:
    """The bus as one plugin sees it: subscriptions are made in its name."""

    bus: EventBus
    plugin: str

    def on(self, channel: str, handler: Callable[[Any], object]) -> Callable[[], None]:  # open: plugin-defined event data (ctx.events)
        return self.bus.on(channel, handler, self.plugin)

    def emit(self, channel: str, data: Any = None) -> None:  # open: plugin-defined event data (ctx.events)
        self.bus.emit(channel, data)
