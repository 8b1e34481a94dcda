"""Issue 15 P1/P2: one hook-calling policy for every hook, pluggy's order inside a layer, loud failures."""

from __future__ import annotations

import asyncio
import inspect
import sys
from pathlib import Path
from typing import Any

import pluggy
import pytest

from pi_core import hookimpl, hookspecs
from pi_core.plugins import load_plugins, register_file, register_module
from pi_core.registry import ExtensionError, PluginSet

ALL_HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("pi_"))


def plugin_set() -> PluginSet:
    return load_plugins(load_entry_points=False, discover_extensions=False)


def make_plugin(hook: str, body: Any, *, is_async: bool, **marks: Any) -> type:
    """A plugin class implementing ``hook`` with every argument of its spec, sync or async."""
    params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
    source = (f"{'async ' if is_async else ''}def {hook}({', '.join(params)}):\n"
              + ("    await asyncio.sleep(0)\n" if is_async else "")
              + f"    return body({{{', '.join(f'{p!r}: {p}' for p in params)}}})\n")
    namespace: dict[str, Any] = {"body": body, "asyncio": asyncio}
    exec(source, namespace)  # noqa: S102 - pluggy reads the argument names from a real signature
    return type(f"P_{hook}", (), {hook: staticmethod(hookimpl(**marks)(namespace[hook]))})


def arguments(hook: str) -> dict[str, Any]:
    return {name: f"<{name}>" for name in inspect.signature(getattr(hookspecs, hook)).parameters}


@pytest.mark.parametrize("hook", ALL_HOOKS)
@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_every_hook_takes_sync_and_async_implementations(hook: str, is_async: bool) -> None:
    plugins = plugin_set()
    register_module(plugins, make_plugin(hook, lambda kw: ["made"], is_async=is_async), "one")
    policy = plugins.policy(hook)
    args = arguments(hook)

    result = asyncio.run(plugins.call(hook, **args))
    again = plugins.call_sync(hook, **args)
    expected = {"collect": [("one", ["made"])], "chain": ["made"], "first": ["made"], "notify": None}[policy.kind]
    assert result == expected and again == expected
    assert plugins.failures == []


@pytest.mark.parametrize("hook", ALL_HOOKS)
def test_every_hookspec_states_its_policy_and_says_what_happens_when_it_raises(hook: str) -> None:
    spec = getattr(hookspecs, hook)
    assert spec.pi_policy.kind in ("collect", "chain", "notify", "first")
    doc = inspect.getdoc(spec) or ""
    module_doc = inspect.getdoc(sys.modules[spec.__module__]) or ""
    assert "rais" in doc.lower() or "rais" in module_doc.lower(), f"{hook}: say what happens when it raises"
    assert any(word in (doc + module_doc).lower() for word in ("once", "each", "every", "start-up", "when")), hook


def test_chain_passes_each_result_to_the_next_and_stops_on_request() -> None:
    plugins = plugin_set()
    for name, suffix in (("a", "-a"), ("b", "-b"), ("c", "-c")):
        register_module(plugins, make_plugin("pi_context", lambda kw, s=suffix: kw["messages"] + [s],
                                             is_async=name == "b"), name)
    assert asyncio.run(plugins.call("pi_context", ctx=None, messages=[])) == ["-a", "-b", "-c"]

    def stop_at_b(value: list[str], result: list[str], _args: dict[str, Any]) -> tuple[list[str], bool]:
        return result, result[-1] == "-b"

    assert asyncio.run(plugins.call("pi_context", ctx=None, messages=[], merge=stop_at_b)) == ["-a", "-b"]


def test_first_result_stops_and_none_passes_on() -> None:
    plugins = plugin_set()
    seen: list[str] = []
    register_module(plugins, make_plugin("pi_user_bash", lambda kw: seen.append("a"), is_async=False), "a")
    register_module(plugins, make_plugin("pi_user_bash", lambda kw: seen.append("b") or "B", is_async=True), "b")
    register_module(plugins, make_plugin("pi_user_bash", lambda kw: seen.append("c") or "C", is_async=False), "c")
    assert asyncio.run(plugins.call("pi_user_bash", **arguments("pi_user_bash"))) == "B"
    assert seen == ["a", "b"]


