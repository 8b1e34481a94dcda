"""edit tool (docs/tools.md#edit), plus region-only fuzzy edits, atomic writes and the plugin surface."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pi_builtin_tools._edit_diff import generate_diff
from pi_builtin_tools._edit_match import normalize_for_fuzzy_match
from pi_builtin_tools.edit import PARAMETERS, TOOL, create_edit_tool, prepare_arguments

from pi_core.errors import AbortedError, ToolError, ValidationError
from pi_core.toolkit.fileops import EditOperations
from pi_core.tools import ToolContext, ToolResult


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def edit(ctx: ToolContext, run_tool: Any, path: str, *pairs: tuple[str, str]) -> ToolResult:
    return run_tool(TOOL, {"path": path, "edits": [{"oldText": o, "newText": n} for o, n in pairs]}, ctx)


def put(ctx: ToolContext, name: str, content: str | bytes) -> Path:
    path = ctx.cwd / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode())
    return path


# --- Pi's cases ---------------------------------------------------------------------------------------


def test_replaces_text_and_reports_a_diff(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "test.txt", "Hello, world!")
    result = edit(ctx, run_tool, "test.txt", ("world", "testing"))
    assert result.content[0].text == "Successfully replaced 1 block(s) in test.txt."  # type: ignore[union-attr]
    assert isinstance(result.details["diff"], str) and "testing" in result.details["diff"]
    assert result.details == {"diff": "-1 Hello, world!\n+1 Hello, testing!", "firstChangedLine": 1}
    assert path.read_text() == "Hello, testing!"


def test_text_not_found(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "Hello, world!")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("nonexistent", "x"))
    assert str(info.value) == ("Could not find the exact text in t.txt. The old text must match exactly including all "
                               "whitespace and newlines.")


def test_text_not_unique(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "foo foo foo")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("foo", "bar"))
    assert str(info.value) == ("Found 3 occurrences of the text in t.txt. The text must be unique. Please provide more "
                               "context to make it unique.")


def test_trailing_whitespace_is_ignored_when_matching(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "line one   \nline two  \nline three\n")
    edit(ctx, run_tool, "t.txt", ("line one\nline two\n", "replaced\n"))
    assert path.read_text() == "replaced\nline three\n"


def test_full_width_punctuation(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "你好，世界\n你好（世界）\n")
    edit(ctx, run_tool, "t.txt", ("你好,世界\n你好(世界)\n", "你好，pi\n你好(pi)\n"))
    assert path.read_text() == "你好，pi\n你好(pi)\n"


def test_nfkc(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "ＡＢＣ１２３\ncafe\u0301\n")
    edit(ctx, run_tool, "t.txt", ("ABC123\ncafé\n", "XYZ789\ncoffee\n"))
    assert path.read_text() == "XYZ789\ncoffee\n"


def test_smart_single_quotes(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "console.log(\u2018hello\u2019);\n")
    edit(ctx, run_tool, "t.txt", ("console.log('hello');", "console.log('world');"))
    assert "world" in path.read_text()


def test_smart_double_quotes(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "const msg = \u201cHello World\u201d;\n")
    edit(ctx, run_tool, "t.txt", ('msg = "Hello World"', 'msg = "Goodbye"'))
    assert "Goodbye" in path.read_text()


def test_dashes(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "range: 1\u20135\nbreak\u2014here\n")
    edit(ctx, run_tool, "t.txt", ("range: 1-5\nbreak-here", "range: 10-50\nbreak--here"))
    assert "10-50" in path.read_text()


def test_nbsp(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "hello\u00a0world\n")
    edit(ctx, run_tool, "t.txt", ("hello world", "hello universe"))
    assert "universe" in path.read_text()


def test_exact_match_preferred(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "const x = 'exact';\nconst y = 'other';\n")
    edit(ctx, run_tool, "t.txt", ("const x = 'exact';", "const x = 'changed';"))
    assert path.read_text() == "const x = 'changed';\nconst y = 'other';\n"


def test_fuzzy_still_fails_on_absent_text(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "hello \u201cworld\u201d\n")
    with pytest.raises(ToolError, match="Could not find the exact text"):
        edit(ctx, run_tool, "t.txt", ('goodbye "world"', "x"))


def test_fuzzy_duplicates(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "hello world   \nhello world\n")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        edit(ctx, run_tool, "t.txt", ("hello world", "x"))


def test_lf_old_text_matches_crlf_file(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "line one\r\nline two\r\nline three\r\n")
    edit(ctx, run_tool, "t.txt", ("line two\n", "replaced line\n"))
    assert path.read_bytes() == b"line one\r\nreplaced line\r\nline three\r\n"


def test_crlf_is_preserved(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "first\r\nsecond\r\nthird\r\n")
    edit(ctx, run_tool, "t.txt", ("second\n", "REPLACED\n"))
    assert path.read_bytes() == b"first\r\nREPLACED\r\nthird\r\n"


def test_lf_is_preserved(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "first\nsecond\nthird\n")
    edit(ctx, run_tool, "t.txt", ("second\n", "REPLACED\n"))
    assert path.read_bytes() == b"first\nREPLACED\nthird\n"


def test_mixed_endings_count_as_duplicates(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "hello\r\nworld\r\n---\r\nhello\nworld\n")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        edit(ctx, run_tool, "t.txt", ("hello\nworld\n", "x\n"))


def test_bom_is_preserved(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "\ufefffirst\r\nsecond\r\nthird\r\n")
    edit(ctx, run_tool, "t.txt", ("second\n", "REPLACED\n"))
    assert path.read_bytes().decode() == "\ufefffirst\r\nREPLACED\r\nthird\r\n"


# --- several edits (0.73.1) ---------------------------------------------------------------------------


def test_two_disjoint_edits(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "alpha\nbeta\ngamma\ndelta\n")
    result = edit(ctx, run_tool, "t.txt", ("delta", "DELTA"), ("alpha", "ALPHA"))
    assert result.content[0].text == "Successfully replaced 2 block(s) in t.txt."  # type: ignore[union-attr]
    assert path.read_text() == "ALPHA\nbeta\ngamma\nDELTA\n"


def test_edits_are_matched_against_the_original(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "a b\n")
    edit(ctx, run_tool, "t.txt", ("a", "b"), ("b", "c"))
    assert path.read_text() == "b c\n"


def test_overlapping_edits(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "one two three\n")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("two three", "x"), ("one two", "y"))
    assert str(info.value) == ("edits[1] and edits[0] overlap in t.txt. Merge them into one edit or target disjoint "
                               "regions.")
    assert path.read_text() == "one two three\n"


def test_several_edits_error_texts(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "foo foo bar\n")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("bar", "x"), ("nope", "y"))
    assert str(info.value) == ("Could not find edits[1] in t.txt. The oldText must match exactly including all "
                               "whitespace and newlines.")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("bar", "x"), ("foo", "y"))
    assert str(info.value) == ("Found 2 occurrences of edits[1] in t.txt. Each oldText must be unique. Please provide "
                               "more context to make it unique.")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("bar", "x"), ("", "y"))
    assert str(info.value) == "edits[1].oldText must not be empty in t.txt."
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("bar", "bar"), ("foo foo", "foo foo"))
    assert str(info.value) == "No changes made to t.txt. The replacements produced identical content."


def test_single_edit_empty_and_no_change(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "abc\n")
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("", "x"))
    assert str(info.value) == "oldText must not be empty in t.txt."
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "t.txt", ("abc", "abc"))
    assert str(info.value) == ("No changes made to t.txt. The replacement produced identical content. This might "
                               "indicate an issue with special characters or the text not existing as expected.")


def test_missing_file(ctx: ToolContext, run_tool: Any) -> None:
    with pytest.raises(ToolError) as info:
        edit(ctx, run_tool, "missing.txt", ("a", "b"))
    assert str(info.value) == "Could not edit file: missing.txt. Error code: ENOENT."


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anything")
def test_read_only_file(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "ro.txt", "abc")
    path.chmod(0o444)
    with pytest.raises(ToolError, match=r"^Could not edit file: ro.txt. Error code: EACCES.$"):
        edit(ctx, run_tool, "ro.txt", ("a", "b"))


# --- argument shapes ------------------------------------------------------------------------------------


def test_edits_as_json_string(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "one two\n")
    run_tool(TOOL, {"path": "t.txt", "edits": json.dumps([{"oldText": "one", "newText": "1"}])}, ctx)
    assert path.read_text() == "1 two\n"


def test_edits_as_json_string_of_one_object_fails_validation(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "one\n")
    with pytest.raises(ValidationError, match=r"edits\.0: must be object"):
        run_tool(TOOL, {"path": "t.txt", "edits": json.dumps({"oldText": "one", "newText": "1"})}, ctx)


def test_edits_as_single_object(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "one\n")
    run_tool(TOOL, {"path": "t.txt", "edits": {"oldText": "one", "newText": "1"}}, ctx)
    assert path.read_text() == "1\n"


def test_legacy_top_level_old_and_new_text(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "Hello, world!")
    result = run_tool(TOOL, {"path": "t.txt", "oldText": "world", "newText": "testing"}, ctx)
    assert result.content[0].text == "Successfully replaced 1 block(s) in t.txt."
    assert path.read_text() == "Hello, testing!"


def test_legacy_fields_are_appended_to_edits(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "a b c\n")
    run_tool(TOOL, {"path": "t.txt", "edits": [{"oldText": "a", "newText": "A"}], "oldText": "c", "newText": "C"}, ctx)
    assert path.read_text() == "A b C\n"


def test_lone_old_text_is_not_folded(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "a\n")
    with pytest.raises(ValidationError) as info:
        run_tool(TOOL, {"path": "t.txt", "oldText": "a"}, ctx)
    assert "edits: must have required properties edits" in str(info.value)
    assert "oldText: schema is false" in str(info.value)
    assert "root: must not have additional properties" in str(info.value)


def test_empty_edits_list(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "a\n")
    with pytest.raises(ToolError) as info:
        run_tool(TOOL, {"path": "t.txt", "edits": []}, ctx)
    assert str(info.value) == "Edit tool input is invalid. edits must contain at least one replacement."


def test_unknown_key_in_an_item(ctx: ToolContext, run_tool: Any) -> None:
    put(ctx, "t.txt", "a\n")
    with pytest.raises(ValidationError) as info:
        run_tool(TOOL, {"path": "t.txt", "edits": [{"oldText": "a", "newText": "b", "x": 1}]}, ctx)
    assert "edits.0.x: schema is false" in str(info.value)
    assert "edits.0: must not have additional properties" in str(info.value)


def test_prepare_arguments_does_not_touch_its_input() -> None:
    raw = {"path": "p", "edits": '[{"oldText": "a", "newText": "b"}]', "oldText": "c", "newText": "d"}
    before = json.dumps(raw)
    prepared = prepare_arguments(raw)
    assert json.dumps(raw) == before
    assert prepared == {"path": "p", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}
    assert prepare_arguments("not a dict") == "not a dict"
    assert prepare_arguments({"edits": "not json"}) == {"edits": "not json"}


# --- beyond Pi: a fuzzy match changes only its own region -----------------------------------------------


def test_fuzzy_edit_leaves_the_rest_of_the_file_alone(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "a = \u201cone\u201d\nuntouched \u2018line\u2019\n")
    edit(ctx, run_tool, "t.txt", ('a = "one"', 'a = "two"'))
    assert path.read_text() == 'a = "two"\nuntouched \u2018line\u2019\n'


def test_fuzzy_edit_keeps_every_other_byte(ctx: ToolContext, run_tool: Any) -> None:
    original = ("\ufeffheader \u2014 keep   \r\n"
                "x = \u201cquoted\u201d;  \r\n"
                "\uff21\uff22 full width stays\r\n"
                "caf\u00e9\u00a0nbsp stays \r\n"
                "tail\u2019s end")
    path = put(ctx, "t.txt", original)
    edit(ctx, run_tool, "t.txt", ('x = "quoted";', "x = 'plain';"))
    expected = original.replace("x = \u201cquoted\u201d;  ", "x = 'plain';")
    assert path.read_bytes() == expected.encode()


def test_fuzzy_match_in_the_middle_of_a_line(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "say(\u201chi\u201d) \u2014 and \u201cbye\u201d\n")
    edit(ctx, run_tool, "t.txt", ('"hi"', '"hello"'))
    assert path.read_text() == "say(\"hello\") \u2014 and \u201cbye\u201d\n"


def test_fuzzy_edits_several_regions(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "\u201ca\u201d\nkeep \u2018me\u2019\n\u201cb\u201d  \n")
    edit(ctx, run_tool, "t.txt", ('"a"', "A"), ('"b"', "B"))
    assert path.read_text() == "A\nkeep \u2018me\u2019\nB\n"


def test_fuzzy_match_starting_inside_an_expanded_character(ctx: ToolContext, run_tool: Any) -> None:
    # U+FB01 (the "fi" ligature) becomes "fi" under NFKC; a match that starts at its "i" cannot map to a
    # column of the original line, so only that line is rewritten in normalised form.
    path = put(ctx, "t.txt", "keep \u201cthis\u201d\n\ufb01nal \u2013 x\n")
    edit(ctx, run_tool, "t.txt", ("inal - x", "NAL"))
    assert path.read_text() == "keep \u201cthis\u201d\nfNAL\n"


def test_non_utf8_bytes_survive_an_edit(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", b"caf\xe9 latin-1\nchange me\n\xff\xfe end\n")
    edit(ctx, run_tool, "t.txt", ("change me", "changed"))
    assert path.read_bytes() == b"caf\xe9 latin-1\nchanged\n\xff\xfe end\n"


def test_normalize_for_fuzzy_match() -> None:
    assert normalize_for_fuzzy_match("a\u00a0b  \n\u201cq\u201d \u2212 \uff21\t\n") == 'a b\n"q" - A\n'


# --- writes ---------------------------------------------------------------------------------------------


def test_edit_keeps_file_mode(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "run.sh", "#!/bin/sh\necho hi\n")
    path.chmod(0o751)
    edit(ctx, run_tool, "run.sh", ("hi", "there"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == "#!/bin/sh\necho there\n"


def test_edit_through_a_symlink_keeps_the_link(ctx: ToolContext, run_tool: Any) -> None:
    target = put(ctx, "real.txt", "value = 1\n")
    (ctx.cwd / "link.txt").symlink_to(target)
    edit(ctx, run_tool, "link.txt", ("1", "2"))
    assert (ctx.cwd / "link.txt").is_symlink()
    assert target.read_text() == "value = 2\n"


def test_failed_write_leaves_the_original(ctx: ToolContext, run_tool: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    path = put(ctx, "t.txt", "original content\n")

    def crash(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(ToolError, match="ENOSPC"):
        edit(ctx, run_tool, "t.txt", ("original", "new"))
    assert path.read_text() == "original content\n"
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["t.txt"]


def test_aborted_edit_does_nothing(ctx: ToolContext, run_tool: Any) -> None:
    path = put(ctx, "t.txt", "abc")
    ctx.signal.abort()
    with pytest.raises(AbortedError, match="^Operation aborted$"):
        edit(ctx, run_tool, "t.txt", ("a", "b"))
    assert path.read_text() == "abc"


class MemoryEditOps(EditOperations):
    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def access(self, path: str) -> None:
        if path not in self.files:
            raise FileNotFoundError(2, "No such file or directory", path)

    def read_file(self, path: str) -> bytes:
        return self.files[path]

    def write_file(self, path: str, content: bytes) -> None:
        self.files[path] = content


def test_edit_on_another_backend(tmp_path: Path, run_tool: Any) -> None:
    ops = MemoryEditOps({"/remote/a.txt": b"x = 1\n"})
    tool = create_edit_tool(ops)
    run_tool(tool, {"path": "/remote/a.txt", "edits": [{"oldText": "1", "newText": "2"}]}, ToolContext(cwd=tmp_path))
    assert ops.files["/remote/a.txt"] == b"x = 2\n"
    with pytest.raises(ToolError, match="Error code: ENOENT"):
        run_tool(tool, {"path": "/remote/b.txt", "edits": [{"oldText": "1", "newText": "2"}]}, ToolContext(cwd=tmp_path))


# --- diff -----------------------------------------------------------------------------------------------


def test_diff_context_and_skip_markers() -> None:
    old = "\n".join(f"l{i}" for i in range(1, 31))
    new = old.replace("l10\n", "L10\n").replace("l25\n", "L25\n")
    diff = generate_diff(old, new)
    assert diff.first_changed_line == 10
    assert diff.diff.split("\n") == [
        "    ...", "  6 l6", "  7 l7", "  8 l8", "  9 l9", "-10 l10", "+10 L10",
        " 11 l11", " 12 l12", " 13 l13", " 14 l14", "    ...", " 21 l21", " 22 l22", " 23 l23", " 24 l24",
        "-25 l25", "+25 L25", " 26 l26", " 27 l27", " 28 l28", " 29 l29", "    ...",
    ]


def test_diff_short_gap_is_shown_whole_and_numbers_follow_each_side() -> None:
    diff = generate_diff("a\nb\nc\nd", "a\nX\nY\nc\nd2")
    assert diff.diff.split("\n") == [" 1 a", "-2 b", "+2 X", "+3 Y", " 3 c", "-4 d", "+5 d2"]
    assert diff.first_changed_line == 2


# --- plugin surface -------------------------------------------------------------------------------------


def test_registry_serves_edit_with_pis_schema() -> None:
    from pi_core.loader.plugins import load_plugins
    from pi_core.registry import build_registry

    registry = build_registry(load_plugins(discover_extensions=False))
    tool = registry.tools.items["edit"]
    ours = tool.definition().parameters
    assert ours == PARAMETERS and tool.json_schema is PARAMETERS and tool.coercion == "typebox" and tool.prepare_arguments is prepare_arguments
    reference = json.loads(Path("/work/shared/spec/reference/pi-tools-all.json").read_text())
    pi = next(t["input_schema"] for t in reference if t["name"] == "edit")

    def shape(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items() if k != "description"}
        return [shape(v) for v in node] if isinstance(node, list) else node

    # The Anthropic capture drops the top-level additionalProperties:false that Pi's schema has.
    assert ours["additionalProperties"] is False and ours["properties"]["edits"]["items"]["additionalProperties"] is False
    assert shape({k: v for k, v in ours.items() if k != "additionalProperties"}) == shape(pi)
    assert len(tool.prompt_guidelines) == 4 and tool.prompt_snippet


@given(st.text(alphabet=st.sampled_from("ab \t\n\u00a0\u2019\u201c\u2014\uff21\u0301e\ufb01\u3000\u2028\r"), max_size=40))
def test_whole_text_normalisation_equals_line_by_line(text: str) -> None:
    from pi_builtin_tools._edit_match import _normalize_line

    assert normalize_for_fuzzy_match(text) == "\n".join(_normalize_line(line) for line in text.split("\n"))


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(st.text(alphabet=st.sampled_from("ab \u2019\u201c\u2014\u00a0"), max_size=8), max_size=4),
    target=st.text(alphabet=st.sampled_from("xyz\u2018\u2019\u201c\u201d\u2013"), min_size=1, max_size=6),
    after=st.lists(st.text(alphabet=st.sampled_from("ab \u2019\u201c\u2014\u00a0"), max_size=8), max_size=4),
)
def test_fuzzy_edit_changes_only_its_region(before: list[str], target: str, after: list[str]) -> None:
    from pi_builtin_tools._edit_match import Edit, apply_edits

    marker = "<<" + target + ">>"
    content = "\n".join([*before, marker, *after])
    old = normalize_for_fuzzy_match(marker)
    if content.count(marker) != 1 or normalize_for_fuzzy_match(content).count(old) != 1:
        return
    result = apply_edits(content, [Edit(old, "NEW")], "p")
    assert result == content.replace(marker, "NEW")
