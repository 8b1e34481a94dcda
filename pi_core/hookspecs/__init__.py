"""Hooks that pi_core calls: the whole plugin contract, one topic module each; what the hooks are given and
return is in ``results`` (``from pi_core import InputResult``), listed in docs/plugins.md#hook-types.

Every hook name starts with ``pi_``; a plugin contributes by *returning* objects. Each docstring says
when the hook runs, how often, its policy, and what happens when an implementation raises. Shared rules:

- Any implementation may be ``def`` or ``async def``; pi awaits what needs awaiting.
- An implementation declares only the arguments it uses (``def pi_tools()``, ``def pi_context(messages)``).
- Order: layer first (built-in < installed < trusted project < ``-e``), then, inside a layer, pluggy's ``tryfirst`` /
  ``trylast`` marks, then load order (entry points by name, ``-e`` files as given). Hook wrappers are refused.
- Policies (``PluginSet.call``): **collect** gathers every non-None result in that order; **chain** passes
  each result on as the named argument of the next implementation; **notify** ignores results; **first**
  stops at the first non-None result.
- A raising implementation is reported as an extension error naming the plugin and the hook (a stderr line in
  print mode, an ``extension_error`` event in JSON and RPC, a notice in the interactive UI) and skipped,
  unless the hook says otherwise. ``ctx`` is the plugin's own view of ``pi_core.extension.ExtensionContext``.
- A function named like a hook must carry ``@hookimpl``; a ``@hookimpl`` whose name matches no hook stops
  the plugin from loading, naming the closest hook.
"""

from __future__ import annotations

from pi_core.hookspecs.contributions import *
from pi_core.hookspecs.markers import Policy, hookimpl, hookspec, spec  # noqa: F401
from pi_core.hookspecs.provider import *
from pi_core.hookspecs.run import *
from pi_core.hookspecs.sandbox import *
from pi_core.hookspecs.session import *
from pi_core.hookspecs.tools import *
