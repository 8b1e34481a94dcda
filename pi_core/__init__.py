"""pi core: types, hook specs, plugin loading, the agent loop and the CLI.

Names are exported lazily so ``import pi_core`` (and ``pi --help``) stays fast.
"""

from __future__ import annotations

import importlib
import sys

# typing.TYPE_CHECKING without importing typing: typing alone cost 11 of the 15 M instructions `pi --version`
# ran past the interpreter's own start. mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.abc import Loader as _Loader
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any
else:
    _Loader = object

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


__all__ = ["AbortSignal", "AbortedError", "AfterToolCall", "ApiProvider", "BeforeToolCall", "PiError", "ProviderError",
           "Renderer", "StreamOptions", "Tool", "ToolCallInfo", "ToolContext", "ToolError", "ToolResult", "__version__",
           "hookimpl", "hookspec"]

# Modules renamed in 0.2 keep their old import names for one release (CONTRIBUTING.md, "Renamed modules").
RENAMED_MODULES = {
    "pi_core.runtime": "pi_core.session",
    "pi_core.hookspecs_sessions": "pi_core.hookspecs",
    "pi_core.discovery_cache": "pi_core.discovery",
    **{f"pi_core.{name}": f"pi_core.toolkit.{name}" for name in (
        "fileops", "paths", "globs", "ripgrep", "truncate", "images", "lines", "procs", "shell", "shell_output",
        "mutation_queue", "tempdir", "redact")},
    "pi_core.tls": "pi_core.llm.tls",
    "pi_core.llm.auth": "pi_core.models.auth",
    "pi_core.llm.cost": "pi_core.models.cost",
    "pi_core.llm.custom_models": "pi_core.models.custom",
    "pi_core.llm.env_keys": "pi_core.models.env_keys",
    "pi_core.llm.model_resolution": "pi_core.models.resolution",
    "pi_core.llm.models": "pi_core.models.registry",
    "pi_core.llm.thinking": "pi_core.models.thinking",
    "pi_core.sessions.compaction": "pi_core.compaction.plan",
    "pi_core.sessions.auto": "pi_core.compaction.compactor",
    "pi_core.sessions.summarize": "pi_core.compaction.summarize",
    "pi_core.sessions.branch_summary": "pi_core.compaction.branch_summary",
    "pi_core.sessions.tokens": "pi_core.compaction.tokens",
    "pi_core.sessions.export_html": "pi_core.export.html",
    "pi_core.print_mode": "pi_core.modes.print_mode",
    "pi_core.rpc_client": "pi_core.modes.rpc.client",
    "pi_core.rpc": "pi_core.modes.rpc",
    "pi_core.session_ops": "pi_core.control.session_control",
    "pi_core.session_stats": "pi_core.control.stats",
    "pi_core.user_bash": "pi_core.control.user_bash",
    "pi_core.cli": "pi_core.app.cli",
    "pi_core.args": "pi_core.app.args",
    "pi_core.commands": "pi_core.app.subcommands",
    "pi_core.startup": "pi_core.app.startup",
    "pi_core.settings": "pi_core.app.settings",
    "pi_core.system_prompt": "pi_core.app.system_prompt",
    "pi_core.tool_selection": "pi_core.app.tool_selection",
    "pi_core.packages": "pi_core.app.packages",
    "pi_core.plugin_report": "pi_core.app.plugin_report",
    "builtin_tools": "pi_builtin_tools",
    "plugins": "pi_plugins",
}
_BARE_PACKAGES = ("builtin_tools", "plugins")  # real packages of these names, if any, win


_RENAMED_ROOTS = tuple({name.partition(".")[0] for name in RENAMED_MODULES})


def _renamed_prefix(fullname: str) -> str | None:
    """The old name that ``fullname`` is or sits under: one dict lookup per dot (this runs for every import)."""
    name = fullname if fullname.startswith(_RENAMED_ROOTS) else ""
    while name and name not in RENAMED_MODULES:
        name = name.rpartition(".")[0]
    return name or None


class _RenamedModuleFinder(_Loader):
    """Serves an old module name with the module at its new place (the same object, so patches apply).

    A meta path finder and loader by protocol (find_spec, create_module, exec_module); an importlib.abc.Loader
    for mypy only: subclassing it would import importlib.resources, tempfile and shutil on every start."""

    def __init__(self, *, last_resort: bool) -> None:
        self.last_resort = last_resort
        self._real_specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: object = None, target: object = None,
                  ) -> ModuleSpec | None:
        old = _renamed_prefix(fullname)
        if old is None:
            return None
        if old in _BARE_PACKAGES:
            if fullname == old and not self.last_resort:
                return None  # a real top-level package of that name wins; we are asked last
            if fullname != old and (self.last_resort or sys.modules.get(old) is not sys.modules.get(
                    RENAMED_MODULES[old])):
                return None  # the submodules of a real ``plugins`` package are its own
        elif self.last_resort:
            return None
        import importlib.util  # here, not at the top: a wheel install's `pi --version` never needs it

        module = importlib.import_module(RENAMED_MODULES[old] + fullname[len(old):])
        self._real_specs[fullname] = module.__spec__
        return importlib.util.spec_from_loader(fullname, self, is_package=hasattr(module, "__path__"))

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        real = self._real_specs[spec.name]
        assert real is not None
        return sys.modules[real.name]

    def exec_module(self, module: ModuleType) -> None:
        alias = module.__spec__
        assert alias is not None
        module.__spec__ = self._real_specs.pop(alias.name)  # undo the old name's spec stamped on it


sys.meta_path.insert(0, _RenamedModuleFinder(last_resort=False))
sys.meta_path.append(_RenamedModuleFinder(last_resort=True))
