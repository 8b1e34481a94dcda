"""The loaded plugins (PluginSet), the one way pi calls their hooks, and what they contribute by name.

``PluginSet.call(hook, **kwargs)`` (and ``call_sync`` outside an event loop) runs a hook's implementations in
order under the policy its spec declares (collect, chain, notify, first; see ``pi_core.hookspecs``). Order is
layer (built-in < installed < project < explicit), then pluggy's ``tryfirst``/``trylast``, then load order. A raising
implementation is reported to the error listeners (the session turns it into an ``extension_error`` event) or,
before a session exists, recorded in ``failures``.

Named contributions (tools, providers, renderers, modes, ...): a higher layer replaces a lower one; inside a
layer the first implementation wins and the clash is recorded in ``conflicts`` (a start-up warning).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import weakref
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypeVar

import pluggy

from pi_core.hookspecs.markers import Policy

if TYPE_CHECKING:
    from pi_core.hookspecs.results import Flag
    from pi_core.mode import Mode
    from pi_core.providers import ApiProvider
    from pi_core.render import Renderer

T = TypeVar("T")
Layer = Literal["builtin", "installed", "project", "explicit"]
# project: a trusted project's .pi/extensions and ``pi install -l`` packages; explicit: ``-e`` files, embedding
LAYER_RANK: dict[str, int] = {"builtin": 0, "installed": 1, "project": 2, "explicit": 3}
Merge = Callable[[Any, Any, dict[str, Any]], tuple[Any, bool]]  # open: each hook's own arguments and result, as its spec says; (chained value, result, arguments) -> (value, stop)
Accept = Callable[[str, Any], bool]  # open: each hook's own arguments and result, as its spec says; (plugin, result) -> use it?


@dataclass(eq=False, repr=False)
class PluginInfo:
    """One loaded plugin: its name, its layer and where it came from."""

    name: str
    layer: Layer
    source: str  # module path, file path or "dist 1.0"
    replaces: str | None = None  # "builtin" when an installed plugin took a built-in's name
    optional: bool = False  # from the opt-in group ``pi.optional``


@dataclass(eq=False, repr=False)
class PluginFailure:
    """A plugin that could not be loaded or registered, and why."""

    name: str
    source: str
    reason: str
    where: str = ""  # file:line of the offending hook, when one is to blame
    fatal: bool = False  # stops a session from starting (an explicit plugin or file); an installed one is skipped
    details: str = ""  # the traceback of a failed import, shown under --verbose


@dataclass(eq=False, repr=False)
class ExtensionError:
    """A hook implementation raised: which plugin, which hook, what it said."""

    plugin: str
    source: str
    hook: str
    error: BaseException

    @property
    def text(self) -> str:
        """What the error said (its type when it said nothing): the ``error`` field of Pi's event."""
        return str(self.error) or type(self.error).__name__

    @property
    def message(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if str(self.error) else type(self.error).__name__


class Contribution(NamedTuple):
    plugin: str
    value: Any  # open: a plugin's contribution, of the type its hook names


class _Plan:
    """A hook's implementations in call order and its policy, ready to call: ``names`` are the arguments
    they take besides ``ctx``. ``calls(ctx)`` gives each implementation as a callable taking those values
    by position, ``ctx.for_plugin(plugin)`` bound in front (kept for the last ``ctx``: its views are cached,
    so binding again would give the same ones). An implementation taking fewer arguments or ``ctx`` elsewhere,
    and every one when the caller left an argument out (its default then applies), is called by name."""

    __slots__ = ("bound", "impls", "key", "names", "policy")

    def __init__(self, key: tuple[Any, ...], impls: tuple[pluggy.HookImpl, ...], policy: Policy) -> None:
        self.key, self.impls, self.policy = key, impls, policy
        self.names = tuple(dict.fromkeys(name for impl in impls for name in impl.argnames if name != "ctx"))
        self.bound: tuple[Callable[[], Any], tuple[Any, ...]] | None = None

    def calls(self, ctx: Any, by_name: bool = False) -> tuple[Any, ...]:
        if not by_name and self.bound is not None and self.bound[0]() is ctx:
            return self.bound[1]
        bind = getattr(ctx, "for_plugin", None) if ctx is not _OMITTED else None
        calls = []
        for impl in self.impls:
            ctx_at = impl.argnames.index("ctx") if "ctx" in impl.argnames else -1
            view = ctx if bind is None or ctx_at < 0 else bind(impl.plugin_name)
            if by_name or ctx_at > 0 or (ctx_at == 0 and ctx is _OMITTED) or impl.argnames[ctx_at + 1:] != self.names:
                call = functools.partial(_by_name, impl.function, impl.argnames, self.names, view)
            else:
                call = functools.partial(impl.function, *((view,) if ctx_at == 0 else ()))
            call.plugin = impl.plugin_name  # type: ignore[attr-defined]
            calls.append(call)
        if not by_name:
            with contextlib.suppress(TypeError):  # a context that cannot be weakly referenced is not kept
                self.bound = (weakref.ref(ctx) if ctx is not None else lambda: None, tuple(calls))
        return tuple(calls)


def _by_name(function: Callable[..., Any], argnames: tuple[str, ...], names: tuple[str, ...], ctx: Any,
             *values: Any) -> Any:
    given = {name: value for name, value in zip(("ctx", *names), (ctx, *values)) if value is not _OMITTED}
    return function(**{name: given[name] for name in argnames if name in given})


_OMITTED = object()  # an argument (or ``ctx``) the caller left out
_NO_PLAN = _Plan((), (), Policy("collect"))


class HookManager(pluggy.PluginManager):
    """pluggy's manager, counting the changes to its registrations: pluggy tells no one when a plugin comes
    or goes, and ``register``, ``unregister`` (``set_blocked`` too) and ``add_hookspecs`` are the public ways
    they change, so ``PluginSet`` keeps its call plans until the count moves."""

    changes = 0

    def register(self, plugin: object, name: str | None = None) -> str | None:
        self.changes += 1
        return super().register(plugin, name)

    def unregister(self, plugin: object | None = None, name: str | None = None) -> object:
        self.changes += 1
        return super().unregister(plugin, name)

    def add_hookspecs(self, module_or_class: ModuleType | type) -> None:
        self.changes += 1
        super().add_hookspecs(module_or_class)


@dataclass(eq=False, repr=False)
class PluginSet:
    """The plugin manager plus what was learned while loading it."""

    pm: HookManager
    info: dict[str, PluginInfo] = field(default_factory=dict)
    failures: list[PluginFailure] = field(default_factory=list)
    available: dict[str, str] = field(default_factory=dict)  # opt-in plugins (group pi.optional): name -> dist
    error_listeners: list[Callable[[ExtensionError], None]] = field(default_factory=list)
    _order: dict[str, _Plan] = field(default_factory=dict, repr=False)

    def layer_of(self, plugin_name: str) -> Layer:
        info = self.info.get(plugin_name)
        return info.layer if info else "explicit"

    def source_of(self, plugin_name: str) -> str:
        info = self.info.get(plugin_name)
        return info.source if info else plugin_name

    def path_of(self, plugin_name: str) -> str:
        """The plugin's file (``sourceInfo.path``): the file or folder it was loaded from, else its module's file
        (an entry point's ``source`` is its distribution, e.g. "pi-harness 0.1.0"); a class plugin's, its class's."""
        source, module = self.source_of(plugin_name), inspect.getmodule(self.pm.get_plugin(plugin_name))
        return source if Path(source).exists() else getattr(module, "__file__", None) or source

    def has(self, hook: str) -> bool:
        return bool(self._plan(hook).impls)

    def _plan(self, hook: str) -> _Plan:
        """Implementations in call order and the policy: built once, kept while the manager's registrations
        and the loaded plugins stay as they were (every hook call passes here: a hit is one tuple compare)."""
        key = (self.pm.changes, len(self.info))
        cached = self._order.get(hook)
        if cached is not None and cached.key == key:
            return cached
        caller = getattr(self.pm.hook, hook, None)
        if caller is None:
            return _NO_PLAN
        loaded = {name: index for index, name in enumerate(self.info)}

        def rank(impl: pluggy.HookImpl) -> tuple[int, int, int]:
            name = impl.plugin_name
            klass = 0 if impl.tryfirst else 2 if impl.trylast else 1
            return LAYER_RANK[self.layer_of(name)], klass, loaded.get(name, len(loaded))

        ordered = tuple(sorted(caller.get_hookimpls(), key=rank))
        found = getattr(caller.spec.function, "pi_policy", None) if caller.spec is not None else None
        policy = found if isinstance(found, Policy) else Policy("collect")
        plan = self._order[hook] = _Plan(key, ordered, policy)
        return plan

    def policy(self, hook: str) -> Policy:
        return self._plan(hook).policy

    # --- errors ---------------------------------------------------------------------------------------

    def report(self, error: ExtensionError) -> None:
        """Tell the error listeners (the running session); with none, keep it as a start-up failure."""
        if not self.error_listeners:
            self.failures.append(PluginFailure(error.plugin, error.source, f"{error.hook} raised {error.message}"))
            return
        for listener in list(self.error_listeners):
            listener(error)

    # --- calling --------------------------------------------------------------------------------------

    async def call(self, hook: str, /, *, merge: Merge | None = None,
                   on_error: Callable[[str, BaseException], object] | None = None,
                   quiet: tuple[type[BaseException], ...] = (), accept: Accept | None = None, **kwargs: Any) -> Any:  # open: each hook's own arguments and result, as its spec says
        """Run ``hook`` under its policy, awaiting async implementations.

        collect -> list of ``Contribution(plugin, value)``; chain -> the final value of the chained argument;
        notify -> None; first -> the first non-None result, or None. ``merge(value, result, arguments)`` decides
        how a chain step applies (default: a non-None result replaces the value); it may update ``arguments``
        for the implementations still to come. An implementation's exception is
        reported (unless it is one of ``quiet``), then ``on_error(plugin, error)`` may supply its result.
        ``accept(plugin, result)`` may refuse a non-None result (it then counts as None): a caller checks
        what it got and learns who answered.
        """
        steps = self._steps(hook, kwargs, merge, on_error, quiet, accept)
        try:
            pending = next(steps)
            while True:
                try:
                    value = await pending
                except Exception as err:  # noqa: BLE001 - handed back to the step that awaited it
                    pending = steps.throw(err)
                else:
                    pending = steps.send(value)
        except StopIteration as done:
            return done.value

    def call_sync(self, hook: str, /, *, merge: Merge | None = None,
                  on_error: Callable[[str, BaseException], object] | None = None,
                  quiet: tuple[type[BaseException], ...] = (), accept: Accept | None = None, **kwargs: Any) -> Any:  # open: each hook's own arguments and result, as its spec says
        """``call`` for code without an event loop (start-up collection); async implementations are run to
        completion on a private loop."""
        steps = self._steps(hook, kwargs, merge, on_error, quiet, accept)
        try:
            pending = next(steps)
            while True:
                try:
                    value = run_blocking(pending)
                except Exception as err:  # noqa: BLE001 - handed back to the step that awaited it
                    pending = steps.throw(err)
                else:
                    pending = steps.send(value)
        except StopIteration as done:
            return done.value

    def _steps(self, hook: str, kwargs: dict[str, Any], merge: Merge | None,
               on_error: Callable[[str, BaseException], Any] | None,
               quiet: tuple[type[BaseException], ...], accept: Accept | None = None) -> Generator[Any, Any, Any]:
        """The policy, written once: yields each awaitable result to the driver, which sends it back resolved."""
        plan = self._plan(hook)
        kind, chain = plan.policy.kind, plan.policy.chain
        collected: list[Contribution] = []
        chained = kwargs.get(chain) if chain else None
        if chain:
            kwargs[chain] = chained
        names = plan.names
        values = tuple([kwargs.get(name, _OMITTED) for name in names])
        calls = plan.calls(kwargs.get("ctx", _OMITTED), not all(map(kwargs.__contains__, names)))
        for call in calls:
            try:
                result = call(*values)
                if result is not None and inspect.isawaitable(result):
                    result = yield result
            except Exception as err:  # noqa: BLE001 - a plugin's failure is reported, never fatal
                if not isinstance(err, quiet):
                    self.report(ExtensionError(call.plugin, self.source_of(call.plugin), hook, err))
                if on_error is None:
                    continue
                result = on_error(call.plugin, err)
            if result is None or (accept is not None and not accept(call.plugin, result)):
                continue
            if kind == "first":
                return result
            if kind == "collect":
                collected.append(Contribution(call.plugin, result))
            elif kind == "chain":
                chained, stop = merge(chained, result, kwargs) if merge is not None else (result, False)
                if stop:
                    break
                kwargs[chain] = chained  # type: ignore[index]
                values = tuple([kwargs.get(name, _OMITTED) for name in names])  # what merge changed, too
        if kind == "collect":
            return collected
        return chained if kind == "chain" else None


def run_blocking(awaitable: Awaitable[T]) -> T:
    """Resolve an awaitable from synchronous code: on a fresh loop, or in a helper thread when this thread
    already runs one (a sync caller inside async code must not deadlock its own loop)."""
    import asyncio  # here: ``pi --help`` reads plugin entry points without an event loop

    async def wait() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="pi-hook") as pool:
        return pool.submit(asyncio.run, wait()).result()  # or raises what it raised in that thread


