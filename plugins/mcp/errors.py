"""What went wrong with an MCP server, in words a user or the model can act on (``describe_error``), and whether
it is worth another try (``is_transient``) or means the connection is gone (``is_connection_lost``)."""

from __future__ import annotations

import asyncio

import anyio
import httpx2
import mcp_types as types
import pydantic
from mcp.shared.exceptions import MCPError

from pi_core.errors import PiError


class McpCallError(PiError):
    """A call failed in a way the model should read (timeout, server gone, protocol error)."""


class SignInRequired(PiError):
    pass


def root_cause(err: BaseException) -> BaseException:
    """The first real error inside the exception groups anyio task groups wrap errors in."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = next((e for e in err.exceptions if not isinstance(e, asyncio.CancelledError)), err.exceptions[0])
    return err


def describe_error(err: BaseException) -> str:
    err = root_cause(err)
    if isinstance(err, SignInRequired):
        return str(err)
    if isinstance(err, FileNotFoundError):
        return f"command not found: {err.filename or err}"
    if isinstance(err, OSError) and err.strerror:  # e.g. a command that is not executable
        return f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    if isinstance(err, TimeoutError):
        return str(err) or "timed out"
    if isinstance(err, httpx2.HTTPStatusError):
        return f"HTTP {err.response.status_code} from {err.request.url}"
    if isinstance(err, httpx2.TransportError):
        return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
    if isinstance(err, pydantic.ValidationError):
        problems = err.errors()
        if not problems:
            return "malformed response from the server"
        where = ".".join(str(part) for part in problems[0]["loc"])
        return f"malformed response from the server ({where}: {problems[0]['msg']})"
    if isinstance(err, MCPError):
        return err.error.message or f"error {err.error.code}"
    if isinstance(err, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)):
        return "Connection closed"
    text = str(err).strip()
    return text or type(err).__name__


def is_connection_lost(err: BaseException) -> bool:
    if isinstance(err, MCPError):
        return err.error.code == types.CONNECTION_CLOSED
    return isinstance(err, (httpx2.TransportError, anyio.ClosedResourceError, anyio.BrokenResourceError,
                            anyio.EndOfStream, ConnectionError))


def is_transient(err: BaseException) -> bool:
    err = root_cause(err)
    if isinstance(err, httpx2.HTTPStatusError):
        status = err.response.status_code
        return status in (408, 429) or (status >= 500 and status != 501)
    return isinstance(err, (httpx2.TransportError, ConnectionError))
