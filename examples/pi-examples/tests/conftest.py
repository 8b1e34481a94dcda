"""Run the real ``pi`` with one example plugin enabled (``-e plugin:NAME``) against the fake model server.

``example.run("hello", "-p", "hi")`` runs print mode; ``example.rpc("hello")`` starts ``pi --mode rpc`` and
returns an ``RpcClient``; ``example.server`` scripts the model (``server.add(Reply(...))``) and records what
pi sent (``server.requests``). The project folder is ``example.cwd``, the agent dir ``example.home``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pi_core.modes.rpc.client import RpcClient
from pi_core.sdk import Session, create_session
from pi_core.testing.fake_server import FakeModelServer
from pi_core.testing.pi_home import write_models

PI = [sys.executable, "-c", "from pi_core.app.cli import cli; cli()"]
# Commits made by a test or by a plugin under test must not depend on the machine's git configuration.
GIT_ENV = {"GIT_AUTHOR_NAME": "Pi Test", "GIT_AUTHOR_EMAIL": "pi@example.invalid", "GIT_COMMITTER_NAME": "Pi Test",
           "GIT_COMMITTER_EMAIL": "pi@example.invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass
class ExamplePi:
    server: FakeModelServer
    home: Path  # PI_CODING_AGENT_DIR
    cwd: Path
    api: str = "anthropic-messages"
    clients: list[RpcClient] = field(default_factory=list)

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TMUX"}
        return {**env, **GIT_ENV, "PI_CODING_AGENT_DIR": str(self.home), **extra}

    def args(self, example: str | None, *args: str) -> list[str]:
        enable = ["-e", f"plugin:{example}"] if example else []
        return [*enable, "--provider", "fake", "--model", "fake-model", *args]

    def run(self, example: str | None, *args: str, stdin: str = "", timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``pi -e plugin:EXAMPLE --provider fake --model fake-model ARGS`` to the end."""
        return subprocess.run([*PI, *self.args(example, *args)], input=stdin, capture_output=True, text=True,
                              cwd=self.cwd, env=self.env(**(env or {})), timeout=timeout, check=False)

    def add_model(self, model_id: str) -> None:
        """Serve one more model, ``fake/MODEL_ID``, from the fake server (models.json)."""
        path = self.home / "models.json"
        models = json.loads(path.read_text())
        entries = models["providers"]["fake"]["models"]
        entries.append({**entries[0], "id": model_id, "name": model_id})
        path.write_text(json.dumps(models))

    def rpc(self, example: str | None, *args: str, env: dict[str, str] | None = None) -> RpcClient:
        """A started ``pi --mode rpc`` with the example enabled; stopped when the test ends."""
        client = RpcClient(self.args(example, *args), command=PI, cwd=self.cwd,
                           env=self.env(**(env or {}))).start()
        self.clients.append(client)
        return client

    def system_prompt(self, request: int) -> str:
        """The system prompt of the ``request``-th model request (the Anthropic wire's ``system`` blocks)."""
        system = self.server.requests[request].body.get("system") or []
        return system if isinstance(system, str) else "".join(block.get("text", "") for block in system)

    def tool_results(self, request: int) -> list[str]:
        """The texts of the tool results the ``request``-th model request carries in its last message."""
        blocks = self.server.requests[request].body["messages"][-1]["content"]
        texts = []
        for block in blocks if isinstance(blocks, list) else []:
            if block.get("type") == "tool_result":
                content = block.get("content")
                texts.append(content if isinstance(content, str) else
                             "".join(part.get("text", "") for part in content or []))
        return texts

    @staticmethod
    def ui_requests(client: RpcClient, method: str) -> list[dict[str, Any]]:
        """The extension-UI requests of one method (``notify``, ``setStatus``...) the client has received."""
        return [e for e in client.events if e.get("type") == "extension_ui_request" and e.get("method") == method]

    def git(self, *args: str) -> str:
        """git in the project folder with the tests' identity; returns stdout (see module-level ``git``)."""
        return git(self.cwd, *args)

    def user_text(self, request: int, index: int = -1) -> str:
        """The text of the ``index``-th user message (tool results left out) of request ``request``."""
        texts = []
        for message in self.server.requests[request].body["messages"]:
            if message["role"] != "user":
                continue
            content = message["content"]
            if isinstance(content, str):
                texts.append(content)
            elif not any(block.get("type") == "tool_result" for block in content):
                texts.append("\n".join(block.get("text", "") for block in content if block.get("type") == "text"))
        return texts[index]


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with the tests' identity; returns stdout, raises on failure."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **GIT_ENV})
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def init_repo(cwd: Path) -> Path:
    """A git repository on branch main with one commit of ``README.md``."""
    git(cwd, "init", "-q", "-b", "main")
    (cwd / "README.md").write_text("hello\n")
    git(cwd, "add", "README.md")
    git(cwd, "commit", "-q", "-m", "initial")
    return cwd