# --- named contributions -------------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class Override:
    """A name two plugins contributed (a tool, a provider, ...): whose contribution won."""

    kind: str  # "tool", "provider", "renderer", "mode", "command", ...
    name: str
    winner: str  # plugin name
    loser: str
    same_layer: bool = False  # a clash inside one layer: decided by order (or toolOverrides), warned about


@dataclass(eq=False, repr=False)
class Contributions(Generic[T]):
    """One kind of named contribution: the items by name, who gave each, and each plugin's names."""

    items: dict[str, T] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # item name -> plugin name
    by_plugin: dict[str, list[str]] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class Registry:
    """The plugins and what they contributed by name: tools, providers, renderers, modes, flags."""

    plugins: PluginSet
    tools: Contributions[Any] = field(default_factory=Contributions)
    providers: Contributions[ApiProvider] = field(default_factory=Contributions)
    renderers: Contributions[Renderer] = field(default_factory=Contributions)
    modes: Contributions[Mode] = field(default_factory=Contributions)
    flags: Contributions[Flag] = field(default_factory=Contributions)
    overrides: list[Override] = field(default_factory=list)
    tool_overrides: dict[str, str] = field(default_factory=dict)  # settings ``toolOverrides``: tool -> plugin

    @property
    def failures(self) -> list[PluginFailure]:
        return self.plugins.failures

    @property
    def conflicts(self) -> list[Override]:
        return [o for o in self.overrides if o.same_layer]


