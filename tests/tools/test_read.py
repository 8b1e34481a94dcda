"""read tool (docs/tools.md#read), plus streaming, binary files, non-UTF-8 text and images."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any, BinaryIO

import pi_builtin_tools._text_slice as text_slice
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_builtin_tools.read import PARAMETERS, TOOL, create_read_tool

from pi_core.errors import AbortedError, ToolError
from pi_core.toolkit.fileops import ReadOperations
from pi_core.toolkit.truncate import truncate_head
from pi_core.tools import ToolContext, ToolResult

PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def read(ctx: ToolContext, **args: Any) -> ToolResult:
    result = TOOL.execute(args, ctx)
    assert isinstance(result, ToolResult)
    return result


def text_of(result: ToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def numbered(n: int, fmt: str = "Line {i}") -> str:
    return "\n".join(fmt.format(i=i) for i in range(1, n + 1))


# --- Pi's cases -------------------------------------------------------------------------------------


def test_small_file_is_returned_as_is(ctx: ToolContext) -> None:
    (ctx.cwd / "test.txt").write_text("Hello, world!\nLine 2\nLine 3")
    result = read(ctx, path="test.txt")
    assert text_of(result) == "Hello, world!\nLine 2\nLine 3"
    assert "Use offset=" not in text_of(result)
    assert result.details is None


def test_missing_file_names_enoent(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"ENOENT|not found") as info:
        read(ctx, path="missing.txt")
    assert str(info.value) == f"ENOENT: no such file or directory, access '{ctx.cwd / 'missing.txt'}'"


def test_line_limit_notice(ctx: ToolContext) -> None:
    (ctx.cwd / "big.txt").write_text(numbered(2500))
    result = read(ctx, path="big.txt")
    text = text_of(result)
    assert "Line 1\n" in text and "Line 2000" in text and "Line 2001" not in text
    assert text.endswith("Line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    truncation = result.details["truncation"]
    assert truncation["truncated"] is True and truncation["truncatedBy"] == "lines"
    assert truncation["totalLines"] == 2500 and truncation["outputLines"] == 2000


def test_byte_limit_notice(ctx: ToolContext) -> None:
    (ctx.cwd / "wide.txt").write_text(numbered(500, "Line {i}: " + "x" * 200))
    text = text_of(read(ctx, path="wide.txt"))
    assert text.startswith("Line 1:")
    match = re.search(r"\[Showing lines 1-(\d+) of 500 \(50\.0KB limit\)\. Use offset=(\d+) to continue\.\]$", text)
    assert match is not None
    assert int(match.group(2)) == int(match.group(1)) + 1


def test_offset(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(100))
    text = text_of(read(ctx, path="f.txt", offset=51))
    assert "Line 50\n" not in text and text.startswith("Line 51\n") and text.endswith("Line 100")
    assert "Use offset=" not in text


def test_limit(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(100))
    result = read(ctx, path="f.txt", limit=10)
    assert text_of(result) == numbered(10) + "\n\n[90 more lines in file. Use offset=11 to continue.]"
    assert result.details is None


def test_offset_and_limit(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(100))
    text = text_of(read(ctx, path="f.txt", offset=41, limit=20))
    body = "\n".join(f"Line {i}" for i in range(41, 61))
    assert text == body + "\n\n[40 more lines in file. Use offset=61 to continue.]"


def test_offset_beyond_end(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("a\nb\nc")
    with pytest.raises(ToolError, match=r"^Offset 100 is beyond end of file \(3 lines total\)$"):
        read(ctx, path="f.txt", offset=100)
    # A trailing newline makes an empty last line, which counts (Pi splits on "\n").
    (ctx.cwd / "g.txt").write_text("a\nb\n")
    assert text_of(read(ctx, path="g.txt", offset=3)) == ""
    with pytest.raises(ToolError, match=r"^Offset 4 is beyond end of file \(3 lines total\)$"):
        read(ctx, path="g.txt", offset=4)


def test_offset_zero_or_negative_starts_at_line_one(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("a\nb")
    assert text_of(read(ctx, path="f.txt", offset=0)) == "a\nb"
    assert text_of(read(ctx, path="f.txt", offset=-5)) == "a\nb"


def test_limit_zero_gives_only_the_notice(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(5))
    assert text_of(read(ctx, path="f.txt", limit=0)) == "\n\n[5 more lines in file. Use offset=1 to continue.]"


def test_limit_reaching_end_has_no_notice(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(5))
    assert text_of(read(ctx, path="f.txt", offset=3, limit=3)) == "Line 3\nLine 4\nLine 5"
    assert text_of(read(ctx, path="f.txt", offset=3, limit=30)) == "Line 3\nLine 4\nLine 5"


def test_line_truncation_notice_counts_from_offset(ctx: ToolContext) -> None:
    (ctx.cwd / "big.txt").write_text(numbered(5000))
    text = text_of(read(ctx, path="big.txt", offset=1001))
    assert text.startswith("Line 1001\n")
    assert text.endswith("Line 3000\n\n[Showing lines 1001-3000 of 5000. Use offset=3001 to continue.]")


def test_first_line_over_limit_advises_sed(ctx: ToolContext) -> None:
    (ctx.cwd / "min.js").write_text("short\n" + "y" * 60000 + "\nafter")
    result = read(ctx, path="min.js", offset=2)
    assert text_of(result) == "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' min.js | head -c 51200]"
    truncation = result.details["truncation"]
    assert truncation["firstLineExceedsLimit"] is True and truncation["content"] == ""
    assert truncation["outputLines"] == 0 and truncation["truncatedBy"] == "bytes"


def test_details_truncation_is_pis_object(ctx: ToolContext) -> None:
    content = numbered(2500)
    (ctx.cwd / "big.txt").write_text(content)
    expected = truncate_head(content).to_json()
    assert read(ctx, path="big.txt").details == {"truncation": expected}


def test_png_named_txt_is_an_image(ctx: ToolContext) -> None:
    (ctx.cwd / "image.txt").write_bytes(PNG_1X1)
    result = read(ctx, path="image.txt")
    assert "Read image file [image/png]" in text_of(result)
    image = result.content[1]
    assert image.type == "image" and image.mime_type == "image/png" and image.data  # type: ignore[union-attr]
    assert base64.b64decode(image.data) == PNG_1X1  # type: ignore[union-attr]
    assert result.details is None


def test_text_named_png_is_text(ctx: ToolContext) -> None:
    (ctx.cwd / "not-an-image.png").write_text("definitely not a png")
    result = read(ctx, path="not-an-image.png")
    assert "definitely not a png" in text_of(result)
    assert all(block.type == "text" for block in result.content)


def test_empty_file_is_empty_text(ctx: ToolContext) -> None:
    (ctx.cwd / "empty").write_bytes(b"")
    result = read(ctx, path="empty")
    assert text_of(result) == "" and len(result.content) == 1


# --- images -------------------------------------------------------------------------------------------


def test_image_for_a_text_only_model_says_it_is_omitted(tmp_path: Path) -> None:
    from pi_core.types import Model

    (tmp_path / "a.png").write_bytes(PNG_1X1)
    ctx = ToolContext(cwd=tmp_path, extras={"model": Model(id="m", api="x", provider="p", input=["text"])})
    text = text_of(read(ctx, path="a.png"))
    assert text == ("Read image file [image/png]\n[Current model does not support images. "
                    "The image will be omitted from this request.]")


def test_image_too_large_to_fit_is_omitted(ctx: ToolContext) -> None:
    # A PNG header that claims 5000x5000 but has no decodable data: it cannot be resized.
    header = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (5000).to_bytes(4, "big") * 2 + b"\x08\x06\x00\x00\x00"
    (ctx.cwd / "huge.png").write_bytes(header + b"\x00" * 100)
    result = read(ctx, path="huge.png")
    assert text_of(result) == ("Read image file [image/png]\n"
                               "[Image omitted: could not be resized below the inline image size limit.]")
    assert len(result.content) == 1


def test_image_without_auto_resize_is_sent_unchanged(tmp_path: Path) -> None:
    (tmp_path / "a.gif").write_bytes(b"GIF89a" + b"\x01\x00\x01\x00" + b"\x00" * 20)
    ctx = ToolContext(cwd=tmp_path, extras={"auto_resize_images": False})
    result = read(ctx, path="a.gif")
    assert text_of(result) == "Read image file [image/gif]"
    assert result.content[1].mime_type == "image/gif"  # type: ignore[union-attr]


def test_large_image_is_resized_when_pillow_is_there(ctx: ToolContext) -> None:
    pil = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    pil.new("RGB", (3000, 1500), (200, 10, 10)).save(buffer, format="PNG")
    (ctx.cwd / "wide.png").write_bytes(buffer.getvalue())
    result = read(ctx, path="wide.png")
    assert text_of(result) == ("Read image file [image/png]\n[Image: original 3000x1500, displayed at 2000x1000. "
                               "Multiply coordinates by 1.50 to map to original image.]")


# --- binary and non-UTF-8 files -----------------------------------------------------------------------


def test_binary_file_is_refused_clearly(ctx: ToolContext) -> None:
    (ctx.cwd / "prog.bin").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    with pytest.raises(ToolError, match=r"^Cannot read prog\.bin: it looks like a binary file"):
        read(ctx, path="prog.bin")
    (ctx.cwd / "data.db").write_bytes(b"abc\x00def" * 100)
    with pytest.raises(ToolError, match="binary file"):
        read(ctx, path="data.db")


def test_pdf_is_binary_even_without_nul_bytes(ctx: ToolContext) -> None:
    (ctx.cwd / "doc.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
    with pytest.raises(ToolError, match="binary file"):
        read(ctx, path="doc.pdf")


def test_invalid_utf8_is_replaced_and_noted(ctx: ToolContext) -> None:
    (ctx.cwd / "latin1.txt").write_bytes("caf\u00e9\nna\u00efve\nplain".encode("latin-1"))
    text = text_of(read(ctx, path="latin1.txt"))
    assert text == ("caf\ufffd\nna\ufffdve\nplain\n\n"
                    "[This file is not valid UTF-8: bytes that could not be decoded are shown as \ufffd.]")


def test_valid_utf8_and_crlf_are_kept(ctx: ToolContext) -> None:
    (ctx.cwd / "u.txt").write_bytes("\ufeffh\u00e9llo \U0001f600\r\nw\u00f6rld\r\n".encode())
    assert text_of(read(ctx, path="u.txt")) == "\ufeffh\u00e9llo \U0001f600\r\nw\u00f6rld\r\n"


# --- paths and abort ----------------------------------------------------------------------------------


def test_macos_screenshot_name_is_found(ctx: ToolContext) -> None:
    (ctx.cwd / "Shot 10.00.00\u202fPM.png").write_text("found it")
    assert text_of(read(ctx, path="@Shot 10.00.00 PM.png")) == "found it"


def test_aborted_signal_fails_at_once(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("x")
    ctx.signal.abort()
    with pytest.raises(AbortedError, match="^Operation aborted$"):
        read(ctx, path="f.txt")


# --- streaming ------------------------------------------------------------------------------------------


class _GeneratedFile(io.RawIOBase):
    """A virtual text file of ``size`` bytes, generated on demand; counts what was read."""

    def __init__(self, size: int, counter: list[int]) -> None:
        self.size, self.pos, self.counter = size, 0, counter
        self.block = b"".join(b"generated line %06d\n" % i for i in range(25000))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.size - self.pos)
        if n <= 0:
            return 0
        start = self.pos % len(self.block)
        chunk = (self.block[start:] + self.block)[: n] if start + n > len(self.block) else self.block[start:start + n]
        n = len(chunk)
        buffer[:n] = chunk
        self.pos += n
        self.counter[0] += n
        return n


class GeneratedOps(ReadOperations):
    def __init__(self, size: int) -> None:
        self.size = size
        self.bytes_read = [0]

    def access(self, path: str) -> None:
        return None

    def read_file(self, path: str) -> bytes:
        raise AssertionError("read must stream a text file, not load it")

    def open_file(self, path: str) -> BinaryIO:
        return io.BufferedReader(_GeneratedFile(self.size, self.bytes_read))  # type: ignore[return-value]

    def exists(self, path: str) -> bool:
        return True


def test_first_page_of_a_1gb_file_does_not_read_the_file(ctx: ToolContext) -> None:
    ops = GeneratedOps(1 << 30)
    result = create_read_tool(ops).execute({"path": "huge.log"}, ctx)
    text = text_of(result)  # type: ignore[arg-type]
    assert text.startswith("generated line 000000\n")
    assert "generated line 001999" in text and "generated line 002000" not in text
    assert re.search(r"\n\n\[Showing lines 1-2000 of at least \d+ \(not all counted\)\. Use offset=2001 to continue\.\]$", text)
    assert ops.bytes_read[0] <= text_slice.COUNT_SCAN_LIMIT + 2 * text_slice.CHUNK_SIZE
    assert ops.bytes_read[0] < (1 << 30) // 10


def test_a_few_lines_from_a_big_file_read_only_the_front(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_slice, "COUNT_SCAN_LIMIT", 1 << 20)
    ops = GeneratedOps(1 << 30)
    text = text_of(create_read_tool(ops).execute({"path": "huge.log", "offset": 3, "limit": 2}, ctx))  # type: ignore[arg-type]
    assert text.startswith("generated line 000002\ngenerated line 000003\n\n[")
    assert "more lines in file. Use offset=5 to continue.]" in text
    assert ops.bytes_read[0] <= (1 << 20) + 2 * text_slice.CHUNK_SIZE


def test_whole_count_when_the_file_fits_the_scan_limit(ctx: ToolContext) -> None:
    ops = GeneratedOps(1_000_000)
    text = text_of(create_read_tool(ops).execute({"path": "f.log", "limit": 1}, ctx))  # type: ignore[arg-type]
    total = 1_000_000 // 22 + 1  # 22-byte lines, then a partial last one
    assert text.endswith(f"[{total - 1} more lines in file. Use offset=2 to continue.]")


def _reference(content: str, start: int, limit: int | None, max_lines: int, max_bytes: int) -> tuple[list[str], Any, int]:
    lines = content.split("\n")
    end = len(lines) if limit is None else min(start + limit, len(lines))
    return lines, truncate_head("\n".join(lines[start:end]), max_lines=max_lines, max_bytes=max_bytes), end - start


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=st.sampled_from("ab \r\u00e9\u4e2d\U0001f600"), max_size=12), min_size=1, max_size=30),
    start=st.integers(0, 32),
    limit=st.one_of(st.none(), st.integers(0, 35)),
    max_lines=st.integers(1, 12),
    max_bytes=st.integers(1, 60),
    chunk=st.integers(1, 9),
)
def test_streaming_slice_matches_truncate_head(lines: list[str], start: int, limit: int | None, max_lines: int,
                                               max_bytes: int, chunk: int) -> None:
    content = "\n".join(lines)
    data = content.encode()
    old_chunk = text_slice.CHUNK_SIZE
    text_slice.CHUNK_SIZE = chunk
    try:
        if start >= len(lines) and start > 0:
            with pytest.raises(text_slice.OffsetBeyondEnd) as info:
                text_slice.read_slice(io.BytesIO(data[3:]), data[:3], start, limit, max_lines, max_bytes)
            assert info.value.total_lines == len(lines)
            return
        got = text_slice.read_slice(io.BytesIO(data[3:]), data[:3], start, limit, max_lines, max_bytes)
    finally:
        text_slice.CHUNK_SIZE = old_chunk
    all_lines, expected, taken = _reference(content, start, limit, max_lines, max_bytes)
    assert got.total_lines == len(all_lines) and got.counted_all
    assert got.selected_lines == expected.total_lines if taken else got.selected_lines == 0
    if taken:
        assert got.selected_bytes == expected.total_bytes
    assert "\n".join(got.kept) == expected.content
    assert (got.truncated_by is not None) == expected.truncated
    if expected.truncated:
        assert got.truncated_by == expected.truncated_by
        assert got.first_line_exceeds == expected.first_line_exceeds_limit
        assert len(got.kept) == expected.output_lines
        assert got.output_bytes == expected.output_bytes


# --- plugin surface -------------------------------------------------------------------------------------


def _shape(schema: Any) -> Any:
    """A schema without its prose: descriptions are ours, everything else must equal Pi's."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


