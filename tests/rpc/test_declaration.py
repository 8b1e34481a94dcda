"""The ``system`` message's patches (pi_core.declaration): only what changed since the last declaration."""

from __future__ import annotations

from pi_core.modes.declaration import Declarations
from pi_core.tools import Tool


def _tool(name: str, description: str = "does it") -> Tool:
    return Tool(name=name, description=description, parameters={"type": "object"}, execute=lambda args, ctx: "ok")


def test_patches_name_changed_sections_and_tools_only() -> None:
    declared = Declarations()
    full = declared.patch("A\n\nB", {"preamble": "A", "tools": "B"}, [_tool("read"), _tool("bash")])
    assert full is not None and full.sections == {"preamble": "A", "tools": "B"} and full.content == ""
    assert [t.name for t in full.tools_added or []] == ["read", "bash"] and full.tools_removed is None

    assert declared.patch("A\n\nB", {"preamble": "A", "tools": "B"}, [_tool("read"), _tool("bash")]) is None

    patch = declared.patch("A\n\nC", {"preamble": "A", "rules": "C"}, [_tool("read", "new words"), _tool("grep")])
    assert patch is not None
    assert patch.to_json()["sections"] == {"rules": "C", "tools": None}
    assert [t.name for t in patch.tools_added or []] == ["read", "grep"]  # read was redefined
    assert [t.name for t in patch.tools_removed or []] == ["read", "bash"]

    own = declared.patch("a plugin's own prompt", None, [_tool("read", "new words"), _tool("grep")])
    assert own is not None and own.content == "a plugin's own prompt"
    assert own.to_json()["sections"] == {"preamble": None, "rules": None} and own.tools_added is None
