"""Running one subagent: a child ``pi --mode json -p --no-session`` whose message events are collected as they
arrive, with its usage summed the way the parent shows it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal as signals
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_core.signals import AbortSignal
from pi_examples.subagent.agents import AgentConfig, AgentScope, discover_agents

ChildStatus = Literal["pending", "running", "completed", "failed", "aborted"]
KILL_GRACE_S = 5.0
_READ_CHUNK = 1 << 16

# A session's children still running (the plugin instance keeps one set), so a session that shuts down mid-call
# takes its own children with it and no other session's.
LiveChildren = set[asyncio.subprocess.Process]


@dataclass
class UsageStats:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    turns: int = 0

    def add_message(self, usage: dict[str, Any]) -> None:
        self.turns += 1
        self.input += int(usage.get("input") or 0)
        self.output += int(usage.get("output") or 0)
        self.cache_read += int(usage.get("cacheRead") or 0)
        self.cache_write += int(usage.get("cacheWrite") or 0)
        cost = usage.get("cost")
        self.cost += float(cost.get("total") or 0) if isinstance(cost, dict) else 0.0
        self.context_tokens = int(usage.get("totalTokens") or 0)

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "cost": self.cost, "contextTokens": self.context_tokens,
                "turns": self.turns}


@dataclass
class SingleResult:
    """What one child did: its messages (user, assistant, toolResult) as the JSON stream reported them."""

    agent: str
    task: str
    agent_source: str = "unknown"
    status: ChildStatus = "pending"
    exit_code: int | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    usage: UsageStats = field(default_factory=UsageStats)
    model: str | None = None
    stop_reason: str | None = None
    error_message: str | None = None
    termination_signal: str | None = None
    step: int | None = None

    @property
    def failed(self) -> bool:
        return self.status in ("failed", "aborted")

    @property
    def active(self) -> bool:
        return self.status in ("pending", "running")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"agent": self.agent, "agentSource": self.agent_source, "task": self.task,
                               "status": self.status, "exitCode": self.exit_code, "messages": self.messages,
                               "stderr": self.stderr, "usage": self.usage.to_json()}
        optional = {"model": self.model, "stopReason": self.stop_reason, "errorMessage": self.error_message,
                    "terminationSignal": self.termination_signal, "step": self.step}
        out.update((key, value) for key, value in optional.items() if value is not None)
        return out


def final_output(messages: list[dict[str, Any]]) -> str:
    """The first text block of the last assistant message that has one."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "text":
                    return str(part.get("text") or "")
    return ""


@dataclass(frozen=True)
class ResolvedAgent:
    """An agent looked up from a task's own working directory (agents are snapshotted when the call starts)."""

    agent: AgentConfig | None
    available: list[AgentConfig]
    cwd: Path


def resolve_agent(default_cwd: Path, scope: AgentScope, name: str, cwd: str | None = None) -> ResolvedAgent:
    effective = Path(os.path.normpath(default_cwd / Path(cwd).expanduser())) if cwd else default_cwd
    found = discover_agents(effective, scope)
    return ResolvedAgent(next((a for a in found.agents if a.name == name), None), found.agents, effective)


@dataclass(frozen=True)
class DispatchDefaults:
    """What a child inherits from the dispatching session when its agent names no model."""

    model: str | None = None
    thinking_level: str | None = None


def child_args(agent: AgentConfig, defaults: DispatchDefaults) -> list[str]:
    args = ["--mode", "json", "-p", "--no-session"]
    model = agent.model or defaults.model
    if model:
        args += ["--model", model]
    if agent.model is None and defaults.thinking_level:
        args += ["--thinking", defaults.thinking_level]
    if agent.tools:
        args += ["--tools", ",".join(agent.tools)]
    return args


def _write_prompt(agent_name: str, prompt: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="pi-subagent-"))
    safe_name = re.sub(r"[^\w.-]+", "_", agent_name)
    path = folder / f"prompt-{safe_name}.md"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(prompt)
    return path