def pi_schema(name: str) -> dict[str, Any]:
    tools = json.loads(Path("/work/shared/spec/reference/pi-tools-all.json").read_text())
    return next(tool["input_schema"] for tool in tools if tool["name"] == name)


def test_registry_serves_read_with_pis_schema() -> None:
    from pi_core.plugins import load_plugins
    from pi_core.registry import build_registry

    registry = build_registry(load_plugins(discover_extensions=False))
    tool = registry.tools.items["read"]
    assert registry.tools.owner["read"] == "read"
    assert _shape(tool.definition().parameters) == _shape(pi_schema("read"))
    assert tool.json_schema is PARAMETERS and tool.coercion == "typebox"
    described = {k: bool(v.get("description")) for k, v in tool.json_schema["properties"].items()}
    assert described == {"path": True, "offset": True, "limit": True}


def test_default_active_flags() -> None:
    import pi_builtin_tools.edit
    import pi_builtin_tools.ls
    import pi_builtin_tools.read
    import pi_builtin_tools.write

    assert pi_builtin_tools.read.DEFAULT_ACTIVE and pi_builtin_tools.edit.DEFAULT_ACTIVE and pi_builtin_tools.write.DEFAULT_ACTIVE
    assert pi_builtin_tools.ls.DEFAULT_ACTIVE is False


