"""jev_router: a virtual model, ``jev/auto``, that plans on a strong model and implements on a cheap one.

Planning goes to GPT-5.6 Terra (Pi's example asks the Jev classifier whether the work is complex enough for
GPT-5.6 Sol; pi has no classifier models, so planning keeps a Sol or Terra the session already used and
otherwise takes Terra). After the first successful ``edit`` or ``write`` tool call, the next request of the
same turn goes to GPT-5.6 Luna, and the session stays there. The phase is router state, kept on the session
branch, so it follows the session tree and survives resuming. The selected thinking level passes through as
the reasoning effort; requests outside the agent loop (compaction summaries) go to Luna.

Needs an OpenAI Codex login. Usage: ``pi -e plugin:jev_router --model jev/auto``.
"""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl
from pi_core.errors import PiError
from pi_core.models.virtual import ModelRoute, ModelRouteRequest
from pi_core.providers import VirtualModel
from pi_core.types import ToolResultMessage

PROVIDER = "openai-codex"
SOL = "gpt-5.6-sol"
TERRA = "gpt-5.6-terra"
LUNA = "gpt-5.6-luna"
EDIT_TOOLS = frozenset({"edit", "write"})  # a successful result means implementation has started


def route_to(request: ModelRouteRequest, model_id: str, state: dict[str, str] | None = None) -> ModelRoute:
    model = request.find(PROVIDER, model_id)
    if model is None:
        raise PiError(f"Model {PROVIDER}/{model_id} is not in the catalog")
    return ModelRoute(model=model, thinking_level=request.thinking_level, state=state)


def edited_this_turn(messages: list[Any]) -> bool:
    """Whether a tool call since the last user message edited a file successfully."""
    users = [i for i, message in enumerate(messages) if message.role == "user"]
    since = messages[users[-1] + 1:] if users else messages
    return any(isinstance(m, ToolResultMessage) and m.tool_name in EDIT_TOOLS and not m.is_error for m in since)


def planning_model(request: ModelRouteRequest) -> str:
    """Keep a planning model the conversation already answered with (no cache miss), else Terra."""
    answered = [m for m in request.messages if m.role == "assistant" and getattr(m, "provider", None) == PROVIDER]
    last = answered[-1].model if answered else None
    return last if last in (SOL, TERRA) else TERRA


def route(request: ModelRouteRequest) -> ModelRoute:
    if request.reason == "direct":
        return route_to(request, LUNA)
    state = request.state
    if not isinstance(state, dict):
        model = planning_model(request)
        return route_to(request, model, {"phase": "planning", "model": model})
    if state.get("phase") == "planning" and edited_this_turn(request.messages):
        return route_to(request, LUNA, {"phase": "implementation", "model": LUNA})  # hand the rest to Luna
    return route_to(request, str(state.get("model") or LUNA))


@hookimpl
def pi_virtual_models() -> list[VirtualModel]:
    return [VirtualModel(provider="jev", id="auto", name="Auto (Jev)", route=route,
                         thinking_levels=["low", "medium", "high", "xhigh"],
                         context_window=272_000, max_tokens=128_000)]  # shared by all three models
