"""The dependency list is true (issue 31): every runtime dependency in pyproject.toml is imported by a run of
pi (the ``ripgrep`` wheel, which only ships the ``rg`` binary, excepted), every third-party module pi's code
imports is declared, and no third-party private module or pluggy internal is reached into.

The run paths are real ``pi`` processes against the fake model server: print on the Anthropic and Completions
wires (a tool call reading a large image, a skill file), json on the Responses wire, rpc, an MCP server from
PyPI, ``--export`` to HTML (a mermaid diagram in it), a bash call in a Landlock sandbox, an editor's session over ACP and the interactive
UI on a pseudo-terminal. Each writes the modules it loaded at exit, through a ``sitecustomize`` the test puts
on ``PYTHONPATH`` (child processes that are not pi, such as the MCP server, write nothing)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import CLI, PiRunner, pi_runner
from tests.providers.ptyrun import PtyPi

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pi_core", "plugins", "builtin_tools")
# A runtime dependency no run imports, with the reason it is still one.
BINARY_ONLY = {"ripgrep": "ships the rg binary grep and find run; it has no Python module"}
# pi_core.testing is the pytest plugin (entry point pytest11): it runs only under pytest, from [test].
TEST_ONLY_SOURCES = {"pytest": "pi_core/testing/"}

SITECUSTOMIZE = """\
import atexit
import os
import sys
import time


def _write_modules():
    if "pi_core.app.cli" in sys.modules:  # pi itself, not a server or tool it started
        path = os.path.join(os.environ["PI_TEST_MODULES_DIR"], f"{os.getpid()}.txt")
        with open(path, "w") as out:
            out.write("\\n".join(sorted(sys.modules)))


atexit.register(_write_modules)
"""


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return _normal(match.group(0))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def runtime_dependencies() -> list[str]:
    return [_name(r) for r in _project()["dependencies"]]


def modules_of() -> dict[str, set[str]]:
    """Each installed distribution's top-level modules, by normalised name."""
    found: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            found.setdefault(_normal(dist), set()).add(module)
    return found


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """The modules each run path loaded, by path."""
    root = tmp_path_factory.mktemp("deps")
    site = root / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    paths: dict[str, set[str]] = {}
    for name, run in RUNS.items():
        out = root / name / "modules"
        out.mkdir(parents=True)
        with pi_runner(root / name, API[name]) as pi:
            search = [str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
            pi.extra_env.update(PYTHONPATH=os.pathsep.join(search), PI_TEST_MODULES_DIR=str(out),
                                PI_MCP_STARTUP_WAIT="60")  # a loaded machine can take long to start the server
            run(pi)
        written = list(out.iterdir())
        assert written, f"the {name} run wrote no module list"
        paths[name] = {line for path in written for line in path.read_text().splitlines()}
    return paths


def _print_anthropic(pi: PiRunner) -> None:
    pi.server.add(Reply(thinking="so", text="the answer"))
    done = pi.run("-p", "hi")
    assert done.returncode == 0 and done.stdout == "the answer\n", done.stderr


def _print_tools(pi: PiRunner) -> None:
    """A tool call (streamed arguments, validated) reading an image too large to send as it is, with a skill."""
    from PIL import Image

    Image.new("RGB", (2400, 40), "red").save(pi.cwd / "wide.png")
    skill = pi.home / "skills" / "tidy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: tidy\ndescription: Tidy the workspace.\n---\nTidy it.\n")
    pi.server.add(Reply(tool_calls=[("read", {"path": "wide.png"})]), Reply(text="the answer"))
    done = pi.run("-p", "look")
    assert done.returncode == 0 and done.stdout == "the answer\n", done.stderr
    sent = json.dumps(pi.server.requests[1].body)
    assert "image/png" in sent and "tidy" in json.dumps(pi.server.requests[0].body)


def _json_responses(pi: PiRunner) -> None:
    pi.server.add(Reply(text="the answer"))
    done = pi.run("--mode", "json", "hi")
    assert done.returncode == 0 and '"agent_end"' in done.stdout, done.stderr


def _rpc(pi: PiRunner) -> None:
    """A prompt, then a thinking level (which the settings file keeps)."""
    pi.server.add(Reply(text="the answer"))
    process = subprocess.Popen(pi.command("--mode", "rpc"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=pi.cwd, env=pi.env())
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"type": "prompt", "message": "hi", "id": "1"}) + "\n")
    process.stdin.flush()
    for line in process.stdout:
        if '"agent_end"' in line:
            break
    process.stdin.write(json.dumps({"type": "set_thinking_level", "level": "high", "id": "2"}) + "\n")
    process.stdin.flush()
    rest, errors = process.communicate(timeout=60)  # closes stdin: pi leaves
    assert process.returncode == 0, errors
    assert '"id":"2"' in rest.replace(" ", "")


