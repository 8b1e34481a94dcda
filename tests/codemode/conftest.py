"""pi with codemode against the fake model server: the model's replies are scripts, the tests read the results
pi sent back in the next request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner, pi_runner


@pytest.fixture
def pi(tmp_path: Path) -> Iterator[PiRunner]:
    with pi_runner(tmp_path) as runner:
        yield runner


def scripts(*codes: str, final: str = "done") -> list[Reply]:
    """One model reply per script, each a codemode call, then a closing text reply."""
    return [*(Reply(tool_calls=[("codemode", {"code": code})]) for code in codes), Reply(text=final)]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of the last user message of an Anthropic request: text joined, is_error."""
    last = body["messages"][-1]
    out = []
    for block in last["content"]:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            out.append({"text": "\n".join(p.get("text", "") for p in parts if p.get("type") == "text"),
                        "images": [p for p in parts if p.get("type") == "image"],
                        "is_error": bool(block.get("is_error"))})
    return out


def result_of(pi: PiRunner, index: int) -> dict[str, Any]:
    """The codemode result the model got after its ``index``-th script (0-based)."""
    [result] = tool_results(pi.server.requests[index + 1].body)
    return result


def tool_named(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in body.get("tools", []) if t["name"] == name)
