"""Random tool arguments through the agent loop for every built-in tool (hypothesis).

Every parameter gets random JSON values (wrong types, huge strings, NUL bytes, lone surrogates) mixed
with plausible ones; the sandbox holds invalid UTF-8, a symlink loop, a directory symlink cycle and a
FIFO. The loop must never crash, every call must end in a result, and a file is either untouched or
holds exactly what a successful write asked for: never half-written, no temp files left behind.

Paths and globs stay inside the sandbox (the suite may run as root): strings for them never start with
``/`` or ``~`` and never contain ``..``; bash only ever runs ``printf`` on random text.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_core.toolkit.validation import validate_tool_arguments

from .harness import BUILTIN, builtin_tools, check_every_call_answered, run_tool_calls

TEXT = "alpha line\nbeta line\ngamma ünïcode line\n" * 3
FIXTURE_PATHS = ["text.txt", "bad.bin", "loop", "dir", "dir/inner.txt", "cycle", "fifo", "missing.txt",
                 "dir/new.txt", "new dir/file.txt", "text.txt/child", "", ".", "@text.txt"]

huge = st.integers(50_000, 300_000).map(lambda n: "x" * n)
nul = st.text(max_size=20).map(lambda s: s + "\x00" + s)
surrogate = st.sampled_from(["\ud800", "a\udfffb", "\udc80\udc80"])
leaf = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
        | st.floats(allow_nan=False) | st.text(max_size=40) | huge | nul | surrogate)
json_value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)


def _confined(text: str) -> str:
    return text.replace("..", "_").lstrip("/~")


confined_text = (st.text(max_size=40) | nul | huge).map(_confined)
path_value = st.sampled_from(FIXTURE_PATHS) | confined_text | json_value.filter(lambda v: not isinstance(v, str))
glob_value = st.sampled_from(["*", "**/*", "*.txt", "**/inner*", "[", "{a,b", "**/**/**"]) | confined_text \
    | json_value.filter(lambda v: not isinstance(v, str))
number = st.integers(-5, 5000) | st.floats(allow_nan=False) | st.integers(-(2 ** 70), 2 ** 70)
command = (st.sampled_from(["echo hi", "exit 3", "printf 'a\\0b\\xff'", "seq 1 5000", "cat fifo < /dev/null &",
                            "ls -R", "echo out; echo err >&2"])
           | (st.text(max_size=60) | nul | huge).map(lambda s: "printf %s " + shlex.quote(s))
           | json_value.filter(lambda v: not isinstance(v, str)))
old_text = st.sampled_from(["alpha", "beta line\n", "gamma ünïcode", "line", "", "\xff", "missing"]) | st.text(max_size=10)
edit_item = st.fixed_dictionaries({"oldText": old_text, "newText": st.text(max_size=30) | huge | nul | surrogate})
edits_value = st.lists(edit_item | json_value, max_size=3) | json_value

PARAMS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "read": {"path": path_value, "offset": number | json_value, "limit": number | json_value},
    "bash": {"command": command, "timeout": st.sampled_from([0.5, 1, 5]) | json_value},
    "edit": {"path": path_value, "edits": edits_value, "oldText": old_text, "newText": json_value},
    "write": {"path": path_value, "content": st.text(max_size=200) | huge | nul | surrogate | json_value},
    "grep": {"pattern": st.sampled_from(["line", "ü", "(", "\\", "a|b", ""]) | st.text(max_size=20) | json_value,
             "path": path_value, "glob": glob_value, "ignoreCase": json_value, "literal": json_value,
             "context": number | json_value, "limit": number | json_value},
    "find": {"pattern": glob_value, "path": path_value, "limit": number | json_value},
    "ls": {"path": path_value, "limit": number | json_value},
}


def test_every_builtin_tool_is_fuzzed() -> None:
    assert sorted(PARAMS) == sorted(BUILTIN)
    for name, tool in builtin_tools().items():
        schema = tool.definition().parameters
        assert set(schema["properties"]) <= set(PARAMS[name]), name


@st.composite
def arguments(draw: st.DrawFn, tool: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, strategy in PARAMS[tool].items():
        if draw(st.booleans()) or name in ("path", "command", "content", "edits", "pattern"):
            out[name] = draw(strategy)
    if draw(st.integers(0, 9)) == 0:
        out[draw(st.text(max_size=8))] = draw(json_value)  # an unknown extra parameter
    return out


def make_sandbox(root: Path) -> None:
    (root / "text.txt").write_text(TEXT)
    (root / "bad.bin").write_bytes(b"ok line\n\xff\xfe\x80 broken \xc3(\nline\n")
    (root / "dir").mkdir()
    (root / "dir" / "inner.txt").write_text("inner line\n")
    (root / "loop").symlink_to("loop")
    (root / "cycle").symlink_to(".")
    os.mkfifo(root / "fifo")


def snapshot(root: Path) -> dict[str, bytes]:
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                files[str(path.relative_to(root))] = path.read_bytes()
    return files


def check_files(root: Path, before: dict[str, bytes], tool: str, args: dict[str, Any], is_error: bool) -> None:
    after = snapshot(root)
    leftovers = [p for p in after if Path(p).name.endswith(".tmp") and Path(p).name.startswith(".")]
    assert not leftovers, leftovers
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    if not changed:
        return
    assert tool in ("write", "edit", "bash") and not is_error, (tool, args, changed)
    if tool == "write":
        assert len(changed) == 1, changed
        (path,) = changed
        # as the loop coerced it (Pi's rules: null -> "null"); a lone surrogate becomes U+FFFD, as in Node
        content = validate_tool_arguments(builtin_tools()["write"], args)["content"]
        expected = content.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")
        assert after[path] == expected, "write left other content than it was given"


def fuzz_once(tool: str, data: st.DataObject) -> None:
    args = data.draw(arguments(tool), label="arguments")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_sandbox(root)
        before = snapshot(root)
        messages = run_tool_calls([(tool, args)], root)
        (result,) = check_every_call_answered(messages, 1)
        json.dumps(result.to_json())  # what the session file gets is serialisable
        check_files(root, before, tool, args, result.is_error)


HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


@pytest.mark.parametrize("tool", BUILTIN)
@settings(max_examples=30, deadline=None, database=None, suppress_health_check=HEALTH)
@given(data=st.data())
def test_random_arguments_always_end_in_a_result(tool: str, data: st.DataObject) -> None:
    fuzz_once(tool, data)


@pytest.mark.slow
@pytest.mark.parametrize("tool", BUILTIN)
@settings(max_examples=400, deadline=None, database=None, suppress_health_check=HEALTH)
@given(data=st.data())
def test_random_arguments_many_examples(tool: str, data: st.DataObject) -> None:
    fuzz_once(tool, data)


@settings(max_examples=15, deadline=None, database=None, suppress_health_check=HEALTH)
@given(calls=st.lists(st.sampled_from(BUILTIN).flatmap(lambda t: arguments(t).map(lambda a: (t, a))),
                      min_size=2, max_size=5))
def test_random_parallel_batches_of_mixed_tools(calls: list[tuple[str, dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_sandbox(root)
        messages = run_tool_calls(calls, root)
        check_every_call_answered(messages, len(calls))
        leftovers = [p for p in snapshot(root) if Path(p).name.endswith(".tmp")]
        assert not leftovers
