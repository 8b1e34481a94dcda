"""``pi -p`` imports only what a print run uses (issue 19): the interactive UI's header and theme, the tools'
internals, the MCP manager without an mcp.json and the TOML parser without a TOML file wait until
something needs them. The wire types are pydantic models built on first use (``defer_build``): a print run
builds only the validators it uses, and ``--version``/``--help`` import no pydantic at all. Asserts which
modules are loaded, never how long anything takes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import CLI, pi_runner

# An extension that writes the modules loaded at exit (after the answer) to a file.
EXTENSION = """\
import atexit
import json
import sys
from pathlib import Path


def _at_exit() -> None:
    types = sys.modules.get("pi_core.types")
    built = sorted(name for name, value in vars(types).items() if getattr(value, "__pydantic_complete__", False)
                   and getattr(value, "__module__", "") == "pi_core.types") if types else []
    Path({out!r}).write_text(json.dumps({{"modules": sorted(sys.modules), "built": built}}))


atexit.register(_at_exit)
"""

DEFERRED = (
    "pi_plugins.interactive.header", "pi_plugins.interactive.footer", "pi_plugins.interactive.style",
    "pi_core.resources.themes", "rich", "prompt_toolkit",
    "pi_core.toolkit.procs", "pi_core.toolkit.shell", "pi_core.toolkit.shell_output", "pi_core.toolkit.fileops",
    "pi_core.toolkit.images", "pi_core.toolkit.ripgrep", "pi_core.toolkit.globs", "pi_builtin_tools._edit_diff",
    "pi_builtin_tools._edit_match", "pi_builtin_tools._text_slice", "pi_builtin_tools._listing",
    "pi_plugins.mcp.manager", "pi_plugins.mcp.config", "pi_plugins.mcp.slash",
    "tomllib", "anthropic", "openai",
)


# Start-up work a print run without those features skips: session lookup (--session/--fork/--session-id),
# the compaction summarizer and planner (only when compacting), virtual models (none registered), Vertex
# credentials, the catalog builder (``pi update --models``), tool-argument validation and partial results (no
# tool call), the skill/template file parsers (no such files), the local-model prober's thread pool (no local
# servers), the typed session entries (no tree move, no compaction), the sandbox policy (none asked for), the
# partial-JSON parser (no tool call), the session listings' helpers.
# (uuid, secrets, hmac and sysconfig come with pydantic now.)
DEFERRED_AT_START = (
    "pi_core.sessions.lookup", "pi_core.compaction.summarize", "pi_core.compaction.plan", "pi_core.models.virtual",
    "pi_core.llm.routed", "pi_plugins.google_vertex.auth", "pi_core.models.catalog_build", "pi_core.toolkit.validation",
    "pi_core.tool_updates", "pi_core.resources.frontmatter", "pi_core.resources.ignore", "concurrent.futures.thread",
    "pi_core.hookspecs.entries", "pi_core.app.sandbox_start", "pi_core.toolkit.sandbox", "pi_core.llm.tool_json",
    "pi_core.sessions.describe",
)


def _loaded_after(pi: object, tmp_path: Path, *args: str) -> dict[str, list[str]]:
    """What a run left behind at exit: ``modules`` (imported) and ``built`` (pi_core.types whose pydantic
    validator was built)."""
    out = tmp_path / "modules.json"
    extension = tmp_path / "modules_at_exit.py"
    extension.write_text(EXTENSION.format(out=str(out)))
    done = pi.run("-e", str(extension), *args)  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the answer\n"
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def _modules_after(pi: object, tmp_path: Path, *args: str) -> set[str]:
    return set(_loaded_after(pi, tmp_path, *args)["modules"])


def test_a_print_run_imports_no_ui_tool_or_mcp_internals(tmp_path: Path) -> None:
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        pi.server.add(Reply(text="the answer"))
        loaded = _modules_after(pi, tmp_path, "-p", "hi")
        assert sorted(loaded & set(DEFERRED)) == [], sorted(loaded & set(DEFERRED))
        assert sorted(loaded & set(DEFERRED_AT_START)) == []
        # The plugins still loaded and answered: the mode, the tools and the slash commands are registered.
        assert {"pi_plugins.interactive", "pi_builtin_tools.bash", "pi_builtin_tools.read", "pi_plugins.mcp"} <= loaded
        [request] = pi.server.requests
        assert [t["name"] for t in request.body["tools"]] == ["read", "bash", "edit", "write"]


def test_a_models_file_seen_valid_is_not_schema_checked_again(tmp_path: Path) -> None:
    """The runner's models.json: the first run checks it (or found it checked), the next skips pydantic's check."""
    with pi_runner(tmp_path, "anthropic-messages") as pi:
        pi.server.add(Reply(text="the answer"), Reply(text="the answer"))
        _modules_after(pi, tmp_path, "-p", "hi")
        loaded = _modules_after(pi, tmp_path, "-p", "hi")
        assert "pi_core.models.custom_check" in loaded
        assert "pi_core.models.custom_schema" not in loaded


PYDANTIC = ("pydantic", "pydantic_core", "annotated_types", "typing_inspection")


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions"])
def test_a_print_run_builds_only_the_wire_types_it_uses(tmp_path: Path, api: str) -> None:
    with pi_runner(tmp_path, api) as pi:
        pi.server.add(Reply(thinking="let me see", text="the answer"))
        left = _loaded_after(pi, tmp_path, "-p", "hi")
        assert "pydantic" in left["modules"]
        built = set(left["built"])
        assert {"UserMessage", "AssistantMessage", "AssistantMessageEvent"} <= built
        # No tool ran, no image was attached, no tiered price was read: their validators were never built.
        assert not built & {"ToolResultMessage", "ImageContent", "CostTier", "CustomMessage"}, sorted(built)
        [request] = pi.server.requests
        assert '"hi"' in json.dumps(request.body["messages"])


def test_a_tool_call_loads_its_helpers_then(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    with pi_runner(tmp_path, "openai-completions") as pi:
        pi.server.add(Reply(tool_calls=[("read", {"path": str(tmp_path / "notes.txt")})]), Reply(text="the answer"))
        loaded = _modules_after(pi, tmp_path, "-p", "read it")
        assert {"pi_core.toolkit.fileops", "pi_builtin_tools._text_slice", "pi_core.toolkit.validation"} <= loaded
        assert "pi_core.toolkit.procs" in loaded  # read's messages format numbers as Pi does (js_number)
        assert "alpha" in json.dumps(pi.server.requests[1].body)


def test_version_prints_before_the_argument_parser_loads() -> None:
    for flag in ("--version", "-v"):
        done = subprocess.run([CLI[0], "-X", "importtime", *CLI[1:], flag], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0 and done.stdout == "0.1.0\n"
        loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
        assert "pi_core.app.cli" in loaded and "pi_core.app.args" not in loaded and "dataclasses" not in loaded


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_load_no_http_stack_and_no_pydantic(flag: str) -> None:
    """Neither needs a provider request: httpx2's stack (httpcore2, anyio, h11) and pydantic stay unloaded."""
    done = subprocess.run([CLI[0], "-X", "importtime", *CLI[1:], flag], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "pi_core.app.cli" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in {"httpx2", "httpcore2", "anyio", "h11", *PYDANTIC}) == []
