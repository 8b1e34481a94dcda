"""The argument check pi's sessions give the agent loop (``pi_core.tools.ArgumentCheck``): Pi's coercions,
jsonschema and Pi's failure texts (``pi_core.toolkit.validation``), loaded at the first tool call: a reply without
tool calls never imports the validator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.tools import Tool
    from pi_core.types import ToolCall


class PiArguments:
    """``ArgumentCheck`` as Pi does it (docs/loop.md#argument-validation)."""

    def validate(self, tool: Tool, call: ToolCall) -> dict[str, Any]:  # open: the model's tool arguments, JSON
        from pi_core.toolkit.validation import check_call

        return check_call(tool, call)

    def build(self, tool: Tool, validated: dict[str, Any]) -> Any:  # open: tool arguments: JSON in, a model or JSON out
        from pi_core.toolkit.validation import tool_args

        return tool_args(tool, validated)


PI_ARGUMENTS = PiArguments()
