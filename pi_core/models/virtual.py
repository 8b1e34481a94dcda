"""Virtual models (docs/models.md#virtual-models): catalog entries a plugin routes to a physical model per request.

``catalog_entry`` lists a ``VirtualModel`` in the catalog (``--model``, ``--list-models``); a router answers a
``ModelRouteRequest`` with a ``ModelRoute``, and ``branch_state`` finds the router state stored on the session
branch (custom entry ``pi.virtual-model-state``, so it follows the tree). The requests themselves are routed by
``pi_core.llm.routed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pi_core.providers import ModelRoute, ModelRouteRequest, VirtualModel
from pi_core.types import THINKING_LEVELS, Model

if TYPE_CHECKING:
    from pi_core.sessions.manager import SessionManager

# ModelRouteRequest and ModelRoute live in the kernel beside VirtualModel.route; routers still import them here.
__all__ = ["STATE_ENTRY", "VIRTUAL_API", "Catalog", "ModelRoute", "ModelRouteRequest", "VirtualModel", "branch_state",
           "catalog_entry"]

STATE_ENTRY = "pi.virtual-model-state"
VIRTUAL_API = "pi-virtual"  # the ``api`` of a virtual model's catalog entry: never sent to a wire


class Catalog(Protocol):
    """What routing needs of the model registry."""

    def virtual_model(self, model: Model) -> VirtualModel | None: ...
    def find(self, provider: str, model_id: str) -> Model | None: ...
    def api_key_for(self, model: Model, override: str | None = None) -> str: ...


def catalog_entry(virtual: VirtualModel) -> Model:
    levels = {level: (level if level in virtual.thinking_levels else None) for level in THINKING_LEVELS}
    return Model(id=virtual.id, name=virtual.name, api=VIRTUAL_API, provider=virtual.provider,
                 reasoning=virtual.thinking_levels != ["off"], thinking_level_map=levels,
                 input=["text", "image"], context_window=virtual.context_window, max_tokens=virtual.max_tokens)


def branch_state(store: SessionManager, model: Model) -> Any:  # open: the router plugin's own JSON
    """The router state last stored for ``model`` on the current branch (None when there is none): the JSON
    the router plugin chose to keep, open by nature."""
    for entry in reversed(store.get_branch()):
        data = entry.get("data") if entry.get("type") == "custom" and entry.get("customType") == STATE_ENTRY else None
        if isinstance(data, dict) and (data.get("provider"), data.get("modelId")) == (model.provider, model.id):
            return data.get("state")
    return None
