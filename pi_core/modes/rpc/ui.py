"""The extension UI sub-protocol (docs/rpc.md#extension-ui): plugin dialogs become ``extension_ui_request`` lines.

A tool reaches the client through ``ctx.extras["ui"]`` (an ``RpcUI``). Dialogs (select, confirm,
input, editor) send a request with a fresh uuid and wait for the matching ``extension_ui_response``;
timeouts and abort signals are enforced here, resolving with the dialog's default and forgetting
the request, so a late response is ignored. Fire-and-forget methods only write a request.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from pi_core.extension import UI
from pi_core.signals import AbortSignal

Output = Callable[[dict[str, Any]], None]
T = TypeVar("T")

THEME_ERROR = "Theme switching not supported in RPC mode"


class RpcUI(UI):
    """The plugin UI (``ctx.pi.ui`` in tools, ``ctx.ui`` in lifecycle hooks) in RPC mode. Dialog methods
    are coroutines; call them from the event loop, or from a worker thread (sync tools) through
    ``blocking(ui.confirm(...))``."""

    has_ui = True

    def __init__(self, output: Output, loop: asyncio.AbstractEventLoop) -> None:
        self._output = output
        self._loop = loop
        self._pending: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._closed = False

    # --- responses from the client -------------------------------------------------------------------

    def handle_response(self, response: dict[str, Any]) -> bool:
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
        """The chosen option, or None on cancel/timeout. ``timeout`` is in milliseconds, as on the wire."""
        request = {"method": "select", "title": title, "options": list(options), "timeout": timeout}
        return await self._dialog(request, None, _value, timeout=timeout, signal=signal)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        request = {"method": "confirm", "title": title, "message": message, "timeout": timeout}
        return await self._dialog(request, False, _confirmed, timeout=timeout, signal=signal)

    async def input(self, title: str, placeholder: str | None = None, *,  # type: ignore[override]
                    timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        request = {"method": "input", "title": title, "placeholder": placeholder, "timeout": timeout}
        return await self._dialog(request, None, _value, timeout=timeout, signal=signal)

    async def editor(self, title: str, prefill: str | None = None) -> str | None:  # type: ignore[override]
        """A multi-line editor; Pi offers no timeout for it, so neither do we."""
        return await self._dialog({"method": "editor", "title": title, "prefill": prefill}, None, _value)

    async def custom(self, *args: Any, **kwargs: Any) -> None:
        """Custom components need a terminal: always None in RPC mode."""
        return

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
        def on_abort() -> None:
            self._loop.call_soon_threadsafe(settle, default)

        remove_abort = signal.add_callback(on_abort) if signal is not None else None
        timer = self._loop.call_later(timeout / 1000, settle, default) if timeout else None
        try:
            self._send({"id": request_id, **request})
            return await done
        finally:
            self._pending.pop(request_id, None)
            if timer is not None:
                timer.cancel()
            if remove_abort is not None:
                remove_abort()

    # --- fire and forget -----------------------------------------------------------------------------

    def notify(self, message: str, level: str | None = None) -> None:  # type: ignore[override]
        self._send({"id": str(uuid.uuid4()), "method": "notify", "message": message, "notifyType": level})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, content: list[str] | Any | None = None, placement: str | None = None) -> None:
        """Only string lists travel over RPC; a component factory is dropped without a request."""
        if content is not None and not isinstance(content, list):
            return
        self._send({"id": str(uuid.uuid4()), "method": "setWidget", "widgetKey": key,
                    "widgetLines": content, "widgetPlacement": placement})

    def set_title(self, title: str) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        self._send({"id": str(uuid.uuid4()), "method": "set_editor_text", "text": text})

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    # --- degraded: no terminal behind RPC -----------------------------------------------------------

    def get_editor_text(self) -> str:
        return ""

    def set_working_message(self, message: str | None = None) -> None: ...

    def set_working_visible(self, visible: bool) -> None: ...

    def set_working_indicator(self, *args: Any) -> None: ...

    def set_hidden_thinking_label(self, label: str | None = None) -> None: ...

    def set_footer(self, factory: Any) -> None: ...

    def set_header(self, factory: Any) -> None: ...

    def set_editor_component(self, factory: Any) -> None: ...

    def add_autocomplete_provider(self, provider: Any) -> None: ...

    def set_tools_expanded(self, expanded: bool) -> None: ...

    def on_terminal_input(self, handler: Any) -> Callable[[], None]:
        return lambda: None

    def get_editor_component(self) -> None:
        return None

    def get_tools_expanded(self) -> bool:
        return False

    def get_all_themes(self) -> list[Any]:
        return []

    def get_theme(self, name: str) -> None:
        return None

    def set_theme(self, theme: Any) -> dict[str, Any]:
        return {"success": False, "error": THEME_ERROR}

    # --- plumbing ------------------------------------------------------------------------------------

    def blocking(self, awaitable: Coroutine[Any, Any, T]) -> T:
        """Run a dialog from a worker thread (a sync tool's ``execute``) and wait for its answer."""
        return asyncio.run_coroutine_threadsafe(awaitable, self._loop).result()

    def _send(self, request: dict[str, Any]) -> None:
        self._output({"type": "extension_ui_request", **{k: v for k, v in request.items() if v is not None}})


def _value(response: dict[str, Any]) -> Any:
    if response.get("cancelled"):
        return None
    return response.get("value")


def _confirmed(response: dict[str, Any]) -> bool:
    if response.get("cancelled"):
        return False
    return response.get("confirmed") is True


__all__ = ["THEME_ERROR", "RpcUI"]
