"""subagent: a ``subagent`` tool that hands tasks to specialised agents, each in its own ``pi`` child process
with a fresh context: one task, up to 8 in parallel (4 at a time), or a chain passing ``{previous}`` on.

Agents are markdown files (frontmatter ``name``, ``description``, optional ``tools`` and ``model``; the body is
the child's appended system prompt) in ``<agentDir>/agents`` and, when the call asks for it, the nearest
``.pi/agents``. Sample agents ship in this package's ``agents/`` folder (copy them into ``<agentDir>/agents``);
the workflow prompt templates of ``prompts/`` (/implement, /scout-and-plan, /implement-and-review) are
contributed while the plugin is on. A child is ``pi --mode json -p --no-session`` of this interpreter, with the
dispatching session's model and thinking level unless its agent names a model.

Where this port differs from Pi's example: a child runs as the leader of its own process group, so an abort
(Ctrl-C, RPC ``abort``) signals the child and whatever it started (SIGTERM, SIGKILL after 5 s) and a terminal's
Ctrl-C reaches the children only through the parent; children still running when their session shuts down are
killed with it (another session's are left alone); agent files are read in name order; a failed spawn names the OS
error and the path.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pi_core import ResourcePaths, Tool, ToolContext, ToolResult, hookimpl
from pi_core.extension import ExtensionContext
from pi_core.render import Renderer
from pi_core.toolkit.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    truncate_head,
    utf8_len,
)
from pi_core.types import TextContent
from pi_core.ui import PlainTheme
from pi_examples.subagent import render
from pi_examples.subagent.agents import (
    PROJECT_CONFIG_DIR,
    AgentConfig,
    AgentScope,
    discover_agents,
    user_agents_dir,
)
from pi_examples.subagent.runner import (
    DispatchDefaults,
    LiveChildren,
    ResolvedAgent,
    SingleResult,
    final_output,
    resolve_agent,
    run_single_agent,
    terminate_all,
)

HERE = Path(__file__).resolve().parent
MAX_PARALLEL_TASKS = 8
MAX_CONCURRENCY = 4
PER_TASK_OUTPUT_CAP = 50 * 1024
TRUNCATION_NOTICE_RESERVE = 256


def _item(task: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "agent": {"type": "string", "description": "Name of the agent to invoke"},
            "task": {"type": "string", "description": task},
            "cwd": {"type": "string", "description": "Working directory for the agent process"},
        },
        "required": ["agent", "task"],
    }


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string", "description": "Name of the agent to invoke (for single mode)"},
        "task": {"type": "string", "description": "Task to delegate (for single mode)"},
        "tasks": {"type": "array", "items": _item("Task to delegate to the agent"),
                  "description": "Array of {agent, task} for parallel execution"},
        "chain": {"type": "array", "items": _item("Task with optional {previous} placeholder for prior output"),
                  "description": "Array of {agent, task} for sequential execution"},
        "agentScope": {"type": "string", "enum": ["user", "project", "both"], "default": "user",
                       "description": 'Which agent directories to use. Default: "user". Use "both" to include '
                                      "project-local agents."},
        "confirmProjectAgents": {"type": "boolean", "default": True,
                                 "description": "Prompt before running project-local agents. Default: true."},
        "cwd": {"type": "string", "description": "Working directory for the agent process (single mode)"},
    },
}


@dataclass
class Details:
    mode: str
    results: list[SingleResult]
    force_error: bool = False

    @property
    def is_error(self) -> bool:
        return self.force_error or any(r.failed for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "results": [r.to_json() for r in self.results], "isError": self.is_error}


def _result(text: str, details: Details) -> ToolResult:
    # A failed child keeps its details (usage, stderr) and still reads as an error to the model.
    return ToolResult(content=[TextContent(text=text)], details=details.to_json(), is_error=details.is_error)


def _update(ctx: ToolContext, text: str, details: Details) -> None:
    ctx.update(ToolResult(content=[TextContent(text=text)], details=details.to_json()))


def failure_evidence(result: SingleResult) -> str:
    """Everything that says why a child failed, each piece once."""
    pieces: list[str] = []
    seen: set[str] = set()
    for label, value in (("Error", result.error_message), ("Signal", result.termination_signal),
                         ("stderr", result.stderr), ("Assistant output", final_output(result.messages))):
        text = (value or "").strip()
        if text and text not in seen:
            seen.add(text)
            pieces.append(f"{label}: {text}")
    return "\n\n".join(pieces) or "(no output)"


def result_output(result: SingleResult) -> str:
    return failure_evidence(result) if result.failed else final_output(result.messages) or "(no output)"


def truncate_parallel_output(output: str) -> str:
    """One parallel task's share of the reply: at most 50 KB, cut on a character boundary."""
    size = utf8_len(output)
    if size <= PER_TASK_OUTPUT_CAP:
        return output
    kept = output.encode("utf-8")[:PER_TASK_OUTPUT_CAP].decode("utf-8", errors="ignore")
    omitted = size - utf8_len(kept)
    return f"{kept}\n\n[Output truncated: {omitted} bytes omitted. Full output preserved in tool details.]"


