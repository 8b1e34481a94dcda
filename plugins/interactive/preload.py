"""Load the provider's SDK in the background while the user types the first prompt.

Importing an SDK takes a second or more (the anthropic SDK alone about 1.3 s), so the app starts it
in a worker thread as soon as the prompt is on screen and the first submit waits only for what is
still loading. A provider can say what to load by defining ``preload()``; otherwise the SDK named
for its API here is imported.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

# The core wires stream over pi_core.llm.transport and define ``preload()``; this covers SDK-backed wires.
SDK_MODULES: dict[str, tuple[str, ...]] = {
    "azure-openai-responses": ("openai",),
}


class Preloader:
    def __init__(self, session: Any) -> None:
        self.session = session
        self._task: asyncio.Future[None] | None = None
        self.error: str | None = None

    def _load(self) -> None:
        model = self.session.model
        api = getattr(model, "api", None)
        provider = self.session.registry.providers.items.get(api) if api else None
        preload = getattr(provider, "preload", None)
        if callable(preload):
            preload()
            return
        for name in SDK_MODULES.get(api or "", ()):
            importlib.import_module(name)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(asyncio.to_thread(self._load))

    def done(self) -> bool:
        return self._task is not None and self._task.done()

    async def wait(self) -> None:
        """Wait for the background load (starting it if the prompt came first); failures are kept."""
        self.start()
        assert self._task is not None
        try:
            await asyncio.shield(self._task)
        except Exception as err:  # noqa: BLE001 - kept and shown; the provider still reports its own error
            self.error = f"{type(err).__name__}: {err}"
