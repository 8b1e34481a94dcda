"""pi core: types, hook specs, plugin loading, the agent loop and the CLI.

Names are exported lazily so ``import pi_core`` (and ``pi --help``) stays fast.
"""

from __future__ import annotations

import importlib

# typing.TYPE_CHECKING without importing typing: typing alone cost 11 of the 15 M instructions `pi --version`
# ran past the interpreter's own start. mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "hookimpl": "pi_core.hookspecs",
    "hookspec": "pi_core.hookspecs",
    "Tool": "pi_core.tools",
    "ToolContext": "pi_core.tools",
    "ToolResult": "pi_core.tools",
    "ToolCallInfo": "pi_core.tools",
    "ToolError": "pi_core.errors",
    "PiError": "pi_core.errors",
    "ProviderError": "pi_core.errors",
    "AbortedError": "pi_core.errors",
    "AbortSignal": "pi_core.signals",
    "ApiProvider": "pi_core.providers",
    "StreamOptions": "pi_core.providers",
    "Renderer": "pi_core.render",
    # session entries as plugins read them (docs/plugins.md#session-entries)
    "BranchSummaryEntry": "pi_core.hookspecs.entries",
    "CompactionEntry": "pi_core.hookspecs.entries",
    "CustomEntry": "pi_core.hookspecs.entries",
    "CustomMessageEntry": "pi_core.hookspecs.entries",
    "LabelEntry": "pi_core.hookspecs.entries",
    "MessageEntry": "pi_core.hookspecs.entries",
    "ModelChangeEntry": "pi_core.hookspecs.entries",
    "SessionEntries": "pi_core.hookspecs.entries",
    "SessionEntry": "pi_core.hookspecs.entries",
    "SessionHeader": "pi_core.hookspecs.entries",
    "SessionInfoEntry": "pi_core.hookspecs.entries",
    "ThinkingLevelChangeEntry": "pi_core.hookspecs.entries",
    "UnknownEntry": "pi_core.hookspecs.entries",
    # the hook contract's types (docs/plugins.md#hook-types)
    "AfterToolCall": "pi_core.hookspecs.results",
    "BeforeAgentStart": "pi_core.hookspecs.results",
    "BeforeToolCall": "pi_core.hookspecs.results",
    "Cancel": "pi_core.hookspecs.results",
    "CompactionPreparation": "pi_core.hookspecs.results",
    "CompactionResult": "pi_core.hookspecs.results",
    "CommandInfo": "pi_core.hookspecs.results",
    "CompletionItem": "pi_core.hookspecs.results",
    "Flag": "pi_core.hookspecs.results",
    "InputResult": "pi_core.hookspecs.results",
    "OAuthProvider": "pi_core.hookspecs.results",
    "ProjectTrust": "pi_core.hookspecs.results",
    "ProjectTrustContext": "pi_core.hookspecs.results",
    "ProviderPreset": "pi_core.hookspecs.results",
    "ResourcePaths": "pi_core.hookspecs.results",
    "Shortcut": "pi_core.hookspecs.results",
    "SlashCommand": "pi_core.hookspecs.results",
    "SystemPromptOptions": "pi_core.hookspecs.results",
    "TreeDecision": "pi_core.hookspecs.results",
    "TreePreparation": "pi_core.hookspecs.results",
    "UserBash": "pi_core.hookspecs.results",
}


# open: a module's globals, and whatever object the package exports under ``name``
def lazy_attribute(package: str, exports: dict[str, str], namespace: dict[str, Any], name: str) -> Any:
    """A lazy package's ``__getattr__``: import ``name`` from the module ``exports`` names for it, keep it in the
    package's ``namespace`` so the next look-up is plain (``pi_core.sessions`` exports this way too)."""
    if name not in exports:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    namespace[name] = getattr(importlib.import_module(exports[name]), name)
    return namespace[name]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _EXPORTS, globals(), name)


__all__ = ["AbortSignal", "AbortedError", "AfterToolCall", "ApiProvider", "BeforeAgentStart", "BeforeToolCall",
           "BranchSummaryEntry", "Cancel", "CommandInfo", "CompactionEntry", "CompactionPreparation",
           "CompactionResult", "CompletionItem", "CustomEntry", "CustomMessageEntry", "Flag", "InputResult",
           "LabelEntry", "MessageEntry", "ModelChangeEntry", "OAuthProvider", "PiError", "ProjectTrust",
           "ProjectTrustContext", "ProviderError", "ProviderPreset", "Renderer", "ResourcePaths", "SessionEntries",
           "SessionEntry", "SessionHeader", "SessionInfoEntry", "Shortcut", "SlashCommand", "StreamOptions",
           "SystemPromptOptions", "ThinkingLevelChangeEntry", "Tool", "ToolCallInfo", "ToolContext", "ToolError",
           "ToolResult", "TreeDecision", "TreePreparation", "UnknownEntry", "UserBash", "__version__", "hookimpl",
           "hookspec"]