def test_numeric_strings_are_coerced_through_validation(ctx: ToolContext, run_tool: Any) -> None:
    (ctx.cwd / "f.txt").write_text(numbered(10))
    assert text_of(run_tool(TOOL, {"path": "f.txt", "offset": "9"}, ctx)) == "Line 9\nLine 10"


def test_directory_is_an_eisdir_error(ctx: ToolContext) -> None:
    (ctx.cwd / "sub").mkdir()
    with pytest.raises(ToolError) as info:
        read(ctx, path="sub")
    assert str(info.value) == f"EISDIR: illegal operation on a directory, read '{ctx.cwd / 'sub'}'"


def test_a_plugin_can_replace_read_with_the_same_tool_on_another_backend(tmp_path: Path) -> None:
    import types

    from pi_core import hookimpl
    from pi_core.plugins import load_plugins, register_module
    from pi_core.registry import build_registry

    remote = create_read_tool(GeneratedOps(100))
    module = types.ModuleType("remote_read")
    module.pi_tools = hookimpl(lambda: [remote])  # type: ignore[attr-defined]
    plugins = load_plugins(discover_extensions=False)
    register_module(plugins, module, "remote-read")
    registry = build_registry(plugins)
    assert registry.tools.items["read"] is remote
    assert any(o.name == "read" and o.winner == "remote-read" and o.loser == "read" for o in registry.overrides)
    text = text_of(registry.tools.items["read"].execute({"path": "anything.log", "limit": 1}, ToolContext(cwd=tmp_path)))
    assert text.startswith("generated line 000000\n\n[")