def truncate_model_output(output: str) -> str:
    """Pi's usual 2,000 lines / 50 KB from the top, with room kept for the notice."""
    whole = truncate_head(output)
    if not whole.truncated:
        return output
    body = truncate_head(output, DEFAULT_MAX_LINES - 2, DEFAULT_MAX_BYTES - TRUNCATION_NOTICE_RESERVE)
    notice = (f"[Output truncated: {whole.total_bytes - body.output_bytes} bytes omitted. "
              "Full output preserved in tool details.]")
    return f"{body.content}\n\n{notice}" if body.content else notice


In = TypeVar("In")
Out = TypeVar("Out")


async def map_with_concurrency_limit(items: Sequence[In], limit: int,
                                     run: Callable[[In, int], Awaitable[Out]]) -> list[Out]:
    """``run`` over every item, at most ``limit`` at once, results in the items' order."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(index: int, item: In) -> Out:
        async with gate:
            return await run(item, index)

    return list(await asyncio.gather(*(one(i, item) for i, item in enumerate(items))))


def _available(agents: list[AgentConfig]) -> str:
    return ", ".join(f"{a.name} ({a.source})" for a in agents) or "none"


def _same_dir(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


async def _project_agents_approved(ctx: ToolContext, session: ExtensionContext, project_dir: Path | None,
                                   selected: list[ResolvedAgent]) -> bool:
    """Ask before running repo-controlled agents, unless they come from this trusted session's own project."""
    by_path = {r.agent.file_path: r.agent for r in selected if r.agent is not None and r.agent.source == "project"}
    trusted_dir = project_dir if project_dir is not None and session.is_project_trusted() else None
    requested = [a for a in by_path.values() if trusted_dir is None or not _same_dir(a.file_path.parent, trusted_dir)]
    if not requested:
        return True
    sources = "\n".join(f"- {a.name}: {a.file_path}" for a in requested)
    return await session.ui.confirm(
        "Run project-local agents?",
        f"Sources:\n{sources}\n\nProject agents are repo-controlled. Only continue for trusted repositories.")


async def execute(args: dict[str, Any], ctx: ToolContext, live: LiveChildren) -> ToolResult:
    """One ``subagent`` call; its children are in ``live`` (the session's) while they run."""
    scope: AgentScope = args.get("agentScope") or "user"
    session = ctx.pi
    model = session.model if session is not None else ctx.model
    defaults = DispatchDefaults(model=f"{model.provider}/{model.id}" if model is not None else None,
                                thinking_level=session.thinking_level if session is not None else None)
    discovery = discover_agents(ctx.cwd, scope)
    chain, tasks = args.get("chain") or [], args.get("tasks") or []
    single = bool(args.get("agent") and args.get("task"))
    if (bool(chain) + bool(tasks) + single) != 1:
        return _result(f"Invalid parameters. Provide exactly one mode.\nAvailable agents: "
                       f"{_available(discovery.agents)}", Details("single", [], force_error=True))
    mode = "chain" if chain else "parallel" if tasks else "single"
    resolved_chain = [resolve_agent(ctx.cwd, scope, s["agent"], s.get("cwd")) for s in chain]
    resolved_tasks = [resolve_agent(ctx.cwd, scope, t["agent"], t.get("cwd")) for t in tasks]
    resolved_single = resolve_agent(ctx.cwd, scope, args["agent"], args.get("cwd")) if single else None
    if (scope != "user" and args.get("confirmProjectAgents", True) and session is not None and session.has_ui):
        selected = resolved_chain or resolved_tasks or ([resolved_single] if resolved_single else [])
        if not await _project_agents_approved(ctx, session, discovery.project_agents_dir, selected):
            return _result("Canceled: project-local agents not approved.", Details(mode, []))
    if chain:
        return await _run_chain(ctx, defaults, chain, resolved_chain, live)
    if tasks:
        return await _run_parallel(ctx, defaults, tasks, resolved_tasks, live)
    assert resolved_single is not None
    return await _run_single(ctx, defaults, args["agent"], args["task"], resolved_single, live)


async def _run_single(ctx: ToolContext, defaults: DispatchDefaults, agent: str, task: str,
                      resolved: ResolvedAgent, live: LiveChildren) -> ToolResult:
    def on_update(current: SingleResult) -> None:
        _update(ctx, final_output(current.messages) or "(running...)", Details("single", [current]))

    result = await run_single_agent(defaults, resolved, agent, task, None, ctx.signal, on_update, live)
    details = Details("single", [result])
    if result.failed:
        return _result(truncate_model_output(f"Agent {result.stop_reason or result.status}: "
                                             f"{result_output(result)}"), details)
    return _result(truncate_model_output(final_output(result.messages) or "(no output)"), details)


