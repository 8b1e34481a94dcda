"""pi core: types, hook specs, plugin loading, the agent loop and the CLI.

Names are exported lazily so ``import pi_core`` (and ``pi --help``) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "hookimpl": "pi_core.hookspecs",
    "hookspec": "pi_core.hookspecs",
    "Tool": "pi_core.tools",
    "ToolContext": "pi_core.tools",
    "ToolResult": "pi_core.tools",
    "ToolCallInfo": "pi_core.tools",
    "BeforeToolCall": "pi_core.tools",
    "AfterToolCall": "pi_core.tools",
    "ToolError": "pi_core.errors",
    "PiError": "pi_core.errors",
    "ProviderError": "pi_core.errors",
    "AbortedError": "pi_core.errors",
    "AbortSignal": "pi_core.signals",
    "ApiProvider": "pi_core.providers",
    "StreamOptions": "pi_core.providers",
    "Renderer": "pi_core.render",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [*_EXPORTS, "__version__"]