def _mcp(pi: PiRunner) -> None:
    server = {"command": str(Path(sys.executable).parent / "mcp-server-time"), "args": ["--local-timezone", "UTC"],
              "exposure": "direct"}
    (pi.home / "mcp.json").write_text(json.dumps({"mcpServers": {"time": server}}))
    pi.server.add(Reply(tool_calls=[("mcp__time__get_current_time", {"timezone": "UTC"})]), Reply(text="noon"))
    done = pi.run("-p", "what time is it", timeout=120)
    assert done.returncode == 0 and done.stdout == "noon\n", done.stderr
    assert '"timezone": "UTC"' in json.dumps(pi.server.requests[1].body).replace('\\"', '"')


def _export(pi: PiRunner) -> None:
    pi.server.add(Reply(text="Some **bold** and\n\n```python\nx = 1\n```\n\n```mermaid\ngraph LR\n  A --> B\n```"))
    assert pi.run("-p", "hi").returncode == 0
    [session] = pi.session_files()
    out = pi.cwd / "out.html"
    done = pi.run("--export", str(session), str(out))
    assert done.returncode == 0, done.stderr
    assert "<strong>bold</strong>" in out.read_text() and 'class="mermaid-diagram"' in out.read_text()


def _sandbox(pi: PiRunner) -> None:
    """A bash call confined by Landlock: it writes in the workspace, not outside it."""
    from pi_plugins.sandbox.landlock import abi

    pi.settings('[sandbox]\nmode = "workspace-write"\nmechanism = "landlock"\n')
    outside = pi.home / "outside.txt"
    pi.server.add(Reply(tool_calls=[("bash", {"command": f"echo in > inside.txt; echo out > {outside}"})]),
                  Reply(text="done"))
    done = pi.run("-p", "write")
    if abi() < 1:  # this kernel has no Landlock: pi refuses to run unconfined, having asked landlockpy
        assert done.returncode != 0 and "landlock" in done.stderr.lower(), done.stderr
        return
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    assert (pi.cwd / "inside.txt").read_text() == "in\n" and not outside.exists()


def _codemode(pi: PiRunner) -> None:
    """A codemode script computed by QuickJS. Its worker runs isolated (``python -I -S``: no site, so no module
    recorder), so the run records the binding's modules itself once the script's answer proves QuickJS ran."""
    pi.server.add(Reply(tool_calls=[("codemode", {"code": "return [6 * 7, typeof process].join(' ')"})]),
                  Reply(text="done"))
    done = pi.run("-p", "--tools", "+codemode", "go", timeout=90)
    assert done.returncode == 0 and done.stdout == "done\n", done.stderr
    messages = pi.server.requests[1].body["messages"]
    result = json.dumps(messages[-1]["content"])
    assert "Script completed" in result and "42 undefined" in result, result  # JavaScript ran, without Node
    out = Path(pi.extra_env["PI_TEST_MODULES_DIR"]) / "codemode-worker"
    out.write_text("\n".join(sorted(modules_of()["quickjs-ng"])) + "\n")


