"""One ``codemode`` call: parse the input, wait for a worker, run the script with the session's tools and the
discovery globals, keep its ``store()`` writes on the session, and word the result the model reads."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from pi_plugins.codemode import loadout
from pi_plugins.codemode.declarations import js_identifier
from pi_plugins.codemode.output import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    CallRecord,
    Item,
    call_summary,
    header,
    render,
)
from pi_plugins.codemode.sandbox import (
    SLOTS,
    WORKER_WAIT_S,
    Executor,
    Job,
    ScriptError,
    max_workers,
    run_script,
)
from pi_plugins.codemode.source import parse_source

from pi_core import CustomEntry, SessionEntry, ToolContext
from pi_core.signals import AbortSignal
from pi_core.tools import Tool, ToolResult
from pi_core.types import TextContent

STORE_ENTRY = "codemode-store"
ARGS_PREVIEW_CHARS = 200
ERROR_PREVIEW_CHARS = 500
DEFAULT_SEARCH_LIMIT = 8


class CallError(Exception):
    """A call the script made failed: its text rejects the script's promise (an ``Error`` there)."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def read_store(branch: Sequence[SessionEntry]) -> dict[str, Any]:
    """The values the scripts on this branch stored, from its ``codemode-store`` entries, oldest first."""
    store: dict[str, Any] = {}
    for entry in branch:
        if not isinstance(entry, CustomEntry) or entry.custom_type != STORE_ENTRY or not isinstance(entry.data, dict):
            continue
        data = entry.data
        sets, deletes = data.get("set"), data.get("delete")
        if not isinstance(sets, dict) or not isinstance(deletes, list):
            continue
        for key in deletes:
            store.pop(key, None)
        store.update(sets)
    return store