def test_tryfirst_and_trylast_order_implementations_inside_a_layer_and_layers_come_first() -> None:
    plugins = plugin_set()
    order: list[str] = []

    def impl(name: str, **marks: Any) -> type:
        return make_plugin("pi_agent_event", lambda kw, n=name: order.append(n), is_async=False, **marks)

    register_module(plugins, impl("explicit-plain"), "explicit-plain", layer="explicit")
    register_module(plugins, impl("builtin-last", trylast=True), "builtin-last", layer="builtin")
    register_module(plugins, impl("builtin-plain"), "builtin-plain", layer="builtin")
    register_module(plugins, impl("builtin-first", tryfirst=True), "builtin-first", layer="builtin")
    register_module(plugins, impl("installed"), "installed", layer="installed")
    asyncio.run(plugins.call("pi_agent_event", ctx=None, event=None))
    assert order == ["builtin-first", "builtin-plain", "builtin-last", "installed", "explicit-plain"]


def test_a_raising_implementation_is_reported_with_plugin_and_hook_and_the_rest_still_run() -> None:
    plugins = plugin_set()
    reports: list[ExtensionError] = []
    plugins.error_listeners.append(reports.append)

    def boom(kw: Any) -> None:
        raise KeyError("missing")

    register_module(plugins, make_plugin("pi_context", boom, is_async=True), "broken")
    register_module(plugins, make_plugin("pi_context", lambda kw: kw["messages"] + ["ok"], is_async=False), "fine")
    assert asyncio.run(plugins.call("pi_context", ctx=None, messages=["m"])) == ["m", "ok"]
    assert [(r.plugin, r.hook, r.message) for r in reports] == [("broken", "pi_context", "KeyError: 'missing'")]


def test_without_a_session_failures_are_kept_for_start_up_warnings() -> None:
    plugins = plugin_set()

    def boom(kw: Any) -> None:
        raise RuntimeError("no tools today")

    register_module(plugins, make_plugin("pi_tools", boom, is_async=True), "broken")
    assert plugins.call_sync("pi_tools") == []
    assert [(f.name, f.reason) for f in plugins.failures] == [("broken", "pi_tools raised RuntimeError: no tools today")]


def test_each_implementation_gets_its_own_plugins_view_of_ctx() -> None:
    class Ctx:
        def __init__(self, plugin: str = "") -> None:
            self.plugin = plugin

        def for_plugin(self, plugin: str) -> Ctx:
            return Ctx(plugin)

    plugins = plugin_set()
    seen: list[str] = []
    for name in ("alpha", "beta"):
        register_module(plugins, make_plugin("pi_agent_event", lambda kw: seen.append(kw["ctx"].plugin),
                                             is_async=False), name)
    asyncio.run(plugins.call("pi_agent_event", ctx=Ctx(), event=None))
    assert seen == ["alpha", "beta"]


def test_an_implementation_declares_only_the_arguments_it_uses() -> None:
    class Plugin:
        @staticmethod
        @hookimpl
        def pi_input(text: str) -> Any:
            from pi_core import InputResult

            return InputResult("transform", text=text.upper())

    plugins = plugin_set()
    register_module(plugins, Plugin, "upper")
    assert asyncio.run(plugins.call("pi_input", ctx=None, text="hi", source="rpc")).text == "HI"


def test_arguments_reach_an_implementation_by_name_in_whatever_order_it_declares_them() -> None:
    class Ctx:
        def __init__(self, plugin: str = "") -> None:
            self.plugin = plugin

        def for_plugin(self, plugin: str) -> Ctx:
            return Ctx(plugin)

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_input(source: str, ctx: Ctx, text: str) -> Any:  # the spec's order is ctx, text, source
            from pi_core import InputResult

            return InputResult("transform", text=f"{ctx.plugin}/{source}/{text}")

    plugins = plugin_set()
    register_module(plugins, Plugin, "shuffled")
    assert asyncio.run(plugins.call("pi_input", ctx=Ctx(), text="hi", source="rpc")).text == "shuffled/rpc/hi"


def test_an_argument_the_caller_left_out_is_the_implementations_problem_reported_not_a_crash() -> None:
    class Plugin:
        @staticmethod
        @hookimpl
        def pi_session_start(reason: str, previous_session_file: str) -> None:  # the spec gives it a default
            raise AssertionError("never called without previous_session_file")

    plugins = plugin_set()
    register_module(plugins, Plugin, "strict")
    errors: list[ExtensionError] = []
    plugins.error_listeners.append(errors.append)
    asyncio.run(plugins.call("pi_session_start", ctx=None, reason="startup"))
    assert [(e.plugin, type(e.error).__name__) for e in errors] == [("strict", "TypeError")]
    asyncio.run(plugins.call("pi_session_start", ctx=None, reason="resume", previous_session_file="a.jsonl"))
    assert [(e.plugin, type(e.error).__name__) for e in errors][1:] == [("strict", "AssertionError")]


