"""What installed plugins cost per turn (issue 15): 20 no-op plugins on every per-turn hook against none.

    python bench/plugins.py [--plugins 20] [--turns 20] [--rounds 9]

In one process, side by side: the same scripted tool loop (``read`` per turn, Chat Completions wire, the
fake model server in a child process with keep-alive so its serving costs this process nothing) runs in a
session with only the built-in plugins and in one that also has ``--plugins`` installed no-op plugins
(``bench.scenarios_fixtures.python_noop_plugins``: pi_context, pi_agent_event, pi_before/after_tool_call,
the provider request/header/response hooks). The two alternate, a fresh session per round. Measured as
CPU time (other work on the machine does not count): the whole run per turn, and the time spent inside
the session's hook calls per turn; the plugins' cost is the difference of the latter (the whole-turn
difference is shown too, but is within the noise). Target: ≤ 1 ms per turn. ``python -m bench`` has the end-to-end row (``plugins-noop``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bench/plugins.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.scenarios_fixtures import python_noop_plugins
from pi_core.testing.fake_script import write_script
from pi_core.testing.fake_server import Reply

API = "openai-completions"


def build_session(cwd: Path, base_url: str, plugin_modules: list[str], api: str = API) -> object:
    from pi_core.app.startup import session_parts
    from pi_core.loader.plugins import load_plugins, register_module
    from pi_core.registry import build_registry
    from pi_core.session import AgentSession, SessionConfig
    from pi_core.sessions.manager import SessionManager
    from pi_core.types import Model

    plugins = load_plugins(discover_extensions=False)
    for name in plugin_modules:
        register_module(plugins, importlib.import_module(name), name, layer="installed")
    registry = build_registry(plugins)
    tools = registry.tools.items
    model = Model(id="fake-model", api=api, provider="fake", base_url=base_url)
    config = SessionConfig(cwd=cwd, model=model, tools=[tools["read"]], all_tools=dict(tools), api_key="k")
    parts = session_parts(SessionManager.in_memory(cwd), plugins, registry, api_key="k")
    return AgentSession(config, parts, plugins=plugins, registry=registry)


class HookClock:
    """Counts and times (this thread's CPU) every hook call of a session: wraps its PluginSet.call."""

    def __init__(self, session: object) -> None:
        self.calls: dict[str, int] = {}
        self.by_hook: dict[str, float] = {}
        self.seconds = 0.0
        plugins = session.plugins  # type: ignore[attr-defined]
        original = plugins.call

        async def call(hook: str, /, **kwargs: object) -> object:
            self.calls[hook] = self.calls.get(hook, 0) + 1
            started = time.thread_time()
            try:
                return await original(hook, **kwargs)
            finally:
                spent = time.thread_time() - started
                self.seconds += spent
                self.by_hook[hook] = self.by_hook.get(hook, 0.0) + spent

        plugins.call = call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/plugins.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugins", type=int, default=20, help="how many no-op plugins (default 20)")
    parser.add_argument("--turns", type=int, default=20, help="tool turns per run (default 20)")
    parser.add_argument("--rounds", type=int, default=9, help="runs per variant (default 9)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="pi-bench-plugins-") as tmp:
        root = Path(tmp)
        site = python_noop_plugins(root / "site", args.plugins)
        sys.path.insert(0, str(site))
        modules = [f"bench_noop_{n:02d}" for n in range(args.plugins)]
        cwd = root / "cwd"
        cwd.mkdir()
        (cwd / "tiny.txt").write_text("tiny file\n")
        per_run = [Reply(tool_calls=[("read", {"path": "tiny.txt"})]) for _ in range(args.turns)] + [Reply(text="ok")]
        runs = 2 * (args.rounds + 1)  # one untimed warm-up each
        script = write_script(root / "script.json", per_run * runs)
        server = subprocess.Popen([sys.executable, "-m", "pi_core.testing.fake_server", "--script", str(script),
                                   "--keep-alive"], stdout=subprocess.PIPE, text=True)
        try:
            url = (server.stdout.readline() if server.stdout else "").strip() + "/v1"
            cpu: dict[str, list[float]] = {"none": [], "plugins": []}
            in_hooks: dict[str, list[float]] = {"none": [], "plugins": []}
            calls: dict[str, int] = {}
            for index in range(runs):
                variant = ("none", "plugins")[(index + index // 2) % 2]  # alternate who goes first each round
                session = build_session(cwd, url, modules if variant == "plugins" else [])
                clock = HookClock(session)
                started = time.process_time()
                asyncio.run(session.prompt("go"))  # type: ignore[attr-defined]
                spent = time.process_time() - started
                messages = session.agent.state.messages  # type: ignore[attr-defined]
                if len(messages) != 2 * args.turns + 2 or messages[-1].text() != "ok":
                    raise SystemExit(f"bench: the {variant} run did not do the scripted work ({len(messages)} "
                                     "messages)")
                if variant == "plugins":
                    calls = clock.calls
                if index >= 2:
                    cpu[variant].append(spent / args.turns)
                    in_hooks[variant].append(clock.seconds / args.turns)
        finally:
            server.terminate()
            server.wait(10)
    none, with_plugins = statistics.median(cpu["none"]), statistics.median(cpu["plugins"])
    hooks_none, hooks_plugins = statistics.median(in_hooks["none"]), statistics.median(in_hooks["plugins"])
    hook_calls = sum(calls.values()) / args.turns
    cost = hooks_plugins - hooks_none
    print(f"per turn, CPU, median of {args.rounds} runs of {args.turns} turns (plus the final answer):")
    print(f"  whole turn, built-in plugins only          {none * 1000:7.2f} ms")
    print(f"  whole turn, + {args.plugins} no-op plugins            {with_plugins * 1000:7.2f} ms   "
          f"(difference {(with_plugins - none) * 1000:+.2f} ms; noisy: the machine's other work)")
    print(f"  inside hook calls, built-in plugins only   {hooks_none * 1000:7.3f} ms")
    print(f"  inside hook calls, + {args.plugins} no-op plugins     {hooks_plugins * 1000:7.3f} ms")
    print(f"  their cost per turn                        {cost * 1000:7.3f} ms   (target ≤ 1 ms: "
          f"{'met' if cost <= 0.001 else 'NOT met'})")
    print(f"  hook calls per turn                        {hook_calls:7.1f}      ({args.plugins} implementations each)")
    if hook_calls:
        print(f"  per implementation call                    {cost / hook_calls / args.plugins * 1e6:7.2f} µs")
    print("  calls per run, by hook: " + ", ".join(f"{k} {v}" for k, v in sorted(calls.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
