"""The real ``pi`` command in print and JSON mode against the fake server, on all three wires."""

from __future__ import annotations

import json
from pathlib import Path

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner


def tool_result_texts(body: dict) -> list[str]:
    """Tool-result texts in a request body, whatever the wire."""
    texts: list[str] = []
    for message in body.get("messages", []):  # anthropic + chat completions
        if message.get("role") == "tool":
            content = message.get("content")
            texts.append(content if isinstance(content, str) else "".join(c.get("text", "") for c in content))
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    texts.append(inner if isinstance(inner, str) else "".join(c.get("text", "") for c in inner))
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:  # responses
        if item.get("type") == "function_call_output":
            output = item.get("output")
            texts.append(output if isinstance(output, str) else json.dumps(output))
    return texts


def test_print_mode_prints_final_answer(pi: PiRunner) -> None:
    pi.server.add(Reply(text="Hello from the fake model"))
    result = pi.run("-p", "say hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the fake model\n"
    assert pi.sent_tools() == ["read", "bash", "edit", "write"]


def test_tools_flag_is_an_exact_allowlist(pi: PiRunner) -> None:
    pi.server.add(Reply(text="ok"), Reply(text="ok"))
    assert pi.run("-p", "--tools", "read,grep", "x").returncode == 0
    assert pi.sent_tools(0) == ["read", "grep"]
    assert pi.run("-p", "--no-tools", "x").returncode == 0
    assert pi.sent_tools(1) == []


def test_unknown_tool_is_an_error_listing_known_ones(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("-p", "--tools", "read,nope", "x")
    assert result.returncode != 0
    assert "nope" in result.stderr and "read" in result.stderr and "bash" in result.stderr
    assert pi_anthropic.server.requests == []


def test_tool_loop_read_edit_bash(pi: PiRunner) -> None:
    (pi.cwd / "app.py").write_text("print('hello')\n")
    pi.server.add(
        Reply(tool_calls=[("read", {"path": "app.py"})]),
        Reply(tool_calls=[("edit", {"path": "app.py", "edits": [{"oldText": "hello", "newText": "bye"}]})]),
        Reply(tool_calls=[("bash", {"command": "python3 app.py; exit 3"})]),
        Reply(text="All done"),
    )
    result = pi.run("-p", "fix it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done\n"
    assert (pi.cwd / "app.py").read_text() == "print('bye')\n"
    assert tool_result_texts(pi.server.requests[1].body)[-1] == "print('hello')\n"
    assert tool_result_texts(pi.server.requests[2].body)[-1] == "Successfully replaced 1 block(s) in app.py."
    assert tool_result_texts(pi.server.requests[3].body)[-1] == "bye\n\n\nCommand exited with code 3"


def test_validation_error_reaches_model(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(tool_calls=[("read", {"path": ["x"]})]), Reply(text="sorry"))
    result = pi_anthropic.run("-p", "go")
    assert result.returncode == 0, result.stderr
    assert tool_result_texts(pi_anthropic.server.requests[1].body)[-1] == (
        'Validation failed for tool "read":\n  - path: must be string\n\n'
        'Received arguments:\n{\n  "path": [\n    "x"\n  ]\n}')


def test_missing_properties_are_named_once_each(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(tool_calls=[("edit", {})]), Reply(text="sorry"))
    result = pi_anthropic.run("-p", "go")
    assert result.returncode == 0, result.stderr
    assert tool_result_texts(pi_anthropic.server.requests[1].body)[-1] == (
        'Validation failed for tool "edit":\n  - path: must have required properties path, edits\n\n'
        'Received arguments:\n{}')


def test_json_mode_emits_header_then_events(pi: PiRunner) -> None:
    pi.server.add(Reply(text="json answer"))
    result = pi.run("--mode", "json", "hello")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "session"
    types = [line["type"] for line in lines[1:]]
    assert types[0] == "agent_start" and types[-2:] == ["agent_end", "agent_settled"]  # Pi 1.6 json.md
    assert lines[-1] == {"type": "agent_settled", "aborted": False}
    assert "message_update" in types and "turn_end" in types
    end = [line for line in lines if line["type"] == "message_end"][-1]
    assert end["message"]["role"] == "assistant"
    assert [(b["type"], b["text"]) for b in end["message"]["content"]] == [("text", "json answer")]


def test_provider_error_exits_nonzero_with_one_line(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(*[Reply.http_error(400, "bad request body") for _ in range(3)])
    result = pi_anthropic.run("-p", "hello")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "bad request body" in result.stderr


def test_stdin_and_file_args_join_into_first_prompt(pi_anthropic: PiRunner) -> None:
    (pi_anthropic.cwd / "notes.txt").write_text("file body")
    pi_anthropic.server.add(Reply(text="ok"))
    result = pi_anthropic.run("-p", "@notes.txt", "question", stdin="piped ")
    assert result.returncode == 0, result.stderr
    sent = pi_anthropic.server.requests[0].body["messages"][0]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    path = Path(pi_anthropic.cwd / "notes.txt").resolve()
    assert text == f'piped<file name="{path}">\nfile body\n</file>\nquestion'


def test_missing_file_arg(pi_anthropic: PiRunner) -> None:
    result = pi_anthropic.run("-p", "@nope.txt", "q")
    assert result.returncode == 1 and "File not found:" in result.stderr


def test_session_is_written_and_continued(pi_anthropic: PiRunner) -> None:
    pi_anthropic.server.add(Reply(text="first"), Reply(text="second"))
    assert pi_anthropic.run("-p", "one").returncode == 0
    result = pi_anthropic.run("-p", "-c", "two")
    assert result.returncode == 0, result.stderr
    messages = pi_anthropic.server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    files = list((pi_anthropic.home / "sessions").rglob("*.jsonl"))
    assert len(files) == 1


def test_image_file_arg_is_attached(pi_anthropic: PiRunner) -> None:
    import base64

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/"
                           "KhBqgwAAAABJRU5ErkJggg==")
    (pi_anthropic.cwd / "dot.png").write_bytes(png)
    pi_anthropic.server.add(Reply(text="a dot"))
    result = pi_anthropic.run("-p", "@dot.png", "what is this?")
    assert result.returncode == 0, result.stderr
    blocks = pi_anthropic.server.requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[1]["source"]["media_type"] == "image/png"
    assert blocks[0]["text"].endswith("</file>\nwhat is this?")


def test_exclude_builtin_and_system_prompt_flags(pi_anthropic: PiRunner) -> None:
    pi = pi_anthropic
    pi.server.add(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    assert pi.run("-p", "--exclude-tools", "bash", "x").returncode == 0
    assert pi.sent_tools(0) == ["read", "edit", "write"]
    assert pi.run("-p", "--no-builtin-tools", "x").returncode == 0
    assert pi.sent_tools(1) == []
    result = pi.run("-p", "--system-prompt", "You are a test.", "--append-system-prompt", "Extra rule.", "x")
    assert result.returncode == 0, result.stderr
    system = pi.server.requests[2].body["system"]
    text = system if isinstance(system, str) else "".join(block["text"] for block in system)
    assert text.startswith("You are a test.\n\nExtra rule.")
    assert "Available tools:" not in text and "Current working directory:" in text
