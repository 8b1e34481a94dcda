"""The session's entries for clients (RPC ``get_entries`` and ``get_tree``, Pi 1.6.0): append order with an
id cursor, and the tree with its labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pi_core.errors import PiError

if TYPE_CHECKING:
    from pi_core.sessions.branching import TreeNode


class EntryStore(Protocol):
    """What these read of a session store (``pi_core.sessions.SessionManager``)."""

    @property
    def leaf_id(self) -> str | None: ...

    def get_entries(self) -> list[dict[str, Any]]: ...  # open: session entries and RPC answers, JSON
    def get_tree(self) -> list[TreeNode]: ...


def entries_since(store: EntryStore, since: str | None = None) -> dict[str, Any]:  # open: session entries and RPC answers, JSON
    """Every entry in append order (no header), or only those after the entry ``since``; plus the leaf id.

    Entry ids are stable, so ``since`` works as a durable cursor; an unknown id is an error."""
    entries = store.get_entries()
    if since is not None:
        position = next((i for i, entry in enumerate(entries) if entry.get("id") == since), None)
        if position is None:
            raise PiError(f"Entry not found: {since}")
        entries = entries[position + 1:]
    return {"entries": entries, "leafId": store.leaf_id}


def session_tree(store: EntryStore) -> dict[str, Any]:  # open: session entries and RPC answers, JSON
    """``{"tree": [{entry, children, label?, labelTimestamp?}...], "leafId"}``: roots first, children oldest
    first; orphans are roots. ``labelTimestamp`` is when the entry's current label was set."""
    labelled: dict[str, str] = {}
    for entry in store.get_entries():
        if entry.get("type") == "label" and isinstance(entry.get("targetId"), str):
            if entry.get("label"):
                labelled[entry["targetId"]] = str(entry.get("timestamp", ""))
            else:
                labelled.pop(entry["targetId"], None)

    def shell(tree_node: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"entry": tree_node.entry, "children": []}
        if tree_node.label:
            out["label"] = tree_node.label
            entry_id = tree_node.entry.get("id")
            if entry_id in labelled:
                out["labelTimestamp"] = labelled[entry_id]
        return out

    # iterative: a long session is one chain thousands of entries deep
    tree = store.get_tree()
    roots = [shell(root) for root in tree]
    stack = list(zip(tree, roots))
    while stack:
        tree_node, out = stack.pop()
        for child in tree_node.children:
            child_out = shell(child)
            out["children"].append(child_out)
            stack.append((child, child_out))
    return {"tree": roots, "leafId": store.leaf_id}