async def _run_chain(ctx: ToolContext, defaults: DispatchDefaults, chain: list[dict[str, Any]],
                     resolved: list[ResolvedAgent], live: LiveChildren) -> ToolResult:
    results: list[SingleResult] = []
    previous = ""
    for index, step in enumerate(chain):
        def on_update(current: SingleResult) -> None:
            _update(ctx, final_output(current.messages) or "(running...)", Details("chain", [*results, current]))

        task = step["task"].replace("{previous}", previous)
        result = await run_single_agent(defaults, resolved[index], step["agent"], task, index + 1, ctx.signal,
                                        on_update, live)
        results.append(result)
        if result.failed:
            text = f"Chain stopped at step {index + 1} ({step['agent']}): {result_output(result)}"
            return _result(truncate_model_output(text), Details("chain", results))
        previous = final_output(result.messages)
    return _result(truncate_model_output(final_output(results[-1].messages) or "(no output)"),
                   Details("chain", results))


async def _run_parallel(ctx: ToolContext, defaults: DispatchDefaults, tasks: list[dict[str, Any]],
                        resolved: list[ResolvedAgent], live: LiveChildren) -> ToolResult:
    if len(tasks) > MAX_PARALLEL_TASKS:
        return _result(f"Too many parallel tasks ({len(tasks)}). Max is {MAX_PARALLEL_TASKS}.",
                       Details("parallel", [], force_error=True))
    board = [SingleResult(t["agent"], t["task"]) for t in tasks]

    def emit() -> None:
        running = sum(r.status == "running" for r in board)
        pending = sum(r.status == "pending" for r in board)
        done = len(board) - running - pending
        _update(ctx, f"Parallel: {done}/{len(board)} done, {running} running, {pending} pending...",
                Details("parallel", list(board)))

    async def run(task: dict[str, Any], index: int) -> SingleResult:
        def on_update(current: SingleResult) -> None:
            board[index] = current
            emit()

        result = await run_single_agent(defaults, resolved[index], task["agent"], task["task"], None, ctx.signal,
                                        on_update, live)
        board[index] = result
        emit()
        return result

    results = await map_with_concurrency_limit(tasks, MAX_CONCURRENCY, run)
    succeeded = sum(not r.failed for r in results)
    summaries = []
    for r in results:
        status = f"{r.status} ({r.stop_reason})" if r.failed and r.stop_reason and r.stop_reason != "end" else r.status
        summaries.append(f"### [{r.agent}] {status}\n\n{truncate_parallel_output(result_output(r))}")
    text = f"Parallel: {succeeded}/{len(results)} succeeded\n\n" + "\n\n---\n\n".join(summaries)
    return _result(text, Details("parallel", results))


def make_tool(run: Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]) -> Tool:
    """The ``subagent`` tool, calling ``run`` (a plugin instance's ``execute``)."""
    description = " ".join([
        "Delegate tasks to specialized subagents with isolated context.",
        "Modes: single (agent + task), parallel (tasks array), chain (sequential with {previous} placeholder).",
        f'Default agent scope is "user" (from {user_agents_dir()}).',
        f'To enable project-local agents in {PROJECT_CONFIG_DIR}/agents, set agentScope: "both" (or "project").',
    ])
    return Tool(name="subagent", label="Subagent", description=description, parameters=PARAMETERS, execute=run)


class Subagent:
    """A class plugin: the children still running and the theme the rows are drawn with are this session's (one
    instance per session), so a session that shuts down kills its own children only."""

    def __init__(self) -> None:
        self.live: LiveChildren = set()
        self.theme: Any = PlainTheme()

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await execute(args, ctx, self.live)

    @hookimpl
    def pi_tools(self) -> list[Tool]:
        return [make_tool(self.execute)]

    def render_call(self, args: dict[str, Any]) -> str:
        return render.render_call(args, self.theme)

    def render_result(self, result: Any, is_error: bool, expanded: bool) -> Any:
        return render.render_result(result, is_error, expanded, self.theme)

    @hookimpl
    def pi_renderers(self) -> list[Renderer]:
        return [Renderer(tool_name="subagent", call=self.render_call, result=self.render_result)]

    @hookimpl
    def pi_resources_discover(self) -> ResourcePaths:
        return ResourcePaths(prompt_paths=sorted((HERE / "prompts").glob("*.md")))

    @hookimpl
    def pi_session_start(self, ctx: ExtensionContext) -> None:
        self.theme = ctx.ui.theme

    @hookimpl
    def pi_session_shutdown(self) -> None:
        terminate_all(self.live)
