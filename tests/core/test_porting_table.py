"""CONTRIBUTING's "Porting a Pi extension" table stays true: every hook and context method it names exists, and
the main parts of Pi's extension API (its events, ``pi.*`` registrations, ``ctx.*`` and ``ctx.ui.*``) have a row."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from pi_core import hookspecs
from pi_core.extension import CommandContext
from pi_core.ui import UI

REPO = Path(__file__).resolve().parents[2]
NOT_HOOKS = {"pi_core", "pi_builtin_tools", "pi_examples", "pi_plugins"}
# Pi's API as its extension docs list it, with a pi counterpart; newer Pi APIs pi has no equivalent for yet
# (MCP server registration, markdown transformers, cache-warming and settle events, ctx.executeTool) are not here.
PI_EVENTS = ["session_start", "session_shutdown", "session_before_switch", "session_before_fork",
             "session_before_compact", "session_compact", "session_before_tree", "session_tree", "session_info_changed",
             "resources_discover", "input", "before_agent_start", "context", "agent_start", "agent_end", "turn_start",
             "turn_end", "message_update", "tool_execution_end", "tool_call", "tool_result", "user_bash",
             "model_select", "thinking_level_select", "before_provider_request", "before_provider_headers",
             "after_provider_response", "provider_stream_event", "project_trust"]
PI_METHODS = ["registerTool", "registerCommand", "registerFlag", "getFlag", "registerShortcut",
              "registerMessageRenderer", "registerEntryRenderer", "registerProvider", "registerVirtualModel",
              "sendMessage", "sendUserMessage", "appendEntry", "exec", "getActiveTools", "getAllTools",
              "setActiveTools", "getCommands", "setModel", "getThinkingLevel", "setThinkingLevel", "setSessionName",
              "getSessionName", "setLabel", "getSettings", "renderCall", "renderResult"]
PI_CTX = ["hasUI", "mode", "cwd", "model", "thinkingLevel", "scopedModels", "signal", "sessionManager",
          "modelRegistry", "isIdle", "abort", "shutdown", "getContextUsage", "compact", "isProjectTrusted",
          "getSystemPrompt", "hasPendingMessages", "waitForIdle", "newSession", "fork", "navigateTree",
          "switchSession", "reload", "getSystemPromptOptions"]
PI_UI = ["select", "confirm", "input", "editor", "notify", "setStatus", "setWidget", "setTitle", "setFooter",
         "setHeader", "custom", "setEditorText", "getEditorText", "pasteToEditor", "setEditorComponent",
         "addAutocompleteProvider", "onTerminalInput", "setWorkingMessage", "setWorkingIndicator",
         "setWorkingVisible", "setHiddenThinkingLabel", "setToolsExpanded", "getToolsExpanded", "getTheme",
         "setTheme", "getAllThemes"]


def table() -> list[tuple[str, str]]:
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Porting a Pi extension"):]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]
    cells = [re.split(r"(?<!\\) \| ", row.strip("| ")) for row in rows]
    return [(cell[0], cell[1]) for cell in cells]


def spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def test_every_hook_the_table_names_is_a_hookspec() -> None:
    specs = {name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("pi_")}
    named = {h for _, right in table() for span in spans(right) for h in re.findall(r"\bpi_[a-z_]+", span)}
    assert named - NOT_HOOKS - specs == set()
    assert len(named & specs) >= 30


def test_every_context_and_ui_method_the_table_names_exists() -> None:
    """In a ``ctx.`` span each name (``ctx.a()``, ``ctx.a / b / c``, ``a()`` after ``ctx.x()`` in one cell) exists
    on the command context (the extension context's subclass), or for ``ctx.ui.`` on the UI."""
    missing = []
    for _, right in table():
        if "ctx." not in right:
            continue
        owner: type = UI if "ctx.ui." in right else CommandContext
        for span in spans(right):
            attribute = re.match(r"(?:await )?ctx\.([a-z_]+)\.", span)
            if attribute and attribute.group(1) != "ui":  # ctx.events.on, ctx.model_registry.find: the attribute
                assert hasattr(CommandContext, attribute.group(1)), span
                continue
            if ("(" not in span and "ctx." not in span) or "model_registry" in right:
                continue
            for name in re.findall(r"(?:ctx\.(?:ui\.)?)?\b([a-z][a-z_]+)(?=\(|\s*/|\s*$|\s*etc)", span):
                if name in ("ctx", "ui", "etc", "await", "timeout", "signal", "render", "in", "list", "str") \
                        or name.startswith("pi_"):
                    continue
                if not hasattr(owner, name) and not hasattr(CommandContext, name):
                    missing.append(f"{name} ({span})")
    assert missing == []


def test_the_main_parts_of_pis_extension_api_have_a_row() -> None:
    left = " ".join(pi for pi, _ in table())
    assert [e for e in PI_EVENTS if f'"{e}"' not in left and f"`{e}`" not in left] == []
    assert [m for m in PI_METHODS if not re.search(rf"\b{m}\b", left)] == []
    assert [c for c in PI_CTX if not re.search(rf"\b{c}\b", left)] == []
    assert [u for u in PI_UI if not re.search(rf"\b{u}\b", left)] == []
    # and their pi counterparts exist under the snake_case name the table promises for the rest
    assert [c for c in PI_CTX if c not in ("hasUI",) and not hasattr(CommandContext, snake(c))] == []
    assert [u for u in PI_UI if not hasattr(UI, snake(u))] == []
