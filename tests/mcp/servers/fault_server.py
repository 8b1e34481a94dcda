"""An MCP server built with the SDK's server API that misbehaves on request, for pi's fault tests.

Run as ``python fault_server.py [--slow-start S] [--crash-at-start] [--pidfile P] [--ignore-term] [--child]``.
Tools: echo, hang, crash (exits mid-call), malformed (answers with an invalid result), big (MBs of text),
add_tool/remove_tool (change the tool list), slow_progress (progress notifications), log, image, fail.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

parser = argparse.ArgumentParser()
parser.add_argument("--slow-start", type=float, default=0.0)
parser.add_argument("--crash-at-start", action="store_true")
parser.add_argument("--pidfile")
parser.add_argument("--ignore-term", action="store_true")
parser.add_argument("--child", action="store_true", help="start a long-lived child, like npx/uvx wrappers do")
parser.add_argument("--instructions", default="Fault injection tools for testing pi.")
options = parser.parse_args()
WIRE = os.dup(1)  # the SDK moves the protocol off fd 1 while it serves; keep a way to write on it directly

pids = [os.getpid()]
if options.child:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    pids.append(child.pid)
if options.pidfile:
    with open(options.pidfile, "a") as handle:
        handle.write("".join(f"{pid}\n" for pid in pids))
if options.ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if options.crash_at_start:
    sys.stderr.write("fault_server: cannot open the database at /nonexistent (permission denied)\n")
    sys.stderr.flush()
    sys.exit(3)
if options.slow_start:
    time.sleep(options.slow_start)

server = MCPServer("faults", instructions=options.instructions)


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Never answer.")
async def hang() -> str:
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool(description="Exit while the call is running.")
async def crash() -> str:
    sys.stderr.write("fault_server: segmentation fault in crash()\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool(description="Answer with a result that is not a valid CallToolResult.")
async def malformed(ctx: Context) -> str:
    request_id = int(ctx.request_id) if str(ctx.request_id).isdigit() else ctx.request_id
    line = json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "result": {"content": [{"type": "text", "text": 12345}], "isError": "maybe"}})
    os.write(WIRE, (line + "\n").encode())
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool(description="Return about size_mb megabytes of numbered lines.")
def big(size_mb: float = 10.0) -> str:
    line = "0123456789" * 9 + "\n"
    count = int(size_mb * 1024 * 1024 / (len(line) + 8))
    return "".join(f"{i:07d} {line}" for i in range(count))


@server.tool(description="Add a tool named `name` that returns its own name.")
async def add_tool(name: str, ctx: Context) -> str:
    server.add_tool(lambda: f"I am {name}", name=name, description=f"Dynamically added tool {name}.")
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool(description="Remove the tool named `name`.")
async def remove_tool(name: str, ctx: Context) -> str:
    server.remove_tool(name)
    await ctx.notify_tools_changed()
    return f"removed {name}"


@server.tool(description="Report progress every `step` seconds for `seconds`, then answer.")
async def slow_progress(seconds: float, step: float, ctx: Context) -> str:
    started = time.monotonic()
    done = 0
    while time.monotonic() - started < seconds:
        await asyncio.sleep(step)
        done += 1
        await ctx.report_progress(done, None, f"step {done}")
    return f"finished after {done} steps"


@server.tool(description="Send a log message to the client.")
async def log(message: str, ctx: Context) -> str:
    await ctx.log("warning", message, logger_name="faults")
    return "logged"


@server.tool(description="Return a tiny PNG image and a caption.")
def image() -> list:
    from mcp.server.mcpserver.utilities.types import Image

    return ["a 1x1 pixel", Image(data=PNG_1X1, format="png")]


@server.tool(description="Fail with an error the model should read.")
def fail(reason: str) -> str:
    raise ToolError(f"the operation failed: {reason}")


@server.resource("note://greeting", name="greeting", description="A friendly note", mime_type="text/plain")
def greeting() -> str:
    return "Hello from the fault server's resource."


@server.resource("blob://data.bin", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes(range(256))


if __name__ == "__main__":
    server.run()