def _remove_prompt(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
    with contextlib.suppress(OSError):
        path.parent.rmdir()


class _Child:
    """Reads one child's JSON event stream into ``result``, calling ``on_change`` after each message."""

    def __init__(self, result: SingleResult, on_change: Callable[[], None]) -> None:
        self.result = result
        self.on_change = on_change

    def line(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            event = json.loads(raw)
        except ValueError:
            return
        if not isinstance(event, dict) or event.get("type") != "message_end":
            return
        message = event.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant", "toolResult"):
            return
        result = self.result
        result.messages.append(message)
        if message["role"] == "assistant":
            usage = message.get("usage")
            result.usage.add_message(usage if isinstance(usage, dict) else {})
            if not result.model and isinstance(message.get("model"), str):
                result.model = message["model"]
            result.stop_reason = message.get("stopReason")
            result.error_message = message.get("errorMessage")
        self.on_change()

    async def read_stdout(self, stream: asyncio.StreamReader) -> None:
        buffer = b""
        while chunk := await stream.read(_READ_CHUNK):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                self.line(raw)
        self.line(buffer)

    async def read_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ_CHUNK):
            self.result.stderr += chunk.decode("utf-8", errors="replace")


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    """Signal the child's whole process group (its own bash commands included) when it still runs."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "nt":
            proc.send_signal(sig)
        else:
            os.killpg(proc.pid, sig)


def terminate_all(live: LiveChildren) -> None:
    for proc in list(live):
        _signal_group(proc, signals.SIGKILL if os.name != "nt" else signals.SIGTERM)


async def run_single_agent(defaults: DispatchDefaults, resolved: ResolvedAgent, agent_name: str, task: str,
                           step: int | None, signal: AbortSignal, on_update: Callable[[SingleResult], None],
                           live: LiveChildren) -> SingleResult:
    """Run one task to its end; never raises for a child that fails (the result says how it failed). The child
    is in ``live`` while it runs."""
    if signal.aborted:
        return SingleResult(agent_name, task, status="aborted", step=step,
                            error_message="Subagent was aborted before starting")
    agent = resolved.agent
    if agent is None:
        available = ", ".join(f'"{a.name}"' for a in resolved.available) or "none"
        return SingleResult(agent_name, task, status="failed", step=step,
                            error_message=f'Unknown agent: "{agent_name}". Available agents: {available}.')
    args = child_args(agent, defaults)
    result = SingleResult(agent_name, task, agent_source=agent.source, status="running",
                          model=agent.model or defaults.model, step=step)
    prompt_path = _write_prompt(agent.name, agent.system_prompt) if agent.system_prompt.strip() else None
    try:
        if prompt_path is not None:
            args += ["--append-system-prompt", str(prompt_path)]
        args.append(f"Task: {task}")
        on_update(result)
        from pi_core.modes.rpc.client import default_command  # this interpreter's pi

        await _run_child([*default_command(), *args], resolved.cwd, result, signal, lambda: on_update(result), live)
        return result
    finally:
        if prompt_path is not None:
            _remove_prompt(prompt_path)


async def _run_child(command: list[str], cwd: Path, result: SingleResult, signal: AbortSignal,
                     on_change: Callable[[], None], live: LiveChildren) -> None:
    try:
        proc = await asyncio.create_subprocess_exec(
            *command, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=os.name != "nt")
    except OSError as err:
        result.status = "failed"
        result.error_message = f"Failed to spawn subagent: {err.strerror or err}"
        if err.filename:
            result.error_message += f": {err.filename}"
        return
    live.add(proc)
    loop = asyncio.get_running_loop()
    aborted = False
    kill_timer: asyncio.TimerHandle | None = None

    def abort() -> None:  # may run on any thread: the signal fires where the abort was asked for
        nonlocal aborted, kill_timer
        if proc.returncode is not None:
            return
        aborted = True
        _signal_group(proc, signals.SIGTERM)
        kill_timer = loop.call_later(KILL_GRACE_S, _signal_group, proc, signals.SIGKILL)

    def abort_soon() -> None:
        loop.call_soon_threadsafe(abort)

    remove = signal.add_callback(abort_soon)
    child = _Child(result, on_change)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        await asyncio.gather(child.read_stdout(proc.stdout), child.read_stderr(proc.stderr))
        code = await proc.wait()
    finally:
        remove()
        live.discard(proc)
        if kill_timer is not None:
            kill_timer.cancel()
        if proc.returncode is None:  # cancelled while running: nothing may outlive the call
            _signal_group(proc, signals.SIGKILL)
    result.exit_code = code if code >= 0 else None
    if code < 0:
        with contextlib.suppress(ValueError):
            result.termination_signal = signals.Signals(-code).name
    _settle(result, code, aborted)


def _settle(result: SingleResult, code: int, aborted: bool) -> None:
    if aborted:
        result.status = "aborted"
        result.error_message = result.error_message or "Subagent was aborted"
    elif result.termination_signal:
        result.status = "failed"
        result.error_message = result.error_message or f"Subagent terminated by signal {result.termination_signal}"
    elif code != 0:
        result.status = "failed"
        result.error_message = result.error_message or f"Subagent exited with code {code}"
    elif result.stop_reason == "aborted":
        result.status = "aborted"
    elif result.stop_reason == "error":
        result.status = "failed"
    else:
        result.status = "completed"
