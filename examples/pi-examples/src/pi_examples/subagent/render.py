"""How a ``subagent`` call and its (streaming) result are drawn: status icons, the children's tool calls and
texts, the final output as Markdown when expanded, and the usage line of each child and of all of them."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_core.tui import Container, Text

COLLAPSED_ITEM_COUNT = 10
# The components and the stats helpers are imported when a result is first drawn (interactive UI only). Every
# drawing function is handed the theme (``th``): the session's, which the plugin instance keeps.


def format_usage_stats(usage: dict[str, Any], model: str | None = None) -> str:
    """``3 turns ↑1.2k ↓300 R50 W20 $0.0123 ctx:1.5k model``, leaving out what is zero."""
    from pi_core.export.stats import format_tokens

    parts = []
    turns = int(usage.get("turns") or 0)
    if turns:
        parts.append(f"{turns} turn{'s' if turns > 1 else ''}")
    for key, mark in (("input", "↑"), ("output", "↓"), ("cacheRead", "R"), ("cacheWrite", "W")):
        if usage.get(key):
            parts.append(f"{mark}{format_tokens(int(usage[key]))}")
    if usage.get("cost"):
        parts.append(f"${float(usage['cost']):.4f}")
    if int(usage.get("contextTokens") or 0) > 0:
        parts.append(f"ctx:{format_tokens(int(usage['contextTokens']))}")
    if model:
        parts.append(model)
    return " ".join(parts)


def aggregate_usage(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The children's usage summed (context size is per child, so it is not added up)."""
    total: dict[str, Any] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0, "turns": 0}
    for result in results:
        usage = result.get("usage") or {}
        for key in total:
            total[key] += usage.get(key) or 0
    return total


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home) else path


def _line_range(offset: Any, limit: Any) -> str:
    if offset is None and limit is None:
        return ""
    start = 1 if offset is None else offset
    if not isinstance(start, int) or (limit is not None and not isinstance(limit, int)):
        return ""
    return f":{start}" if limit is None else f":{start}-{start + limit - 1}"


def format_tool_call(name: str, args: dict[str, Any], th: Any) -> str:
    """A child's tool call the way the built-in tools show theirs (``$ cmd``, ``read ~/a.py:1-10``...)."""
    fg = th.fg
    path = _short(str(args.get("file_path") or args.get("path") or "..."))
    if name == "bash":
        command = str(args.get("command") or "...")
        return fg("muted", "$ ") + fg("toolOutput", command[:60] + "..." if len(command) > 60 else command)
    if name == "read":
        lines = _line_range(args.get("offset"), args.get("limit"))
        return fg("muted", "read ") + fg("accent", path) + (fg("warning", lines) if lines else "")
    if name == "write":
        count = str(args.get("content") or "").count("\n") + 1
        return fg("muted", "write ") + fg("accent", path) + (fg("dim", f" ({count} lines)") if count > 1 else "")
    if name == "edit":
        return fg("muted", "edit ") + fg("accent", path)
    where = _short(str(args.get("path") or "."))
    if name == "ls":
        return fg("muted", "ls ") + fg("accent", where)
    if name == "find":
        return fg("muted", "find ") + fg("accent", str(args.get("pattern") or "*")) + fg("dim", f" in {where}")
    if name == "grep":
        return fg("muted", "grep ") + fg("accent", f"/{args.get('pattern') or ''}/") + fg("dim", f" in {where}")
    text = json.dumps(args, ensure_ascii=False)
    return fg("accent", name) + fg("dim", " " + (text[:50] + "..." if len(text) > 50 else text))