# --- P2: loud failures at load time ------------------------------------------------------------------


def test_a_misspelt_hook_is_an_error_naming_plugin_hook_and_the_closest_spec(tmp_path: Path) -> None:
    path = tmp_path / "typo.py"
    path.write_text("from pi_core import hookimpl\n\n@hookimpl\ndef pi_tool():\n    return []\n")
    plugins = plugin_set()
    register_file(plugins, path)
    assert "typo" not in plugins.info
    [failure] = plugins.failures
    assert failure.fatal and failure.name == "typo"
    assert failure.reason == 'hook "pi_tool" matches no hook specification; did you mean "pi_tools"?'


def test_a_hook_function_without_hookimpl_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "unmarked.py"
    path.write_text("def pi_tools():\n    return []\n")
    plugins = plugin_set()
    register_file(plugins, path)
    [failure] = plugins.failures
    assert failure.fatal and 'function "pi_tools" looks like a hook but has no @hookimpl' in failure.reason


def test_hook_wrappers_are_refused() -> None:
    class Wrapper:
        @staticmethod
        @hookimpl(wrapper=True)
        def pi_tools() -> Any:
            return (yield)

    plugins = plugin_set()
    register_module(plugins, Wrapper, "wrapping")
    assert "wrapping" not in plugins.info
    assert "is a pluggy wrapper" in plugins.failures[0].reason


def test_registering_directly_on_the_plugin_manager_is_seen_by_the_engine() -> None:
    plugins = plugin_set()
    plugins.pm.register(make_plugin("pi_tools", lambda kw: ["x"], is_async=False), name="direct")
    assert plugins.call_sync("pi_tools") == [("direct", ["x"])]
    plugins.pm.unregister(name="direct")
    assert plugins.call_sync("pi_tools") == []


def test_each_public_change_to_the_registrations_reaches_a_hook_already_called() -> None:
    """The engine keeps each hook's call plan; register, unregister, set_blocked and add_hookspecs (pluggy's
    public ways to change what a hook runs) each make the next call see the change."""
    plugins = plugin_set()
    assert plugins.call_sync("pi_tools") == []
    plugins.pm.register(make_plugin("pi_tools", lambda kw: ["a"], is_async=False), name="a")
    assert plugins.call_sync("pi_tools") == [("a", ["a"])]
    plugins.pm.register(make_plugin("pi_tools", lambda kw: ["b"], is_async=False, tryfirst=True), name="b")
    assert plugins.call_sync("pi_tools") == [("b", ["b"]), ("a", ["a"])]
    plugins.pm.set_blocked("b")
    assert plugins.call_sync("pi_tools") == [("a", ["a"])]

    class LaterSpecs:
        @staticmethod
        @hookspecs.spec("first")
        def pi_later(value: str) -> str: ...  # type: ignore[empty-body]

    class Later:
        @staticmethod
        @hookimpl
        def pi_later(value: str) -> str:
            return value + "!"

    plugins.pm.register(Later, name="later")  # before its spec: pluggy keeps it unverified, called as collect
    assert plugins.call_sync("pi_later", value="x") == [("later", "x!")]
    plugins.pm.add_hookspecs(LaterSpecs)
    assert plugins.policy("pi_later").kind == "first" and plugins.call_sync("pi_later", value="x") == "x!"


def test_pluggy_is_what_detects_unknown_hooks() -> None:
    pm = pluggy.PluginManager("pi")
    pm.add_hookspecs(hookspecs)

    class Typo:
        @staticmethod
        @hookimpl
        def pi_tool() -> None: ...

    pm.register(Typo)
    with pytest.raises(pluggy.PluginValidationError):
        pm.check_pending()


# --- the call path's shortcuts keep the semantics (wave 7: argument tuples built once, ctx views bound once) ---


class _Ctx:
    def __init__(self, plugin: str = "") -> None:
        self.plugin = plugin
        self.views: dict[str, _Ctx] = {}

    def for_plugin(self, plugin: str) -> _Ctx:
        return self.views.setdefault(plugin, _Ctx(plugin))


