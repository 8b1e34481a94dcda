"""The scripted work both harnesses do, one ``Scenario`` per table row.

Every scenario that talks to a model goes through the agent loop end to end against the fake model
server: a scripted tool call (when there is one), then a final answer. A run counts only when the
harness exits 0, prints the final answer, used up every scripted reply and sent the server a last
request holding the expected tool output; so both harnesses are proven to have done the same work.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench import scenarios_fixtures as fx
from bench.scenarios_harness import PRINT_ARGS, Child, Harness, Sample
from bench.scenarios_pty import interactive_child, measure_pty
from pi_core.testing.fake_server import FakeModelServer, Reply

DONE = "BENCH-DONE"
OPENAI = "openai-completions"
ANTHROPIC = "anthropic-messages"
RESPONSES = "openai-responses"
GOOGLE = "google-generative-ai"
WIRES = {ANTHROPIC: "Anthropic", OPENAI: "Chat Completions", RESPONSES: "Responses", GOOGLE: "Google"}
SHORT = {ANTHROPIC: "anthropic", OPENAI: "openai", RESPONSES: "responses", GOOGLE: "google"}
MB = 1_000_000


@dataclass
class Workspace:
    """Scratch dir, fake server and generated fixtures shared by every scenario of one bench run."""

    root: Path
    server: FakeModelServer

    def path(self, *parts: str) -> Path:
        path = self.root.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


@dataclass
class Step:
    """What one harness runs for one scenario, repeated for every timed run."""

    child: Child
    replies: list[Reply] = field(default_factory=list)
    last_request_has: str | tuple[str, ...] | None = None  # must occur in the JSON body of the last request
    before: Callable[[], None] | None = None  # untimed per-run set-up (e.g. restore an edited file)
    # Run in the same round as this step (taking turns going first): the "cost" metric is this step's per-turn
    # gap minus the baseline's, so a difference is measured side by side rather than across scenarios.
    baseline: Step | None = None
    units: int = 0  # with a baseline: the "per_unit" metric is (wall - the baseline's wall) / units
    probe: Callable[[Child], Sample] | None = None  # how a run is timed (default: spawn → exit)


@dataclass
class Scenario:
    key: str
    label: str
    build: Callable[[Workspace, Harness], Step]
    group: str = "startup"
    harnesses: tuple[str, ...] = ("python", "node")  # which kinds run it
    max_runs: int | None = None  # big inputs: fewer runs
    warmup: bool = True
    # Extra table rows from the fake server's timestamps: "first" (spawn → first request), "exit" (last
    # reply → process exit), "gap" (median harness time between a reply and the next request), "drift".
    metrics: tuple[str, ...] = ()


def _print_step(ws: Workspace, h: Harness, key: str, api: str, prompt: str, replies: list[Reply],
                extra_args: list[str] = (), cwd: Path | None = None,  # type: ignore[assignment]
                env: dict[str, str] | None = None, agent_dir: Path | None = None) -> Step:
    home = agent_dir or h.agent_dir(key, ws.server.base_url_for(api), api)
    cwd = cwd or ws.path("cwd", key, h.label, ".keep").parent
    argv = [*h.argv, *PRINT_ARGS, *extra_args, "-p", prompt]
    return Step(Child(argv, h.env(home, env), cwd, expect=DONE), replies)


def _tool_step(ws: Workspace, h: Harness, key: str, call: tuple[str, dict[str, object]], must_see: str,
               extra_args: list[str] = (), cwd: Path | None = None) -> Step:  # type: ignore[assignment]
    step = _print_step(ws, h, key, OPENAI, "go", [Reply(tool_calls=[call]), Reply(text=DONE)],
                       ["--no-session", *extra_args], cwd)
    step.last_request_has = must_see
    return step


# --- start-up -------------------------------------------------------------------------------------


def _flag(flag: str) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        return Step(Child([*h.argv, flag], h.env(h.agent_dir(flag.strip("-"))), ws.path("cwd", "flag", ".k").parent))
    return build


def _print_one(api: str) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        return _print_step(ws, h, f"print-{SHORT[api]}", api, "hi", [Reply(text=DONE)], ["--no-session"])
    return build


def _plugins(count: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        home = h.agent_dir("plugins", ws.server.base_url_for(OPENAI), OPENAI)
        env: dict[str, str] = {}
        if h.kind == "python":
            env["PYTHONPATH"] = str(fx.python_plugins(ws.path("plugins", "site", ".k").parent, count))
        else:
            fx.node_extensions(home / "extensions", count)
        step = _print_step(ws, h, "plugins", OPENAI, "hi", [Reply(text=DONE)], ["--no-session"], env=env,
                           agent_dir=home)
        step.last_request_has = f"bench_tool_{count - 1:02d}"
        return step
    return build


def _interactive(api: str) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        key = f"interactive-{SHORT[api]}"
        home = h.agent_dir(key, ws.server.base_url_for(api), api)
        return Step(interactive_child(h, home, ws.path("cwd", key, h.label, ".k").parent), probe=measure_pty)
    return build


# --- the agent loop ---------------------------------------------------------------------------------


def _tool_loop(turns: int, api: str = OPENAI) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        cwd = ws.path("cwd", f"loop-{api}", h.label, "tiny.txt").parent
        (cwd / "tiny.txt").write_text("tiny file\n")
        replies = [Reply(tool_calls=[("read", {"path": "tiny.txt"})]) for _ in range(turns)] + [Reply(text=DONE)]
        step = _print_step(ws, h, f"loop-{turns}-{api}", api, "go", replies, ["--no-session"], cwd)
        step.last_request_has = "tiny file"
        return step
    return build


def _noop_plugins(count: int, turns: int = 20) -> Callable[[Workspace, Harness], Step]:
    """The tool loop with ``count`` installed no-op plugins (issue 15), paired with the same loop without."""
    def build(ws: Workspace, h: Harness) -> Step:
        cwd = ws.path("cwd", "noop", h.label, "tiny.txt").parent
        (cwd / "tiny.txt").write_text("tiny file\n")

        def loop(key: str, env: dict[str, str] | None = None, home: Path | None = None) -> Step:
            replies = [Reply(tool_calls=[("read", {"path": "tiny.txt"})]) for _ in range(turns)] + [Reply(text=DONE)]
            step = _print_step(ws, h, key, OPENAI, "go", replies, ["--no-session"], cwd, env=env, agent_dir=home)
            step.last_request_has = "tiny file"
            return step

        home = h.agent_dir("noop-plugins", ws.server.base_url_for(OPENAI), OPENAI)
        env: dict[str, str] = {}
        if h.kind == "python":
            env["PYTHONPATH"] = str(fx.python_noop_plugins(ws.path("noop", "site", ".k").parent, count))
        else:
            fx.node_noop_extensions(home / "extensions", count)
        step = loop("noop-plugins", env, home)
        step.last_request_has = ("tiny file", f"bench_noop_{count - 1:02d}")
        step.baseline = loop("noop-none")
        return step
    return build


def _long_answer(chars: int, chunk: int = 4) -> Callable[[Workspace, Harness], Step]:
    """One long streamed answer (``chunk`` characters per delta), paired with a one-word answer: the
    difference of the two runs' wall times, per delta, is what a streamed delta costs end to end."""
    def build(ws: Workspace, h: Harness) -> Step:
        text = ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[: chars - len(DONE) - 1] + " " + DONE
        home = h.agent_dir("stream-long", ws.server.base_url_for(OPENAI), OPENAI)
        step = _print_step(ws, h, "stream-long", OPENAI, "hi", [Reply(text=text, chunk_size=chunk)],
                           ["--no-session"], agent_dir=home)
        step.baseline = _print_step(ws, h, "stream-short", OPENAI, "hi", [Reply(text=DONE)], ["--no-session"])
        step.units = -(-len(text) // chunk)
        return step
    return build


# --- tools on big inputs ----------------------------------------------------------------------------

LINE = "x" * 99


def _bash_seq(lines: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        return _tool_step(ws, h, "bash-seq", ("bash", {"command": f"seq 1 {lines}"}), str(lines))
    return build


def _bash_bytes(size: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        command = f"yes {LINE} | head -n {size // 100}; echo END-OF-OUTPUT"
        return _tool_step(ws, h, f"bash-{size}", ("bash", {"command": command}), "END-OF-OUTPUT")
    return build


def _read_near_end(size: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        path = ws.path("files", f"big-{size // MB}MB.txt")
        lines = fx.text_file(path, size)
        last = f"{(lines - 1) % 10_000:07d} lorem"
        return _tool_step(ws, h, f"read-{size}", ("read", {"path": str(path), "offset": lines - 19, "limit": 20}),
                          last)
    return build


def _edit(size: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        pristine = ws.path("files", f"edit-{size // MB}MB.orig")
        if not pristine.exists():
            fx.edit_file(pristine, size)
        target = ws.path("cwd", "edit", h.label, "edit.txt")
        call = ("edit", {"path": str(target), "edits": [{"oldText": fx.EDIT_MARKER, "newText": "edited line"}]})
        step = _tool_step(ws, h, "edit", call, "Successfully replaced")
        step.before = lambda: fx.fresh_copy(pristine, target)
        return step
    return build


def _grep(files: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        tree = ws.path("tree", ".k").parent
        fx.source_tree(tree, files, needle_every=400)
        return _tool_step(ws, h, "grep", ("grep", {"pattern": "needle_[0-9]+", "path": str(tree)}),
                          f"needle_{(files - 1) // 400 * 400}",
                          ["--tools", "read,bash,edit,write,grep"])
    return build


def _session(entries: int) -> Callable[[Workspace, Harness], Step]:
    def build(ws: Workspace, h: Harness) -> Step:
        home = h.agent_dir("session", ws.server.base_url_for(OPENAI), OPENAI)
        cwd = ws.path("cwd", "session", h.label, ".k").parent
        pristine = ws.path("files", f"session-{entries}", h.label, "pristine.jsonl")
        if not pristine.exists():
            generated = fx.session_file(pristine.parent / "gen", cwd, entries)
            generated.replace(pristine)
        from pi_core.sessions.store import encode_cwd

        live = home / "sessions" / encode_cwd(str(cwd)) / "2026-01-01T00-00-00-000Z_bench.jsonl"
        step = _print_step(ws, h, "session", OPENAI, "one more", [Reply(text=DONE)], ["-c"], cwd,
                           agent_dir=home)
        step.last_request_has = "one more"
        step.before = lambda: fx.fresh_copy(pristine, live)
        return step
    return build


SCENARIOS: list[Scenario] = [
    Scenario("version", "`--version`", _flag("--version")),
    Scenario("help", "`--help`", _flag("--help")),
    *[Scenario(f"print-{SHORT[api]}", f"print mode, one answer, {name} wire", _print_one(api),
               metrics=("first", "exit")) for api, name in WIRES.items()],
    *[Scenario(f"interactive-{SHORT[api]}", f"interactive: spawn → a typed key shown in the editor, {name} wire",
               _interactive(api), metrics=("ui",)) for api, name in WIRES.items()],
    Scenario("plugins", "print mode with 50 plugins, one tool each", _plugins(50), group="startup"),
    Scenario("stream", "print mode, a 40 KB answer in 10,000 deltas, Chat Completions", _long_answer(40_000),
             group="startup", metrics=("per_unit", "per_unit_cpu")),
    *[Scenario(f"loop-{SHORT[api]}", f"tool loop, 20 `read` turns + answer, {name} wire", _tool_loop(20, api),
               group="loop", metrics=("gap",)) for api, name in WIRES.items()],
    Scenario("plugins-noop", "tool loop, 20 `read` turns, 20 no-op plugins on every per-turn hook",
             _noop_plugins(20), group="loop", metrics=("gap", "cost")),
    Scenario("drift-300", "tool loop, 300 `read` turns + answer, Chat Completions", _tool_loop(300),
             group="loop", metrics=("gap", "drift"), max_runs=2),
    Scenario("bash-seq", "bash `seq 1 3000000` (3M lines, 21 MB)", _bash_seq(3_000_000), group="tools"),
    Scenario("bash-200MB", "bash, 200 MB of output", _bash_bytes(200 * MB), group="sizes", max_runs=3,
             warmup=False),
    Scenario("bash-1GB", "bash, 1 GB of output", _bash_bytes(1000 * MB), group="sizes", max_runs=2, warmup=False),
    Scenario("read-50MB", "read 20 lines at the end of a 50 MB file", _read_near_end(50 * MB), group="sizes",
             max_runs=3, warmup=False),
    Scenario("read-200MB", "read 20 lines at the end of a 200 MB file", _read_near_end(200 * MB), group="tools"),
    Scenario("read-1GB", "read 20 lines at the end of a 1 GB file", _read_near_end(1000 * MB), group="sizes",
             max_runs=2, warmup=False),
    Scenario("edit", "edit one line in a 20 MB file", _edit(20 * MB), group="tools"),
    Scenario("grep", "grep over a 20,000-file tree", _grep(20_000), group="tools"),
    Scenario("session", "continue a 10,000-entry session (`-c -p`)", _session(10_000), group="tools"),
]


def by_key() -> dict[str, Scenario]:
    return {s.key: s for s in SCENARIOS}


def request_text(body: object) -> str:
    return json.dumps(body, ensure_ascii=False)
