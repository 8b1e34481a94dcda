"""An MCP stdio server whose tools try to write and read files, to show where pi's sandbox confines it."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


@server.tool(description="Write `text` to the file at `path`; say what happened.")
def touch(path: str, text: str) -> str:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as err:
        return f"refused: {err.strerror}"
    return "wrote"


@server.tool(description="Read the file at `path`; say what happened.")
def peek(path: str) -> str:
    try:
        with open(path) as handle:
            return f"read: {handle.read()}"
    except OSError as err:
        return f"refused: {err.strerror}"


if __name__ == "__main__":
    server.run()
