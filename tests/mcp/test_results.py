"""MCP results as the model reads them: text, images, structured content, isError, and long text cut in the
middle with the whole saved to a file that outlives pi (issue 18; mcp.md's truncation rules)."""

from __future__ import annotations

import base64
import os
import re
import stat
import tempfile
import time
from pathlib import Path

import pytest
from pi_plugins.mcp.results import MAX_OUTPUT_BYTES, convert_result

from pi_core.toolkit.tempdir import clean_old_temp_outputs
from pi_core.types import ImageContent, TextContent


def test_text_images_structured_content_and_errors() -> None:
    result, is_error = convert_result("s", "t", {"content": [{"type": "text", "text": "hi"},
                                                             {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                                                             {"type": "audio", "data": "", "mimeType": "audio/wav"}]})
    assert not is_error
    assert [type(c) for c in result.content] == [TextContent, ImageContent, TextContent]
    assert result.content[2].text == "[audio audio/wav omitted]"
    assert result.details == {"server": "s", "tool": "t"}
    structured, _ = convert_result("s", "t", {"content": [], "structuredContent": {"temperature": 21}})
    assert structured.content[0].text == '{\n  "temperature": 21\n}'  # shown when there is no content
    failed, is_error = convert_result("s", "t", {"content": [], "isError": True})
    assert is_error and failed.content[0].text == "MCP tool s/t returned an error"


def test_long_text_loses_its_middle_and_is_saved_whole_beside_the_session(tmp_path: Path) -> None:
    text = "".join(f"{n:07d} {'x' * 40}\n" for n in range(2000))  # about 96 KB
    result, _ = convert_result("s", "t", {"content": [{"type": "text", "text": text}]}, output_dir=tmp_path)
    shown = result.content[0].text
    assert shown.startswith(f"Warning: truncated output (original token count: {-(-len(text) // 4)})\n"
                            "Total output lines: 2000\n\n0000000 ")
    assert len(shown.encode()) < MAX_OUTPUT_BYTES + 300
    cut = re.search(r"…(\d+) chars truncated…", shown)
    assert cut is not None and len(shown) - len(cut.group(0)) < len(text) - int(cut.group(1)) + 300
    assert "0001999 " in shown  # the end is kept too
    saved = Path(result.details["fullOutputPath"])
    assert shown.endswith(f"[Full output: {saved} (read it with offset/limit)]")
    assert saved.parent == tmp_path and saved.name.startswith("pi-mcp-") and saved.suffix == ".txt"
    assert saved.read_text() == text
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600


def test_binary_resources_are_saved_with_their_own_suffix(tmp_path: Path) -> None:
    blob = base64.b64encode(b"%PDF-1.7 not really").decode()
    block = {"type": "resource", "resource": {"uri": "file:///docs/report.pdf", "mimeType": "application/pdf",
                                              "blob": blob}}
    result, _ = convert_result("docs", "fetch", {"content": [block]}, output_dir=tmp_path)
    [saved] = tmp_path.glob("pi-mcp-*.pdf")
    assert saved.read_bytes() == b"%PDF-1.7 not really"
    assert result.content[0].text == (f"[Binary resource file:///docs/report.pdf (application/pdf, 19B) saved to "
                                      f"{saved}]")


def test_without_a_session_they_go_to_the_temp_dir_and_day_old_ones_are_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    text = "y" * (MAX_OUTPUT_BYTES * 2)
    result, _ = convert_result("s", "t", {"content": [{"type": "text", "text": text}]})  # --no-session
    saved = Path(result.details["fullOutputPath"])
    assert saved.parent == tmp_path and saved.read_text() == text
    old, other = tmp_path / "pi-mcp-0123456789abcdef.png", tmp_path / "mcp-notes.txt"
    for stale in (old, other):
        stale.write_text("earlier run")
        os.utime(stale, (time.time() - 2 * 86400,) * 2)
    assert clean_old_temp_outputs() == [old]
    assert saved.exists() and other.exists()
