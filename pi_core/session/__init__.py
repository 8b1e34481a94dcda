"""The session runtime: ``AgentSession``, the one coding-agent session every mode (print, JSON, RPC, interactive)
drives, and what it is built from.

The kernel's ``Agent`` runs the loop; a session binds it to the plugins (``hooks``: where a run asks them;
``commands``: their slash commands), the chosen model, the system prompt and the session file, and adds what
a coding agent needs around runs: the input pipeline, queues, auto-retry and auto-compaction. Its
collaborators are typed in ``parts`` (Protocols the wings implement, wired by ``pi_core.app.startup``); what
it holds and the changes made to it are ``state``. Plugins never see this object: they get the kernel's
``ExtensionContext``, which reaches the session through ``pi_core.session_host.SessionHost``.
"""

from __future__ import annotations

from pi_core.session.agent_session import AgentSession
from pi_core.session.parts import (
    AutoRetry,
    Compaction,
    LoadedResources,
    ModelSource,
    PromptSource,
    SessionConfig,
    SessionFileOps,
    SessionParts,
    SessionStore,
    SettingsStore,
    StreamFn,
    provider_stream_fn,
)

__all__ = ["AgentSession", "AutoRetry", "Compaction", "LoadedResources", "ModelSource", "PromptSource",
           "SessionConfig", "SessionFileOps", "SessionParts", "SessionStore", "SettingsStore", "StreamFn",
           "provider_stream_fn"]
