"""A tool result of ``text, image, text`` reaches the model in that order on every wire (issue 38): the MCP
probe's ``mixed`` tool, called by the fake model through the real ``pi``, and the request body it received."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner

from .conftest import SERVERS, write_mcp

BEFORE, AFTER = "before the image", "after the image"


def _anthropic(body: dict[str, Any]) -> None:
    [result] = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_result"]
    content = result["content"]
    assert [b["type"] for b in content] == ["text", "image", "text"]
    assert (content[0]["text"], content[2]["text"]) == (BEFORE, AFTER)


def _completions(body: dict[str, Any]) -> None:
    # tool messages hold text only: the image's place is marked and the image follows in a user message
    messages = body["messages"]
    index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
    assert messages[index]["content"] == f"{BEFORE}\n(see attached image)\n{AFTER}"
    images = messages[index + 1]
    assert images["role"] == "user"
    assert [p["type"] for p in images["content"]] == ["text", "image_url"]
    assert images["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def _responses(body: dict[str, Any]) -> None:
    [output] = [item["output"] for item in body["input"] if item.get("type") == "function_call_output"]
    assert [p["type"] for p in output] == ["input_text", "input_image", "input_text"]
    assert (output[0]["text"], output[2]["text"]) == (BEFORE, AFTER)


def _google(body: dict[str, Any]) -> None:
    contents = body["contents"]
    index = next(i for i, c in enumerate(contents) if any("functionResponse" in p for p in c["parts"]))
    [response] = [p["functionResponse"] for p in contents[index]["parts"]]
    assert response["response"] == {"output": f"{BEFORE}\n(see attached image)\n{AFTER}"}
    assert [next(iter(p)) for p in contents[index + 1]["parts"]] == ["text", "inlineData"]


def _mistral(body: dict[str, Any]) -> None:
    [result] = [m for m in body["messages"] if m["role"] == "tool"]
    assert [p["type"] for p in result["content"]] == ["text", "image_url", "text"]
    assert (result["content"][0]["text"], result["content"][2]["text"]) == (BEFORE, AFTER)


WIRES = {"anthropic-messages": _anthropic, "openai-completions": _completions, "openai-responses": _responses,
         "google-generative-ai": _google, "mistral-conversations": _mistral}


@pytest.mark.parametrize("api", list(WIRES))
def test_text_image_text_keeps_its_order(tmp_path: Path, api: str) -> None:
    with pi_runner(tmp_path, api) as pi:
        pi.extra_env["PI_MCP_STARTUP_WAIT"] = "60"
        probe = {"command": sys.executable, "args": [str(SERVERS / "roots_probe.py"), str(tmp_path / "events")],
                 "exposure": "direct"}
        write_mcp(pi.home / "mcp.json", {"probe": probe})
        pi.server.add(Reply(tool_calls=[("mcp__probe__mixed", {})]), Reply(text="seen"))
        result = pi.run("-p", "show me", timeout=120)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "seen\n"
        WIRES[api](pi.server.requests[1].body)