def test_image_sizes_from_headers() -> None:
    from pi_core.toolkit.images import detect_image_mime_type, image_size

    assert image_size(PNG_1X1) == (1, 1)
    assert image_size(b"GIF89a\x10\x00\x20\x00" + b"\x00" * 10) == (16, 32)
    jpeg = (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
            b"\xff\xc0\x00\x11\x08\x00\x30\x00\x40\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01")
    assert detect_image_mime_type(jpeg) == "image/jpeg" and image_size(jpeg) == (64, 48)
    webp = b"RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00" + (99).to_bytes(3, "little") + (9).to_bytes(3, "little")
    assert detect_image_mime_type(webp) == "image/webp" and image_size(webp) == (100, 10)
    assert detect_image_mime_type(b"") is None and detect_image_mime_type(b"BM\x00\x00") is None


def test_utf16_file_gets_a_conversion_hint(ctx: ToolContext) -> None:
    (ctx.cwd / "w.txt").write_bytes("hello".encode("utf-16"))
    with pytest.raises(ToolError, match=r"^Cannot read w\.txt: it is UTF-16 text.*iconv"):
        read(ctx, path="w.txt")


def test_only_small_local_text_files_are_read_on_the_event_loop(ctx: ToolContext, tmp_path: Path) -> None:
    from pi_builtin_tools.read import QUICK_READ_BYTES

    (tmp_path / "small.txt").write_text("tiny\n")
    (tmp_path / "big.txt").write_bytes(b"x" * (QUICK_READ_BYTES + 1))
    (tmp_path / "dot.png").write_bytes(PNG_1X1)
    (tmp_path / "dir").mkdir()
    quick = TOOL.quick
    assert quick is not None
    assert quick({"path": "small.txt"}, ctx) and quick({"path": "@small.txt", "offset": 1}, ctx)
    assert not any(quick({"path": name}, ctx) for name in ("big.txt", "dot.png", "dir", "missing.txt"))
    remote = create_read_tool(GeneratedOps(10)).quick
    assert remote is not None and not remote({"path": "small.txt"}, ctx)
    assert text_of(read(ctx, path="small.txt")) == "tiny\n"


def test_a_model_given_as_json_in_the_legacy_extras_is_a_model(tmp_path: Path) -> None:
    from pi_core.types import Model

    ctx = ToolContext(cwd=tmp_path, extras={"model": {"id": "m", "api": "x", "provider": "p", "input": ["text"]}})
    assert isinstance(ctx.model, Model) and ctx.model.input == ["text"]