@pytest.fixture
def repo(example: ExamplePi) -> Path:
    """``example.cwd`` as a git repository with one commit (see ``init_repo``)."""
    return init_repo(example.cwd)


@pytest.fixture
def git_repo() -> Callable[[Path], Path]:
    """``git_repo(path)``: make ``path`` a repository with one commit, later in a test (see ``init_repo``)."""
    return init_repo


FRESH = """
from pi_core import hookimpl
from pi_core import SlashCommand

async def fresh(args, ctx):
    change = await ctx.new_session()
    print("cancelled" if change.cancelled else "replaced", flush=True)

@hookimpl
def pi_commands():
    return [SlashCommand(name="fresh", description="start a new session", handler=fresh)]
"""


@pytest.fixture
def fresh_command(tmp_path: Path) -> Path:
    """A plugin file for ``-e``: ``/fresh`` asks for a new session and prints "replaced" or "cancelled", so print
    mode (which has no /new) can show what a ``pi_session_before_switch`` plugin decides without a UI."""
    path = tmp_path / "fresh.py"
    path.write_text(FRESH)
    return path


@pytest.fixture
def background() -> Iterator[Callable[..., Future[Any]]]:
    """``background(client.new_session)``: run a blocking RPC call on a thread while the test answers its dialogs."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        yield pool.submit


def ui_request(client: RpcClient, method: str, *, after: int = 0, timeout: float = 30,
               **fields: object) -> dict[str, Any]:
    """The first ``extension_ui_request`` of ``method`` (at event index >= ``after``) whose fields match."""
    return client.wait_for_event(lambda e: e.get("type") == "extension_ui_request" and e.get("method") == method
                                 and all(e.get(k) == v for k, v in fields.items()), after=after, timeout=timeout)


@pytest.fixture
def ui() -> Callable[..., dict[str, Any]]:
    """``ui(client, "select", title=...)``: wait for an extension UI request over RPC (see ``ui_request``)."""
    return ui_request


@pytest.fixture
def example(tmp_path: Path) -> Iterator[ExamplePi]:
    with FakeModelServer() as server:
        home, cwd = tmp_path / "agent", tmp_path / "project"
        cwd.mkdir()
        write_models(home, server.base_url_for("anthropic-messages"), "anthropic-messages")
        runner = ExamplePi(server, home, cwd)
        yield runner
        for client in runner.clients:
            client.stop()


SdkSessions = Callable[..., contextlib.AbstractAsyncContextManager[list[Session]]]


@pytest.fixture
def sdk_sessions(example: ExamplePi, monkeypatch: pytest.MonkeyPatch) -> SdkSessions:
    """``async with sdk_sessions("todo") as (first, second):`` two SDK sessions in this one process, each with the
    example on, in ``example.cwd`` with ``example.home`` as the agent dir: what one session's plugin keeps must
    not show in the other (a class plugin has an instance per session; a module global would be shared)."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(example.home))

    @contextlib.asynccontextmanager
    async def sessions(name: str, count: int = 2) -> AsyncIterator[list[Session]]:
        made: list[Session] = []
        try:
            for _ in range(count):
                made.append(await create_session(cwd=example.cwd, model="fake/fake-model", plugins=[f"plugin:{name}"]))
            yield made
        finally:
            for session in made:
                await session.dispose()

    return sessions
