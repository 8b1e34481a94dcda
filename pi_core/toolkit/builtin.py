"""``builtin_tool``: a Tool declared the way pi's built-in tools (and packs that stand in for them) declare theirs.

Such a tool is labelled by its name and converts loose arguments as Pi's TypeBox does (``"5"`` for a number is
5), so that a model sees the same tool whichever pack provides it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_core.tools import Execute, Tool, ToolContext


# open: JSON Schema documents, in and out
def parameters(required: Sequence[str] = (), **properties: dict[str, Any]) -> dict[str, Any]:
    """A tool's arguments as JSON Schema: an object of ``properties``, in the order given; ``required`` names
    those a call must carry."""
    return {"type": "object", "properties": properties, "required": list(required)}


def argument(kind: str, description: str) -> dict[str, Any]:  # open: a JSON Schema
    """One argument's schema: its JSON type and what the model is told it is for."""
    return {"type": kind, "description": description}


def builtin_tool(name: str, description: str, parameters: dict[str, Any], execute: Execute, *,  # open: JSON Schema
                 active_by_default: bool, prompt_snippet: str, prompt_guidelines: Sequence[str] = (),
                 # open: the model's tool arguments (JSON), before and after the tool's own checks
                 prepare_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 quick: Callable[[Any, ToolContext], bool] | None = None,  # open: the tool's arguments, as built
                 output_schema: dict[str, Any] | None = None) -> Tool:  # open: a JSON Schema document
    # ``parameters`` and ``output_schema`` are JSON Schema documents: open JSON by nature, hence Any.
    return Tool(name=name, label=name, description=description, parameters=parameters, execute=execute,
                prompt_snippet=prompt_snippet, prompt_guidelines=list(prompt_guidelines),
                prepare_arguments=prepare_arguments, quick=quick, output_schema=output_schema,
                coercion="typebox", active_by_default=active_by_default)
