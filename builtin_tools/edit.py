"""edit: replace exact (or near-exact) snippets of one file, several per call, keeping its BOM and line endings."""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.errors import ToolError
from pi_core.toolkit.builtin import argument, builtin_tool, parameters
from pi_core.tools import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from pi_core.toolkit.fileops import EditOperations

DEFAULT_ACTIVE = True

PARAMETERS = {**parameters(
    ["path", "edits"],
    path=argument("string", "File to change: a path relative to the working directory, or absolute"),
    edits={
        "type": "array",
        "items": {
            "type": "object",
            "required": ["oldText", "newText"],
            "properties": {
                "oldText": {
                    "type": "string",
                    "description": "The exact text to replace. It must occur exactly once in the original file "
                                   "and must not overlap any other oldText of this call.",
                },
                "newText": {"type": "string", "description": "The text that takes its place."},
            },
            "additionalProperties": False,
        },
        "description": "The replacements, at least one. All are located in the original file, not one after "
                       "another, so they must not overlap or nest. When two changes are in the same block or "
                       "on neighbouring lines, make them one replacement.",
    },
), "additionalProperties": False}

DESCRIPTION = (
    "Change one file by exact text replacement. Each edits[].oldText has to match one unique region of the "
    "original file, and no two regions may overlap. Changes to the same block or to nearby lines belong in a "
    "single edit; do not pad oldText with long unchanged stretches to join changes that are far apart."
)

GUIDELINES = [
    "With edit, every edits[].oldText has to match the file exactly",
    ("To change several separate places in one file, send one edit call with several edits[] entries rather "
    "than several calls"),
    ("Every edits[].oldText is located in the original file, not in the result of earlier edits: never send "
    "overlapping or nested edits, and merge changes that are close together into one edit."),
    ("Make each edits[].oldText as short as it can be while staying unique in the file; leave out long "
    "unchanged stretches."),
]

_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.cache
def _local_edit() -> EditOperations:
    from pi_core.toolkit.fileops import LocalEditOperations

    return LocalEditOperations()


def prepare_arguments(args: Any) -> Any:
    """Accept the shapes models send besides the schema's: ``edits`` as a JSON string, top-level oldText/newText."""
    if not isinstance(args, dict):
        return args
    prepared = copy.copy(args)
    edits = prepared.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            prepared["edits"] = edits = parsed
    if isinstance(prepared.get("oldText"), str) and isinstance(prepared.get("newText"), str):
        folded = list(edits) if isinstance(edits, list) else []
        folded.append({"oldText": prepared.pop("oldText"), "newText": prepared.pop("newText")})
        prepared["edits"] = folded
    return prepared


def _decode(data: bytes) -> str:
    # surrogateescape keeps bytes that are not UTF-8 so they are written back unchanged.
    return data.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate sent by the model, not an escaped byte: write U+FFFD
        return "".join(c if not 0xD800 <= ord(c) <= 0xDBFF and not 0xDC00 <= ord(c) <= 0xDC7F else "\ufffd"
                       for c in text).encode("utf-8", "surrogateescape")


def execute(args: dict[str, Any], ctx: ToolContext, *, operations: EditOperations | None = None) -> ToolResult:
    """Apply ``args['edits']`` to one file through ``operations``, holding the file's mutation slot."""
    # Imported here: pi loads every tool plugin on start, and most runs never edit.
    from pi_builtin_tools._edit_diff import generate_diff
    from pi_builtin_tools._edit_match import (
        Edit,
        apply_edits,
        detect_line_ending,
        normalize_to_lf,
    )

    from pi_core.toolkit.fileops import error_code, node_error_message
    from pi_core.toolkit.mutation_queue import file_mutation

    ops = operations or _local_edit()
    ctx.signal.raise_if_aborted()
    path: str = args["path"]
    raw_edits = args.get("edits")
    if not isinstance(raw_edits, list) or not raw_edits:
        raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
    edits = [Edit(e["oldText"], e["newText"]) for e in raw_edits]
    absolute = str(ctx.resolve(path))
    with file_mutation(absolute, ctx.signal):
        ctx.signal.raise_if_aborted()
        try:
            ops.access(absolute)
        except OSError as err:
            code = error_code(err)
            raise ToolError(f"Could not edit file: {path}. Error code: {code}." if code
                            else f"Could not edit file: {path}. {err}.") from err
        try:
            raw = _decode(ops.read_file(absolute))
        except OSError as err:
            raise ToolError(node_error_message(err, "read", absolute)) from err
        ctx.signal.raise_if_aborted()
        bom = "\ufeff" if raw.startswith("\ufeff") else ""
        text = raw[len(bom):]
        ending = detect_line_ending(text)
        content = normalize_to_lf(text)
        new_content = apply_edits(content, edits, path)
        final = new_content.replace("\n", "\r\n") if ending == "\r\n" else new_content
        ctx.signal.raise_if_aborted()
        try:
            ops.write_file(absolute, _encode(bom + final))
        except OSError as err:
            raise ToolError(node_error_message(err, "open", absolute)) from err
    diff = generate_diff(content, new_content)
    details: dict[str, Any] = {"diff": _SURROGATE.sub("\ufffd", diff.diff)}
    if diff.first_changed_line is not None:
        details["firstChangedLine"] = diff.first_changed_line
    return ToolResult.text(f"Successfully replaced {len(edits)} block(s) in {path}.", details)


def create_edit_tool(operations: EditOperations | None = None) -> Tool:
    """An edit tool on ``operations`` (the local disk, with atomic replacement, by default)."""
    return builtin_tool(
        "edit", DESCRIPTION, PARAMETERS, functools.partial(execute, operations=operations),
        active_by_default=DEFAULT_ACTIVE,
        prompt_snippet="Change files by exact text replacement, several separate spots in one call if needed",
        prompt_guidelines=GUIDELINES, prepare_arguments=prepare_arguments)


TOOL = create_edit_tool()


@hookimpl
def pi_tools() -> list[Tool]:
    return [TOOL]
