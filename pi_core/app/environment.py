"""``Startup``: what start-up loaded for a run, before a session exists: the settings, the plugins and their
registry, the trust decision and the warnings to show. Built by ``pi_core.app.startup.load_environment``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_core.app.settings import Settings
    from pi_core.app.trust import TrustDecision
    from pi_core.models.registry import ModelRegistry
    from pi_core.registry import PluginSet, Registry
    from pi_core.resources import Resources


@dataclass(eq=False, repr=False)
class Startup:
    """What start-up loaded: the folders, the plugins and their registry, the settings and the models."""

    cwd: Path
    agent_dir: Path
    plugins: PluginSet
    registry: Registry
    settings: Settings
    models: ModelRegistry | None = None
    resources: Resources | None = None  # what the session's prompt source read last (PromptSources.reload)
    warnings: list[str] = field(default_factory=list)
    trust: TrustDecision | None = None  # None: not decided, so nothing of the project's was loaded

    @property
    def plugin_flags(self) -> frozenset[str]:
        """Names (without "--") of the CLI flags the loaded plugins register: known to the unknown-flag check."""
        return frozenset(self.registry.flags.items)

    @property
    def project_trusted(self) -> bool:
        return self.trust is not None and self.trust.trusted
