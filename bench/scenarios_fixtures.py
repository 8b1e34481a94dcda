"""Generated inputs for the scenarios: big text files, a source tree, a long session, plugin packages.

Each generator writes once into the bench's scratch dir and returns the path; generation is never timed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

LINE_BYTES = 100
EDIT_MARKER = "the one unique marker line of the edit scenario"


def text_file(path: Path, size_bytes: int) -> int:
    """A file of ``size_bytes`` (rounded down to whole 100-byte lines); returns its line count."""
    if path.exists() and path.stat().st_size == size_bytes - size_bytes % LINE_BYTES:
        return path.stat().st_size // LINE_BYTES
    lines_per_block = 10_000
    block = "".join(f"{i:07d} " + "lorem ipsum dolor sit amet, consectetur adipiscing elit ".ljust(LINE_BYTES - 9, ".")
                    + "\n" for i in range(lines_per_block)).encode()
    total = size_bytes // LINE_BYTES
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        written = 0
        while written < total:
            take = min(lines_per_block, total - written)
            fh.write(block if take == lines_per_block else block[: take * LINE_BYTES])
            written += take
    return total


def edit_file(path: Path, size_bytes: int) -> None:
    """A text file with :data:`EDIT_MARKER` once, in the middle."""
    half = path.with_suffix(".half")
    lines = text_file(half, size_bytes // 2)
    with path.open("wb") as out:
        for _ in range(2):
            with half.open("rb") as part:
                shutil.copyfileobj(part, out, 1 << 20)
            if out.tell() == lines * LINE_BYTES:
                out.write((EDIT_MARKER + "\n").encode())
    half.unlink()


def source_tree(root: Path, files: int, needle_every: int) -> int:
    """``files`` small Python-like files in 100-file directories; every ``needle_every``-th has a match.

    Returns how many files hold the needle (``needle_<n>``).
    """
    marker = root / ".complete"
    if marker.exists():
        return int(marker.read_text())
    body = "".join(f"def function_{i}(value):\n    return value * {i}  # plain line\n\n" for i in range(10))
    matches = 0
    for n in range(files):
        directory = root / f"pkg_{n // 100:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        extra = ""
        if n % needle_every == 0:
            extra = f"NEEDLE = 'needle_{n}'\n"
            matches += 1
        (directory / f"module_{n:05d}.py").write_text(body + extra)
    marker.write_text(str(matches))
    return matches


def session_file(session_dir: Path, cwd: Path, entries: int, compact_every: int = 400) -> Path:
    """A Pi-format session of about ``entries`` entries for ``cwd``: user prompts, assistant turns with
    thinking and a tool call, tool results, and a compaction every ``compact_every`` entries (a long
    session is compacted as it grows)."""
    from pi_core.sessions import SessionManager

    session_dir.mkdir(parents=True, exist_ok=True)
    sm = SessionManager.create(str(cwd), session_dir)
    sm.append_model_change("fake", "fake-model")
    usage = {"input": 1200, "output": 300, "cacheRead": 5000, "cacheWrite": 0, "totalTokens": 6500,
             "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0.0015, "cacheWrite": 0, "total": 0.0096}}
    assistant = {"role": "assistant", "api": "openai-completions", "provider": "fake", "model": "fake-model", "usage": usage}
    count, i = 1, 0
    while count < entries:
        stamp = 1_765_000_000_000 + i * 1000
        sm.append_message({"role": "user", "content": [{"type": "text", "text": f"Look at module {i}. " * 8}],
                           "timestamp": stamp})
        sm.append_message({**assistant, "content": [
            {"type": "thinking", "thinking": "I should read the file first. " * 5, "thinkingSignature": "sig" * 20},
            {"type": "text", "text": "Reading it now."},
            {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": f"src/mod_{i}.py"}}],
            "stopReason": "toolUse", "timestamp": stamp + 100})
        sm.append_message({"role": "toolResult", "toolCallId": f"call_{i}", "toolName": "read",
                           "content": [{"type": "text", "text": "def f():\n    return 42\n" * 40}],
                           "isError": False, "timestamp": stamp + 200})
        sm.append_message({**assistant, "content": [{"type": "text", "text": "It returns 42. " * 10}],
                           "stopReason": "stop", "timestamp": stamp + 300})
        count += 4
        i += 1
        if compact_every and i % (compact_every // 4) == 0 and count < entries:
            first_kept = sm.get_branch()[-100]["id"]
            sm.append_compaction("## Goal\nBench summary " * 20, first_kept, 150_000,
                                 {"readFiles": [], "modifiedFiles": []}, False)
            count += 1
    path = sm.session_file
    if path is None:
        raise RuntimeError("the session manager wrote no session file")
    return Path(path)


def python_plugins(root: Path, count: int) -> Path:
    """``count`` installed distributions (dist-info + module), each registering one tool; put ``root`` on
    PYTHONPATH. Same shape as a ``pip install``ed plugin pack."""
    if (root / ".complete").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        module = f"bench_plugin_{n:02d}"
        (root / f"{module}.py").write_text(
            "from pi_core import Tool, ToolResult, hookimpl\n\n"
            "def _run(args, ctx):\n"
            f"    return ToolResult.text('plugin {n}: ' + args['text'])\n\n"
            f"TOOL = Tool(name='bench_tool_{n:02d}', label='bench {n}', description='Echo text back (bench {n}).',\n"
            "            parameters={'type': 'object', 'properties': {'text': {'type': 'string'}},\n"
            "                        'required': ['text']}, execute=_run)\n\n"
            "@hookimpl\n"
            "def pi_tools():\n"
            "    return [TOOL]\n")
        info = root / f"bench_plugin_{n:02d}-1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: bench-plugin-{n:02d}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pi]\nbench_tool_{n:02d} = {module}\n")
    (root / ".complete").write_text(str(count))
    return root


def node_extensions(extensions_dir: Path, count: int) -> None:
    """``count`` Pi extension files, each registering one tool (Pi's extension format)."""
    extensions_dir.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
        (extensions_dir / f"bench_ext_{n:02d}.ts").write_text(
            "export default function (pi: any) {\n"
            "  pi.registerTool({\n"
            f"    name: 'bench_tool_{n:02d}', label: 'bench {n}', description: 'Echo text back (bench {n}).',\n"
            f"    parameters: {json.dumps(parameters)},\n"
            "    async execute(_id: string, params: any) {\n"
            f"      return {{ content: [{{ type: 'text', text: 'plugin {n}: ' + params.text }}], details: {{}} }};\n"
            "    },\n"
            "  });\n"
            "}\n")


NOOP_HOOKS = (
    "def pi_context(ctx, messages):\n    return None\n",
    "def pi_agent_event(ctx, event):\n    return None\n",
    "def pi_before_tool_call(ctx, call):\n    return None\n",
    "def pi_after_tool_call(ctx, call, result, is_error):\n    return None\n",
    "def pi_before_provider_request(ctx, payload, model):\n    return None\n",
    "def pi_before_provider_headers(ctx, headers, model):\n    return None\n",
    "def pi_after_provider_response(ctx, status, headers, model):\n    return None\n",
    "def pi_before_agent_start(ctx, prompt, system_prompt):\n    return None\n",
    "def pi_input(ctx, text, source):\n    return None\n",
)
# Pi's names for the same moments: every agent event (pi_agent_event sees them all) plus the hooks above.
NODE_NOOP_EVENTS = ("context", "tool_call", "tool_result", "before_provider_request", "after_provider_response",
                    "before_agent_start", "input", "agent_start", "agent_end", "turn_start", "turn_end",
                    "message_start", "message_update", "message_end", "tool_execution_start",
                    "tool_execution_update", "tool_execution_end")


def python_noop_plugins(root: Path, count: int) -> Path:
    """``count`` installed distributions whose plugin implements every per-turn tool, context and provider
    hook as a no-op taking ``ctx`` (what a watching plugin costs, with none of its own work), plus one tool
    so a request shows it loaded."""
    if (root / ".complete").exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    hooks = "".join(f"\n@hookimpl\n{hook}\n" for hook in NOOP_HOOKS)
    for n in range(count):
        module = f"bench_noop_{n:02d}"
        (root / f"{module}.py").write_text(
            "from pi_core import Tool, ToolResult, hookimpl\n\n"
            f"TOOL = Tool(name='{module}', label='noop {n}', description='Say nothing (bench {n}).',\n"
            "            parameters={'type': 'object', 'properties': {}},\n"
            "            execute=lambda args, ctx: ToolResult.text(''))\n\n"
            "@hookimpl\ndef pi_tools():\n    return [TOOL]\n" + hooks)
        info = root / f"{module}-1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: bench-noop-{n:02d}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pi]\nbench_noop_{n:02d} = {module}\n")
    (root / ".complete").write_text(str(count))
    return root


def node_noop_extensions(extensions_dir: Path, count: int) -> None:
    """``count`` Pi extension files subscribing a no-op handler to the same moments (and one tool each, as the
    Python plugins, so a request shows they loaded)."""
    extensions_dir.mkdir(parents=True, exist_ok=True)
    events = json.dumps(list(NODE_NOOP_EVENTS))
    for n in range(count):
        (extensions_dir / f"bench_noop_{n:02d}.ts").write_text(
            "export default function (pi: any) {\n"
            f"  pi.registerTool({{ name: 'bench_noop_{n:02d}', label: 'noop {n}', description: 'Say nothing (bench {n}).',\n"
            "    parameters: { type: 'object', properties: {} },\n"
            "    async execute() { return { content: [{ type: 'text', text: '' }], details: {} }; } });\n"
            f"  for (const name of {events}) pi.on(name, () => undefined);\n"
            "}\n")


def fresh_copy(source: Path, target: Path) -> None:
    """Copy ``source`` over ``target`` (untimed per-run set-up for scenarios that change their input)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)
