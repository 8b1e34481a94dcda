"""Start-up's part of the sandbox: the user's policy from ``--sandbox`` and the ``sandbox`` settings, tightened
by ``pi_sandbox_policy``, enforced by a ``pi_sandbox`` mechanism, or a refusal to start (docs/sandbox.md)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.toolkit.sandbox import (
    DEFAULT_DENY_READ,
    MECHANISMS,
    MODES,
    SandboxError,
    SandboxPolicy,
)

if TYPE_CHECKING:
    from pi_core.app.settings import Settings
    from pi_core.registry import PluginSet
    from pi_core.toolkit.sandbox import Network, Sandbox


def _resolve(raw: str, cwd: Path) -> str:
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(raw)))


def _scope_policy(table: Any, where: str, base: SandboxPolicy, cwd: Path) -> SandboxPolicy:
    """``base`` with the keys one settings file's ``sandbox`` table sets; a bad value is a ``SandboxError``."""
    if not isinstance(table, dict):
        raise SandboxError(f"{where}: sandbox must be a table (mode, writableRoots, network, denyRead), "
                           f"not {table!r}")
    policy = base
    unknown = sorted(set(table) - {"mode", "writableRoots", "network", "denyRead", "mechanism"})
    if unknown:
        raise SandboxError(f"{where}: unknown sandbox setting {', '.join(unknown)} (known: mode, writableRoots, "
                           "network, denyRead, mechanism)")
    if "mode" in table:
        if table["mode"] not in MODES:
            raise SandboxError(f"{where}: sandbox.mode must be one of {', '.join(MODES)}, not {table['mode']!r}")
        policy = replace(policy, mode=table["mode"], source=where)
    for key in ("writableRoots", "denyRead"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise SandboxError(f"{where}: sandbox.{key} must be a list of paths, not {value!r}")
    if "writableRoots" in table:
        policy = replace(policy, writable_roots=(base.workspace, *(_resolve(p, cwd) for p in table["writableRoots"])))
    if "denyRead" in table:
        policy = replace(policy, deny_read=tuple(_resolve(p, cwd) for p in table["denyRead"]))
    if "network" in table:
        policy = replace(policy, network=_network(table["network"], where))
    if "mechanism" in table:
        if table["mechanism"] not in MECHANISMS:
            raise SandboxError(f"{where}: sandbox.mechanism must be one of {', '.join(MECHANISMS)}, "
                               f"not {table['mechanism']!r}")
        policy = replace(policy, mechanism=table["mechanism"])
    return policy


def _network(value: Any, where: str) -> Network:
    if value in ("off", "on"):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(h, str) and h.strip() for h in value):
        hosts = tuple(h.strip().lower() for h in value)
        bad = [h for h in hosts if "/" in h or ":" in h or " " in h or "*" in h.removeprefix("*.")]
        if bad:
            raise SandboxError(f"{where}: sandbox.network hosts are names such as example.com or *.example.com, "
                               f"not {bad[0]!r}")
        return hosts
    raise SandboxError(f'{where}: sandbox.network must be "off", "on" or a list of hosts, not {value!r}')


def user_policy(settings: Settings, cwd: Path, agent_dir: Path, mode: str | None = None) -> SandboxPolicy:
    """The policy the user asked for: the global settings' ``sandbox`` table, met with a trusted project's
    (a project can only tighten), then ``mode`` from ``--sandbox`` for this run."""
    workspace = os.path.realpath(cwd)
    policy = SandboxPolicy(workspace=workspace, writable_roots=(workspace,),
                           deny_read=tuple(_resolve(p, cwd) for p in DEFAULT_DENY_READ)
                           + (_resolve(str(agent_dir / "auth.json"), cwd),))
    scopes = ("global", "project") if getattr(settings, "project_trusted", False) else ("global",)
    found = [(scope, settings.scope_data(scope).get("sandbox")) for scope in scopes]
    global_table = found[0][1]
    if global_table is not None:
        policy = _scope_policy(global_table, str(settings.scope_path("global")), policy, cwd)
    for scope, table in found[1:]:
        if table is not None:
            policy = policy.meet(_scope_policy(table, str(settings.scope_path(scope)), policy, cwd))
    if mode is not None:
        if mode not in MODES:
            raise SandboxError(f"--sandbox must be one of {', '.join(MODES)}, not {mode!r}")
        policy = replace(policy, mode=mode, source="--sandbox")
    return policy


def resolve_sandbox(plugins: PluginSet, settings: Settings, cwd: Path, agent_dir: Path,
                    mode: str | None = None) -> tuple[Sandbox, str] | None:
    """The sandbox this run asks for (not started) and the plugin that built it: the user's policy, tightened
    by ``pi_sandbox_policy``, built by ``pi_sandbox``. None when the result confines nothing. ``SandboxError``
    when a confining policy finds no mechanism: pi refuses to run unconfined."""
    if mode is None and settings.get("sandbox") is None and not plugins.has("pi_sandbox_policy"):
        return None  # the common case: nothing asked for, nothing to read

    def fail(plugin: str, err: BaseException) -> None:
        if isinstance(err, SandboxError):
            raise err
        raise SandboxError(f'plugin "{plugin}" failed while setting up the sandbox: {type(err).__name__}: {err}') \
            from err

    user = user_policy(settings, cwd, agent_dir, mode)
    tightened = plugins.call_sync("pi_sandbox_policy", policy=user, on_error=fail, quiet=(Exception,))
    policy = user.meet(tightened) if isinstance(tightened, SandboxPolicy) else user
    if not policy.confining:
        return None
    owner: list[str] = []

    def answered(plugin: str, _result: Any) -> bool:
        owner.append(plugin)
        return True

    sandbox = plugins.call_sync("pi_sandbox", policy=policy, on_error=fail, quiet=(Exception,), accept=answered)
    if sandbox is None:
        raise SandboxError(f"sandbox mode {policy.mode} was asked for ({policy.source}), but no plugin provides a "
                           "sandbox (is the sandbox plugin disabled?); pi does not run the model's commands "
                           "unconfined. Start with --sandbox off to run without one.")
    return sandbox, owner[-1]
