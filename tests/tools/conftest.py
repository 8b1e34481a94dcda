"""Shared fixture for tool tests: call a tool the way the agent loop does (prepare, validate, execute)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pi_core.toolkit.validation import validate_tool_arguments
from pi_core.tools import Tool, ToolContext, ToolResult


def call_tool(tool: Tool, raw_args: Any, ctx: ToolContext) -> ToolResult:
    """prepare_arguments, Pi's validation and coercion, then execute (sync tools only)."""
    if tool.prepare_arguments is not None:
        raw_args = tool.prepare_arguments(raw_args)
    args = tool.build_args(validate_tool_arguments(tool, raw_args))
    result = tool.execute(args, ctx)
    return ToolResult.text(result) if isinstance(result, str) else result  # type: ignore[arg-type]


@pytest.fixture
def run_tool() -> Callable[[Tool, Any, ToolContext], ToolResult]:
    return call_tool