def _text_of(result: ToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


class _Script:
    """The tools and globals one script reaches, and the record of its calls."""

    def __init__(self, ctx: ToolContext, callable_tools: list[Tool], samples: dict[str, str]) -> None:
        self.ctx, self.tools, self.samples = ctx, callable_tools, samples
        self.calls: list[CallRecord] = []

    def publish(self) -> None:
        self.ctx.update(ToolResult(content=[], details={"calls": [c.to_json() for c in self.calls]}))

    def tool_executor(self, tool: Tool) -> Executor:
        async def call(args: Any, signal: AbortSignal) -> Any:
            record = CallRecord(tool.name, _cut(json.dumps(args, ensure_ascii=False), ARGS_PREVIEW_CHARS) if args is not None else "")
            self.calls.append(record)
            self.publish()
            if self.ctx.call_tool is None:
                raise CallError("Tool calls need a session")
            started = time.monotonic()
            try:
                record.id, result, is_error = await self.ctx.call_tool(tool, args if isinstance(args, dict) else {}, signal)
            finally:
                record.duration_ms = (time.monotonic() - started) * 1000
            if is_error:
                record.status = "cancelled" if signal.aborted else "error"
                record.error = _cut(_text_of(result) or f'Tool "{tool.name}" failed', ERROR_PREVIEW_CHARS)
            else:
                record.status = "ok"
            self.publish()
            if tool.output_schema is not None and result.structured_content is not None:
                return result.structured_content
            if is_error:
                raise CallError(_text_of(result) or f'Tool "{tool.name}" failed')
            return _text_of(result)

        return call

    def entry(self, tool: Tool) -> dict[str, str]:
        return {"name": js_identifier(tool.name), "description": self.samples[tool.name]}

    async def search_tools(self, args: Any, _signal: AbortSignal) -> Any:
        from pi_plugins.tool_search import rank

        query, options = (args + [None, None])[:2] if isinstance(args, list) else (None, None)
        if not isinstance(query, str):
            raise CallError("searchTools() expects a query string")
        options = options if isinstance(options, dict) else {}
        limit = options.get("limit", DEFAULT_SEARCH_LIMIT)
        if limit is None:
            limit = DEFAULT_SEARCH_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit != int(limit) or limit <= 0:
            raise CallError("searchTools() limit must be a positive integer")
        namespace = options.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise CallError("searchTools() namespace must be a string")
        candidates = [{"name": t.name, "description": t.description, "parameters": t.json_schema} for t in self.tools
                      if namespace is None or self._in_namespace(t, namespace)]
        by_name = {t.name: t for t in self.tools}
        return [self.entry(by_name[m["name"]]) for m in rank(query, candidates, int(limit))]

    @staticmethod
    def _in_namespace(tool: Tool, name: str) -> bool:
        namespace = loadout.namespace_of(tool)
        return namespace is not None and (namespace.name == name or js_identifier(namespace.name) == js_identifier(name))

    async def describe_tool(self, args: Any, _signal: AbortSignal) -> Any:
        name = args[0] if isinstance(args, list) and args else None
        if not isinstance(name, str):
            raise CallError("describeTool() expects a tool name")
        tool = next((t for t in self.tools if name in (t.name, js_identifier(t.name))), None)
        return None if tool is None else self.samples[tool.name]

    async def describe_namespace(self, args: Any, _signal: AbortSignal) -> Any:
        name = args[0] if isinstance(args, list) and args else None
        if not isinstance(name, str):
            raise CallError("describeNamespace() expects a namespace name")
        members = [t for t in self.tools if self._in_namespace(t, name)]
        if not members:
            return None
        namespace = loadout.namespace_of(members[0])
        assert namespace is not None
        out: dict[str, Any] = {"name": namespace.name}
        if namespace.description:
            out["description"] = namespace.description
        out["tools"] = [js_identifier(t.name) for t in members]
        return out

    def job(self, code: str, store: dict[str, Any]) -> Job:
        executors: dict[tuple[str, str], Executor] = {("tool", t.name): self.tool_executor(t) for t in self.tools}
        executors[("global", "searchTools")] = self.search_tools
        executors[("global", "describeTool")] = self.describe_tool
        executors[("global", "describeNamespace")] = self.describe_namespace
        return Job(code=code, tools=[{"name": t.name, "jsName": js_identifier(t.name),
                                      "description": self.samples[t.name]} for t in self.tools],
                   globals=[{"name": n, "spread": True} for n in ("searchTools", "describeTool", "describeNamespace")],
                   store={k: json.dumps(v) for k, v in store.items()}, executors=executors)


def _failed_to_start(started: float, error: str) -> ToolResult:
    text = f"Script error:\n{error}\n\nThe script did not start."
    return ToolResult(content=[TextContent(text=header(False, time.monotonic() - started)), TextContent(text=text)],
                      details={"calls": []}, is_error=True)


async def execute(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    started = time.monotonic()
    source = parse_source(args["code"])
    pi = ctx.pi
    tools: list[Tool] = []
    if pi is not None:
        tools = [loadout.original_of(t) for t in loadout.callable_tools(pi.get_all_tools(), pi.get_active_tools(),
                                                                         loadout.HIDDEN.get(pi.session, set()))]
    script = _Script(ctx, tools, {t.name: loadout.declaration(t).sample() for t in tools})
    script.publish()
    deadline_ms = source.timeout_ms
    wait_s = WORKER_WAIT_S if deadline_ms is None else min(deadline_ms / 1000, WORKER_WAIT_S)
    wait_started = time.monotonic()
    admission = await SLOTS.acquire(wait_s, ctx.signal)
    if admission != "reserved":
        if admission == "aborted":
            return _failed_to_start(started, f"Script aborted: {ctx.signal.reason or 'Execution aborted'}")
        if deadline_ms is not None and deadline_ms <= WORKER_WAIT_S * 1000:
            return _failed_to_start(started, f"Script timed out: Execution timed out after {deadline_ms} ms while "
                                             "waiting for a free codemode worker")
        return _failed_to_start(started, f"No codemode worker became free within {WORKER_WAIT_S:.0f} seconds. All "
                                         f"{max_workers()} workers, shared by every session in this process, are held "
                                         "by other scripts. Retry after they finish.")
    waited_ms = (time.monotonic() - wait_started) * 1000
    remaining = None if deadline_ms is None else max(1, round(deadline_ms - waited_ms))
    store = read_store(pi.session_manager.get_branch()) if pi is not None else {}
    outcome = await run_script(script.job(source.code, store), remaining, ctx.signal)
    for call in script.calls:
        if call.status == "running":
            call.status = "cancelled"
    output = list(outcome.output)
    if outcome.error is None:
        sets = {entry[0]: json.loads(entry[1]) for entry in outcome.writes if len(entry) == 2}
        deletes = [entry[0] for entry in outcome.writes if len(entry) == 1]
        if (sets or deletes) and pi is not None:
            pi.append_entry(STORE_ENTRY, {"set": sets, "delete": deletes})
        if outcome.value_json is not None:
            value = json.loads(outcome.value_json)
            output.append(Item("text", value if isinstance(value, str) else outcome.value_json))
    error = None if outcome.error is None else f"{outcome.error.text()}\n\n{call_summary(script.calls)}"
    rendered = render(output, error, source.max_output_tokens if source.max_output_tokens is not None
                      else DEFAULT_MAX_OUTPUT_TOKENS, ctx.settings.full_output_dir())
    details: dict[str, Any] = {"calls": [c.to_json() for c in script.calls]}
    if rendered.full_output_path is not None:
        details["fullOutputPath"] = rendered.full_output_path
    content = [TextContent(text=header(outcome.error is None, time.monotonic() - started)), *rendered.blocks]
    return ToolResult(content=content, details=details, is_error=outcome.error is not None)


__all__ = ["ScriptError", "execute", "read_store"]
