"""Harness for ACP tests: ``pi --mode acp`` as a subprocess on real pipes, driven by the SDK's own client side
(``acp.spawn_agent_process``) against the fake model server.

``Editor`` plays the editor: it records every ``session/update``, answers permission questions as the test says,
keeps unsaved buffers that ``fs/read_text_file`` serves before the disk, and runs ``terminal/*`` commands as real
processes of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, schema, spawn_agent_process

from pi_core.testing.fake_server import FakeModelServer

# The Google wire is served by plain httpx2: no vendor SDK to import, so each pi process starts faster.
API = "google-generative-ai"
PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
STEP_TIMEOUT = 60.0


def write_models(home: Path, base_url: str, openai_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    common = {"input": ["text", "image"], "contextWindow": 100000, "maxTokens": 4096,
              "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
    models = {"providers": {"fake": {"baseUrl": base_url, "api": API, "apiKey": "test-key", "models": [
        {"id": "fake-model", "name": "Fake Model", "reasoning": False, **common},
        {"id": "fake-think", "name": "Fake Thinker", "reasoning": True, **common},
    ]}, "fake-openai": {"baseUrl": openai_url, "api": "openai-completions", "apiKey": "test-key", "models": [
        {"id": "fake-gpt", "name": "Fake GPT", "reasoning": False, **common},  # its finish reasons: refusals
    ]}}}
    (home / "models.json").write_text(json.dumps(models))


class Terminal:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.output = ""
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output += chunk.decode("utf-8", "replace")

    def status(self) -> schema.TerminalExitStatus | None:
        code = self.process.returncode
        if code is None:
            return None
        return schema.TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name) if code < 0 \
            else schema.TerminalExitStatus(exit_code=code)


class Editor:
    """The client side: what an editor answers and what it was told."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[schema.RequestPermissionRequest] = []
        # the option id to choose (None: the user dismissed the question); default: the first option
        self.choose: Callable[[list[schema.PermissionOption]], str | None] = lambda options: options[0].option_id
        self.buffers: dict[str, str] = {}  # unsaved editor buffers by absolute path
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, Terminal] = {}
        self.commands: list[str] = []
        self.permission_asked = asyncio.Event()
        self.hold_permissions: asyncio.Event | None = None
        self.terminal_started = asyncio.Event()

    # --- what the agent calls ---------------------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(self, session_id: str, tool_call: schema.ToolCallUpdate,
                                 options: list[schema.PermissionOption], **kwargs: Any) -> Any:
        self.permissions.append(schema.RequestPermissionRequest(session_id=session_id, tool_call=tool_call,
                                                                options=options))
        self.permission_asked.set()
        if self.hold_permissions is not None:  # the user has not answered yet
            await self.hold_permissions.wait()
        chosen = self.choose(options)
        if chosen is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> schema.ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers[path] if path in self.buffers else Path(path).read_text(encoding="utf-8")
        return schema.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> schema.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content  # into the editor's buffer; the user saves it later
        return schema.WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[schema.EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> schema.CreateTerminalResponse:
        environment = {**os.environ, **{v.name: v.value for v in env or []}}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=environment, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = Terminal(process)
        self.commands.append(" ".join([command, *(args or [])]))
        self.terminal_started.set()
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        return schema.TerminalOutputResponse(output=terminal.output, truncated=False, exit_status=terminal.status())

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> schema.WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        await terminal.process.wait()
        await terminal.reader
        status = terminal.status()
        assert status is not None
        return schema.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> schema.KillTerminalResponse:
        process = self.terminals[terminal_id].process
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> schema.ReleaseTerminalResponse:
        await self.kill_terminal(session_id, terminal_id)
        return schema.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        pass

    # --- what tests read --------------------------------------------------------------------------------

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for sid, u in self.updates if session_id is None or sid == session_id]

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _sid, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind) if getattr(u.content, "type", "") == "text")

    def tool_updates(self, call_id: str) -> list[Any]:
        return [u for _sid, u in self.updates if u.session_update in ("tool_call", "tool_call_update")
                and u.tool_call_id == call_id]


class AcpEnv:
    """The project folder and pi's home, with a models.json pointing at the fake server."""

    def __init__(self, server: FakeModelServer, tmp_path: Path) -> None:
        self.server = server
        self.home = tmp_path / "agent"
        self.cwd = tmp_path / "project"
        self.cwd.mkdir()
        write_models(self.home, server.base_url_for(API), server.base_url_for("openai-completions"))

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["PI_CODING_AGENT_DIR"] = str(self.home)
        env["PI_OFFLINE"] = "1"
        return env

    @contextlib.asynccontextmanager
    async def connect(self, *args: str, fs: bool = False, terminal: bool = False, command: list[str] | None = None,
                      ) -> AsyncIterator[tuple[Any, Editor, asyncio.subprocess.Process]]:
        """Start ``pi --mode acp ARGS`` (or ``command``), initialize, and yield (connection, editor, process)."""
        editor = Editor(self.cwd)
        command = command or [*PI, "--mode", "acp", *args]
        async with spawn_agent_process(editor, command[0], *command[1:], env=self.env(),
                                       cwd=self.cwd) as (conn, process):
            caps = schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal)
            init = await step(conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps))
            assert init.protocol_version == PROTOCOL_VERSION
            try:
                yield conn, editor, process
            finally:
                if process.returncode is None and process.stdin is not None:
                    process.stdin.close()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(process.wait(), 15)

    def session_files(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("*.jsonl"))

    def entries(self, path: Path | None = None) -> list[dict[str, Any]]:
        if path is None:
            (path,) = self.session_files()
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def step(awaitable: Any, timeout: float = STEP_TIMEOUT) -> Any:
    """One protocol step, bounded: a hang fails the test with a message instead of the suite's timeout."""
    return await asyncio.wait_for(awaitable, timeout)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def until(predicate: Callable[[], Any], timeout: float = STEP_TIMEOUT, what: str = "the condition") -> Any:
    """Wait until ``predicate()`` is truthy and return it (the editor's updates arrive on their own)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := predicate()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
    return value


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