def keyed(plugins: PluginSet, contributions: list[Contribution], kind: str, key: str,
          overrides: list[Override] | None = None,
          chosen: dict[str, str] | None = None) -> Contributions[Any]:  # open: what the hook returned, as pluggy does
    """Index collected lists by ``key``: a higher layer replaces a lower one; inside a layer the first
    contribution wins (or the plugin ``chosen`` names). Every replacement is appended to ``overrides``."""
    target: Contributions[Any] = Contributions()
    for plugin, values in contributions:
        for item in values or []:
            name = getattr(item, key)
            holder = target.owner.get(name)
            if holder is not None and holder != plugin:
                same = plugins.layer_of(holder) == plugins.layer_of(plugin)
                wins = (chosen or {}).get(name) == plugin if same and name in (chosen or {}) else not same
                if overrides is not None:
                    overrides.append(Override(kind, name, plugin if wins else holder, holder if wins else plugin,
                                              same_layer=same))
                if not wins:
                    continue
            target.items[name] = item
            target.owner[name] = plugin
            target.by_plugin.setdefault(plugin, []).append(name)
    return target


def build_registry(plugins: PluginSet, *, tool_overrides: dict[str, str] | None = None) -> Registry:
    registry = Registry(plugins, tool_overrides=dict(tool_overrides or {}))
    overrides = registry.overrides
    registry.tools = keyed(plugins, plugins.call_sync("pi_tools"), "tool", "name", overrides, registry.tool_overrides)
    registry.providers = keyed(plugins, plugins.call_sync("pi_providers"), "provider", "api", overrides)
    registry.renderers = keyed(plugins, plugins.call_sync("pi_renderers"), "renderer", "tool_name", overrides)
    registry.modes = keyed(plugins, plugins.call_sync("pi_modes"), "mode", "name", overrides)
    registry.flags = keyed(plugins, plugins.call_sync("pi_flags"), "flag", "name", overrides)
    return registry