def display_items(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """("text", str) and ("toolCall", (name, args)) in the order the child's assistant produced them."""
    items: list[tuple[str, Any]] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for part in message.get("content") or []:
            if part.get("type") == "text":
                items.append(("text", str(part.get("text") or "")))
            elif part.get("type") == "toolCall":
                items.append(("toolCall", (str(part.get("name")), part.get("arguments") or {})))
    return items


def _last_text_of_last_assistant(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant":
            for part in message.get("content") or []:
                if part.get("type") == "text":
                    return str(part.get("text") or "")
    return ""


def _failed(r: dict[str, Any]) -> bool:
    return r.get("status") in ("failed", "aborted")


def _active(r: dict[str, Any]) -> bool:
    return r.get("status") in ("pending", "running")


def _icon(r: dict[str, Any], th: Any) -> str:
    if _active(r):
        return th.fg("warning", "⏳")
    return th.fg("error", "✗") if _failed(r) else th.fg("success", "✓")


def _failure_summary(r: dict[str, Any]) -> str:
    signal = r.get("terminationSignal")
    return ((r.get("errorMessage") or "").strip() or (f"Terminated by signal {signal}" if signal else "")
            or (r.get("stderr") or "").strip() or _last_text_of_last_assistant(r.get("messages") or [])
            or "(no output)")


def _items_text(items: list[tuple[str, Any]], expanded: bool, th: Any, limit: int | None = None) -> str:
    fg = th.fg
    shown = items[-limit:] if limit else items
    lines = []
    if limit and len(items) > limit:
        lines.append(fg("muted", f"... {len(items) - limit} earlier items"))
    for kind, value in shown:
        if kind == "text":
            lines.append(fg("toolOutput", value if expanded else "\n".join(str(value).split("\n")[:3])))
        else:
            lines.append(fg("muted", "→ ") + format_tool_call(value[0], value[1], th))
    return "\n".join(lines).rstrip()


def _text(text: str) -> Text:
    from pi_core.tui import Text

    return Text(text, 0, 0)


def _diagnostics(r: dict[str, Any], into: Container, th: Any) -> None:
    fg = th.fg
    if _failed(r) and r.get("errorMessage"):
        into.add_child(_text(fg("error", f"Error: {r['errorMessage']}")))
    if r.get("terminationSignal"):
        into.add_child(_text(fg("error", f"Signal: {r['terminationSignal']}")))
    if (r.get("stderr") or "").strip():
        into.add_child(_text(fg("error", f"stderr: {r['stderr'].strip()}")))


def _calls_and_output(r: dict[str, Any], into: Container, th: Any) -> None:
    from pi_core.tui import Markdown, Spacer

    messages = r.get("messages") or []
    for kind, value in display_items(messages):
        if kind == "toolCall":
            into.add_child(_text(th.fg("muted", "→ ") + format_tool_call(value[0], value[1], th)))
    output = _last_text_of_last_assistant(messages)
    if output:
        into.add_child(Spacer(1))
        into.add_child(Markdown(output.strip(), 0, 0, th))


def render_call(args: dict[str, Any], th: Any) -> str:
    scope = th.fg("muted", f" [{args.get('agentScope') or 'user'}]")
    title = th.fg("toolTitle", th.bold("subagent "))
    chain, tasks = args.get("chain") or [], args.get("tasks") or []
    if chain or tasks:
        steps = chain or tasks
        label = f"chain ({len(chain)} steps)" if chain else f"parallel ({len(tasks)} tasks)"
        text = title + th.fg("accent", label) + scope
        for i, step in enumerate(steps[:3]):
            task = str(step.get("task") or "")
            task = task.replace("{previous}", "").strip() if chain else task
            preview = task[:40] + "..." if len(task) > 40 else task
            number = th.fg("muted", f"{i + 1}.") + " " if chain else ""
            text += "\n  " + number + th.fg("accent", str(step.get("agent") or "")) + th.fg("dim", f" {preview}")
        if len(steps) > 3:
            text += "\n  " + th.fg("muted", f"... +{len(steps) - 3} more")
        return text
    task = str(args.get("task") or "")
    preview = (task[:60] + "..." if len(task) > 60 else task) if task else "..."
    return title + th.fg("accent", str(args.get("agent") or "...")) + scope + "\n  " + th.fg("dim", preview)


def _field(value: Any, name: str) -> Any:
    """A field of a result or content block, which arrives as an object (a streamed partial) or a dict."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _content_text(result: Any) -> str:
    content = _field(result, "content") or []
    return str((_field(content[0], "text") if content else "") or "(no output)")


def render_result(result: Any, is_error: bool, expanded: bool, th: Any) -> Any:
    details = _field(result, "details")
    results = details.get("results") if isinstance(details, dict) else None
    if not isinstance(details, dict) or not results:
        return _content_text(result)
    mode = details.get("mode")
    if mode == "single" and len(results) == 1:
        return _render_single(results[0], expanded, th)
    if mode == "chain":
        return _render_group(results, expanded, th, chain=True)
    if mode == "parallel":
        return _render_group(results, expanded, th, chain=False)
    return _content_text(result)


def _render_single(r: dict[str, Any], expanded: bool, th: Any) -> Any:
    from pi_core.tui import Container, Spacer

    items = display_items(r.get("messages") or [])
    source = th.fg("muted", f" ({r.get('agentSource')})")
    header = f"{_icon(r, th)} {th.fg('toolTitle', th.bold(str(r.get('agent'))))}{source}"
    if _active(r):
        header += " " + th.fg("warning", f"[{r.get('status')}]")
    elif _failed(r):
        header += " " + th.fg("error", f"[{r.get('stopReason') or r.get('status')}]")
    usage = format_usage_stats(r.get("usage") or {}, r.get("model"))
    if expanded:
        box = Container(_text(header))
        _diagnostics(r, box, th)
        box.add_child(Spacer(1))
        box.add_child(_text(th.fg("muted", "─── Task ───")))
        box.add_child(_text(th.fg("dim", str(r.get("task") or ""))))
        box.add_child(Spacer(1))
        box.add_child(_text(th.fg("muted", "─── Output ───")))
        if not items:
            box.add_child(_text(th.fg("muted", "(no output)")))
        else:
            _calls_and_output(r, box, th)
        if usage:
            box.add_child(Spacer(1))
            box.add_child(_text(th.fg("dim", usage)))
        return box
    text = header
    if _failed(r) and r.get("errorMessage"):
        text += "\n" + th.fg("error", f"Error: {r['errorMessage']}")
    elif not items:
        text += "\n" + th.fg("muted", "(no output)")
    else:
        text += "\n" + _items_text(items, expanded, th, COLLAPSED_ITEM_COUNT)
        if len(items) > COLLAPSED_ITEM_COUNT:
            text += "\n" + th.fg("muted", "(Ctrl+O to expand)")
    if usage:
        text += "\n" + th.fg("dim", usage)
    return text


def _render_group(results: list[dict[str, Any]], expanded: bool, th: Any, *, chain: bool) -> Any:
    from pi_core.tui import Container, Spacer

    running = sum(r.get("status") == "running" for r in results)
    pending = sum(r.get("status") == "pending" for r in results)
    succeeded = sum(r.get("status") == "completed" for r in results)
    failed = sum(_failed(r) for r in results)
    active = running + pending > 0
    if chain:
        icon = th.fg("warning", "⏳") if active else th.fg("success", "✓") if succeeded == len(results) \
            else th.fg("error", "✗")
        header = icon + " " + th.fg("toolTitle", th.bold("chain ")) + th.fg("accent", f"{succeeded}/{len(results)} steps")
    else:
        icon = th.fg("warning", "⏳") if active else th.fg("warning", "◐") if failed else th.fg("success", "✓")
        status = (f"{succeeded + failed}/{len(results)} done, {running} running, {pending} pending" if active
                  else f"{succeeded}/{len(results)} tasks")
        header = f"{icon} {th.fg('toolTitle', th.bold('parallel '))}{th.fg('accent', status)}"
    total = format_usage_stats(aggregate_usage(results))

    def title(r: dict[str, Any]) -> str:
        lead = f"─── Step {r.get('step')}: " if chain else "─── "
        return th.fg("muted", lead) + th.fg("accent", str(r.get("agent"))) + " " + _icon(r, th)

    if expanded and (chain or not active):
        box = Container(_text(header))
        for r in results:
            box.add_child(Spacer(1))
            box.add_child(_text(title(r)))
            box.add_child(_text(th.fg("muted", "Task: ") + th.fg("dim", str(r.get("task") or ""))))
            _diagnostics(r, box, th)
            _calls_and_output(r, box, th)
            usage = format_usage_stats(r.get("usage") or {}, r.get("model"))
            if usage:
                box.add_child(_text(th.fg("dim", usage)))
        if total:
            box.add_child(Spacer(1))
            box.add_child(_text(th.fg("dim", f"Total: {total}")))
        return box
    text = header
    for r in results:
        text += "\n\n" + title(r)
        items = display_items(r.get("messages") or [])
        if items:
            text += "\n" + _items_text(items, expanded, th, 5)
            continue
        summary = "(no output)"
        if _failed(r):
            summary = _failure_summary(r)
        elif not chain and r.get("status") in ("pending", "running"):
            summary = f"({r.get('status')}...)"
        text += "\n" + th.fg("error" if _failed(r) else "muted", summary)
    if total and (chain or not active):
        text += "\n\n" + th.fg("dim", f"Total: {total}")
    if chain or not expanded:
        text += "\n" + th.fg("muted", "(Ctrl+O to expand)")
    return text
