"""The extension UI sub-protocol (docs/rpc.md#extension-ui): plugin dialogs become ``extension_ui_request`` lines.

Plugins reach it as ``ctx.ui`` (tools: ``ctx.pi.ui``). Dialogs (select, confirm, input, editor) send a
request with a fresh uuid and wait for the matching ``extension_ui_response``; timeouts (seconds in Python,
milliseconds on the wire) and abort signals are enforced here, resolving with the dialog's default and
forgetting the request, so a late response is ignored. Fire-and-forget methods only write a request; what
needs a terminal is a no-op, as in Pi (docs/rpc.md#extension-ui).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pi_core.signals import AbortSignal
from pi_core.ui import UI, ComponentFactory, Theme, ThemeResult, within

Output = Callable[[dict[str, Any]], None]  # open: an RPC line, JSON (docs/rpc.md)
T = TypeVar("T")

THEME_ERROR = "Theme switching not supported in RPC mode"


class RpcUI(UI):
    """The plugin UI (``ctx.pi.ui`` in tools, ``ctx.ui`` in lifecycle hooks) in RPC mode. Dialog methods
    are coroutines; call them from the event loop, or from a worker thread (sync tools) through
    ``blocking(ui.confirm(...))``."""

    has_ui = True

    def __init__(self, output: Output, loop: asyncio.AbstractEventLoop, theme: Theme | None = None) -> None:
        super().__init__(theme)
        self._output = output
        self._loop = loop
        self._pending: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._closed = False

    # --- responses from the client -------------------------------------------------------------------

    def handle_response(self, response: dict[str, Any]) -> bool:  # open: the client's JSON response
        """Resolve the dialog waiting for ``response["id"]``. Unknown or late ids are ignored (False)."""
        resolve = self._pending.pop(str(response.get("id")), None)
        if resolve is None:
            return False
        resolve(response)
        return True

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        """Shutting down: cancel every open dialog, and answer later ones with their default at once,
        so no plugin waits for a client that is gone."""
        self._closed = True
        for request_id in list(self._pending):
            self.handle_response({"id": request_id, "cancelled": True})

    # --- dialogs -------------------------------------------------------------------------------------

    async def select(self, title: str, options: list[str], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        """The chosen option, or None on cancel/timeout (``timeout`` in seconds; the wire carries ms)."""
        request = {"method": "select", "title": title, "options": list(options), "timeout": _ms(timeout)}
        return await self._dialog(request, None, _value, timeout=timeout, signal=signal)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        request = {"method": "confirm", "title": title, "message": message, "timeout": _ms(timeout)}
        return await self._dialog(request, False, _confirmed, timeout=timeout, signal=signal)

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        request = {"method": "input", "title": title, "placeholder": placeholder or None, "timeout": _ms(timeout)}
        return await self._dialog(request, None, _value, timeout=timeout, signal=signal)

    async def editor(self, title: str, prefill: str = "") -> str | None:
        """A multi-line editor; Pi offers no timeout for it, so neither do we."""
        return await self._dialog({"method": "editor", "title": title, "prefill": prefill or None}, None, _value)

    async def _dialog(self, request: dict[str, Any], default: T, parse: Callable[[dict[str, Any]], T], *,
                      timeout: float | None = None, signal: AbortSignal | None = None) -> T:
        if self._closed or (signal is not None and signal.aborted):
            return default
        request_id = str(uuid.uuid4())
        done: asyncio.Future[T] = self._loop.create_future()

        def settle(value: T) -> None:
            self._pending.pop(request_id, None)
            if not done.done():
                done.set_result(value)

        def on_response(response: dict[str, Any]) -> None:
            self._loop.call_soon_threadsafe(settle, parse(response))

        self._pending[request_id] = on_response
        try:
            self._send({"id": request_id, **request})
            return await within(done, default, timeout=timeout, signal=signal)
        finally:
            self._pending.pop(request_id, None)

    # --- fire and forget -----------------------------------------------------------------------------

    def notify(self, message: str, level: str = "info") -> None:
        self._send({"id": str(uuid.uuid4()), "method": "notify", "message": message, "notifyType": level})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, content: list[str] | ComponentFactory | None, placement: str = "aboveEditor") -> None:
        """Only string lists travel over RPC; a component factory is dropped without a request."""
        if content is not None and not isinstance(content, list):
            return
        self._send({"id": str(uuid.uuid4()), "method": "setWidget", "widgetKey": key,
                    "widgetLines": content, "widgetPlacement": placement})

    def set_title(self, title: str) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "set_editor_text", "text": text})

    def set_theme(self, theme: str | Theme) -> ThemeResult:
        return ThemeResult(False, THEME_ERROR)

    # --- plumbing ------------------------------------------------------------------------------------

    def blocking(self, awaitable: Coroutine[object, object, T]) -> T:
        """Run a dialog from a worker thread (a sync tool's ``execute``) and wait for its answer."""
        return asyncio.run_coroutine_threadsafe(awaitable, self._loop).result()

    def _send(self, request: dict[str, Any]) -> None:
        self._output({"type": "extension_ui_request", **{k: v for k, v in request.items() if v is not None}})


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def _value(response: dict[str, Any]) -> Any:
    if response.get("cancelled"):
        return None
    return response.get("value")


def _confirmed(response: dict[str, Any]) -> bool:
    if response.get("cancelled"):
        return False
    return response.get("confirmed") is True


__all__ = ["THEME_ERROR", "RpcUI"]
