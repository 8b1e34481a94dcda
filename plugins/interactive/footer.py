"""The footer: cwd, session name, model, thinking level, tokens, cache, cost, context %."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pi_core.control.stats import session_totals, whole_session_usage
from pi_core.export.stats import format_tokens
from pi_core.types import PLACEHOLDER_MODEL


def short_cwd(cwd: Path | str) -> str:
    text, home = str(cwd), os.path.expanduser("~")
    return "~" + text[len(home):] if home != "/" and (text == home or text.startswith(home + os.sep)) else text


def footer_lines(session: Any, width: int) -> tuple[str, str]:
    """Two plain lines: where (cwd and session name), then usage on the left and the model on the right."""
    cwd = short_cwd(session.config.cwd)
    name = session.store.session_name
    first = f"{cwd} • {name}" if name else cwd
    totals = session_totals(session.messages)  # the context: this branch
    entries = getattr(session.store, "get_entries", None)
    spent = whole_session_usage(entries()) if callable(entries) else totals  # tokens and cost: every branch
    stats: list[str] = []
    if spent.input:
        stats.append(f"↑{format_tokens(spent.input)}")
    if spent.output:
        stats.append(f"↓{format_tokens(spent.output)}")
    if spent.cache_read:
        stats.append(f"R{format_tokens(spent.cache_read)}")
    if spent.cache_write:
        stats.append(f"W{format_tokens(spent.cache_write)}")
    if spent.cost:
        stats.append(f"${spent.cost:.3f}")
    model = session.model
    auto = " (auto)" if getattr(session, "auto_compaction", False) else ""
    if model.id == PLACEHOLDER_MODEL.id:  # no model yet: as Pi, an empty context of a zero window
        stats.append(f"0.0%/0{auto}")
        right = model.id
    else:
        window = model.context_window
        percent = f"{totals.context_tokens / window * 100:.1f}%" if window else "?"
        stats.append(f"{percent}/{format_tokens(window)}{auto}" if window else f"{percent}{auto}")
        thinking = session.agent.state.thinking_level
        right = model.id if not model.reasoning else f"{model.id} • {thinking}"
        if model.provider:
            right = f"({model.provider}) {right}"
    left = " ".join(stats)
    gap = width - len(left) - len(right)
    second = left + " " * gap + right if gap >= 2 else f"{left}  {right}"
    if len(first) > width:
        first = "…" + first[-(width - 1):]
    return first, second[:width] if len(second) > width else second