def test_implementations_taking_different_arguments_each_get_theirs_in_order() -> None:
    seen: list[tuple[str, tuple[Any, ...]]] = []

    def full() -> type:
        class Full:
            @staticmethod
            @hookimpl
            def pi_after_tool_call(ctx: _Ctx, call: str, result: str, is_error: bool) -> None:
                seen.append((ctx.plugin, (call, result, is_error)))
        return Full

    class Few:
        @staticmethod
        @hookimpl
        def pi_after_tool_call(result: str) -> None:
            seen.append(("few", (result,)))

    class Shuffled:
        @staticmethod
        @hookimpl
        def pi_after_tool_call(is_error: bool, ctx: _Ctx, call: str) -> None:
            seen.append((ctx.plugin, (is_error, call)))

    plugins = plugin_set()
    for name, plugin in (("full", full()), ("few", Few), ("shuffled", Shuffled), ("full2", full())):
        register_module(plugins, plugin, name)
    ctx = _Ctx()
    for round_ in range(2):  # the second call uses what the first one prepared
        seen.clear()
        asyncio.run(plugins.call("pi_after_tool_call", ctx=ctx, call=f"c{round_}", result="r", is_error=False))
        assert seen == [("full", (f"c{round_}", "r", False)), ("few", ("r",)), ("shuffled", (False, f"c{round_}")),
                        ("full2", (f"c{round_}", "r", False))]


def test_each_plugin_keeps_its_own_view_across_calls_and_a_new_context_gets_new_views() -> None:
    seen: list[_Ctx] = []
    plugins = plugin_set()
    for name in ("alpha", "beta"):
        register_module(plugins, make_plugin("pi_agent_event", lambda kw: seen.append(kw["ctx"]), is_async=False), name)
    first, second = _Ctx(), _Ctx()
    for ctx in (first, first, second):
        asyncio.run(plugins.call("pi_agent_event", ctx=ctx, event=None))
    assert [view.plugin for view in seen] == ["alpha", "beta"] * 3
    assert seen[0] is seen[2] is first.views["alpha"] and seen[1] is seen[3] is first.views["beta"]
    assert seen[4] is second.views["alpha"] and seen[5] is second.views["beta"]


def test_a_chained_value_and_what_merge_changes_reach_the_implementations_after_it() -> None:
    seen: list[tuple[str, str, str]] = []

    def plugin(tag: str) -> type:
        class Plugin:
            @staticmethod
            @hookimpl
            def pi_input(ctx: Any, text: str, source: str) -> Any:
                from pi_core import InputResult

                seen.append((tag, text, source))
                return InputResult("transform", text=text + tag)
        return Plugin

    plugins = plugin_set()
    for tag in ("a", "b", "c"):
        register_module(plugins, plugin(tag), tag)

    def step(current: str, result: Any, args: dict[str, Any]) -> tuple[str, bool]:
        args["source"] = args["source"] + "!"
        return result.text, False

    assert asyncio.run(plugins.call("pi_input", ctx=None, text="x", source="rpc", merge=step)) == "xabc"
    assert seen == [("a", "x", "rpc"), ("b", "xa", "rpc!"), ("c", "xab", "rpc!!")]


def test_a_raising_implementation_is_named_among_fast_and_by_name_ones_and_the_others_still_run() -> None:
    ran: list[str] = []

    def quiet() -> type:
        class Quiet:
            @staticmethod
            @hookimpl
            def pi_agent_event(ctx: Any, event: Any) -> None:
                ran.append("quiet")
        return Quiet

    class Broken:
        @staticmethod
        @hookimpl
        def pi_agent_event(event: Any) -> None:
            raise ValueError(f"bad {event}")

    plugins = plugin_set()
    for name, plugin in (("quiet", quiet()), ("broken", Broken), ("after", quiet())):
        register_module(plugins, plugin, name)
    errors: list[ExtensionError] = []
    plugins.error_listeners.append(errors.append)
    asyncio.run(plugins.call("pi_agent_event", ctx=_Ctx(), event="e1"))
    assert ran == ["quiet", "quiet"]
    assert [(e.plugin, e.hook, e.message) for e in errors] == [("broken", "pi_agent_event", "ValueError: bad e1")]


def test_call_sync_inside_a_running_loop_resolves_async_implementations_and_raises_nothing_of_theirs() -> None:
    plugins = plugin_set()
    register_module(plugins, make_plugin("pi_tools", lambda kw: ["late"], is_async=True), "slow")

    def boom(kw: Any) -> None:
        raise RuntimeError("no tools")

    register_module(plugins, make_plugin("pi_tools", boom, is_async=True), "broken")

    async def inside() -> Any:
        return plugins.call_sync("pi_tools")  # a sync caller inside async code: runs on a helper thread

    assert asyncio.run(inside()) == [("slow", ["late"])]
    assert [(f.name, f.reason) for f in plugins.failures] == [("broken", "pi_tools raised RuntimeError: no tools")]