def _acp(pi: PiRunner) -> None:
    """An editor's session over ACP on raw pipes: initialize, a new session, one prompt answered."""
    from acp import PROTOCOL_VERSION

    pi.server.add(Reply(text="the answer"))
    requests = [("initialize", {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {}}),
                ("session/new", {"cwd": str(pi.cwd), "mcpServers": []})]
    process = subprocess.Popen(pi.command("--mode", "acp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, cwd=pi.cwd, env=pi.env())
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, dict] = {}
    try:
        for number, (method, params) in enumerate(requests, 1):
            answers[number] = _acp_answer(process, number, method, params)
        session = answers[2]["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        answers[3] = _acp_answer(process, 3, "session/prompt", prompt)
        process.stdin.close()
        assert process.wait(60) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
    assert answers[3]["result"]["stopReason"] == "end_turn", answers[3]


def _acp_answer(process: subprocess.Popen[str], number: int, method: str, params: dict) -> dict:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n")
    process.stdin.flush()
    for line in process.stdout:
        message = json.loads(line)
        if message.get("id") == number:
            return message  # type: ignore[no-any-return]
    raise AssertionError(f"pi acp closed stdout before answering {method}")


def _interactive(pi: PiRunner) -> None:
    pi.server.add(Reply(text="## Done\n\nthe **answer**"))
    env = {**pi.env(), "TERM": "xterm-256color"}
    ui = PtyPi(["--provider", "fake", "--model", "fake-model", "--tui-mode", "regular"], env, pi.cwd)
    try:
        ui.expect("(fake)", timeout=60)
        os.write(ui.master, b"hello\r")
        ui.expect("answer", timeout=60)
        os.write(ui.master, b"/quit\r")
        assert ui.wait(60) == 0
    finally:
        if ui.proc.poll() is None:
            ui.proc.kill()



def _codex_websocket(pi: PiRunner) -> None:
    """A Codex sign-in: the request goes over the WebSocket transport (``transport`` defaults to auto)."""
    from pi_core.testing.fake_auth import store_codex_sign_in

    store_codex_sign_in(pi.home, pi.server.url)
    pi.server.add(Reply(text="over the socket"))
    done = subprocess.run([*CLI, "-p", "--model", "openai-codex/gpt-5.6-sol", "hi"], capture_output=True, text=True,
                          cwd=pi.cwd, env=pi.env(), timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "over the socket" in done.stdout, done.stderr
    assert pi.server.requests[0].method == "WS"


RUNS = {"print-anthropic": _print_anthropic, "print-tools": _print_tools, "json": _json_responses, "rpc": _rpc,
        "mcp": _mcp, "export": _export, "sandbox": _sandbox, "acp": _acp, "interactive": _interactive,
        "codemode": _codemode, "codex-websocket": _codex_websocket}
API = {"print-anthropic": "anthropic-messages", "print-tools": "openai-completions", "json": "openai-responses",
       "rpc": "google-generative-ai", "mcp": "openai-completions", "export": "anthropic-messages",
       "sandbox": "anthropic-messages", "acp": "openai-responses", "interactive": "anthropic-messages",
       "codemode": "anthropic-messages", "codex-websocket": "openai-responses"}


def test_every_runtime_dependency_is_imported_by_a_run_of_pi(loaded: dict[str, set[str]]) -> None:
    installed = modules_of()
    top = {name: {module.split(".")[0] for module in modules} for name, modules in loaded.items()}
    unused, where = [], {}
    for dist in runtime_dependencies():
        if dist in BINARY_ONLY:
            assert not installed.get(dist), f"{dist} is excepted as binary-only but has modules"
            continue
        modules = installed.get(dist)
        assert modules, f"{dist} is declared but not installed"
        paths = sorted(name for name, seen in top.items() if seen & modules)
        if not paths:
            unused.append(dist)
        where[dist] = paths
    assert unused == [], f"declared but imported by no run of pi: {unused} (move them to an extra); seen: {where}"


def test_the_sdk_oracles_are_test_dependencies_only() -> None:
    assert not {"anthropic", "openai"} & set(runtime_dependencies())
    test_extra = {_name(r) for r in _project()["optional-dependencies"]["test"]}
    assert {"anthropic", "openai"} <= test_extra


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    """Every absolute import of a module: its full dotted name (``from a import b`` gives ``a.b``) and line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield from ((f"{node.module}.{alias.name}", node.lineno) for alias in node.names)


def _third_party_imports() -> Iterator[tuple[str, str, int]]:
    for source in SOURCES:
        for path in sorted((REPO / source).rglob("*.py")):
            for name, line in _imports(path):
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and not top.startswith("pi_") and top != "__future__":
                    yield str(path.relative_to(REPO)), name, line


UNINSTALLED_EXTRA_MODULES = {"azure": "azure-identity", "google": "google-auth"}


def test_every_third_party_module_pi_imports_is_declared() -> None:
    project = _project()
    declared = set(runtime_dependencies()) | {_name(r) for extra, reqs in project["optional-dependencies"].items()
                                              if extra != "test" for r in reqs}
    dists = packages_distributions()
    undeclared = []
    for where, name, line in _third_party_imports():
        top = name.split(".")[0]
        if top in TEST_ONLY_SOURCES and where.startswith(TEST_ONLY_SOURCES[top]):
            continue
        # Not installed (a venv without the cloud extras): the module's name, or the extra's distribution for
        # the namespace packages whose name is not their distribution's.
        owners = {_normal(d) for d in dists.get(top, [])} or {_normal(UNINSTALLED_EXTRA_MODULES.get(top, top))}
        if not owners & declared:
            undeclared.append(f"{where}:{line} imports {top} (from {sorted(owners)})")
    assert undeclared == []


def test_no_private_module_of_a_library_is_imported_nor_pluggy_internals_read() -> None:
    private = [f"{where}:{line} imports {name}" for where, name, line in _third_party_imports()
               if any(part.startswith("_") and not part.startswith("__") for part in name.split(".")[1:])]
    assert private == []
    pattern = re.compile(r"\._hookimpls\b|anthropic\._|openai\._")
    reads = [f"{path.relative_to(REPO)}:{number}" for source in SOURCES for path in (REPO / source).rglob("*.py")
             for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(text)]
    assert reads == []
