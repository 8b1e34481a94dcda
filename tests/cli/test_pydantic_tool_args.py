"""A tool pack whose tool declares its arguments as a pydantic model, through ``pi -e ... -p`` against the fake
server: the schema the model receives is pydantic's (without its title noise), ``execute`` gets the model
instance, and a refused call reaches the model in Pi's exact validation text."""

from __future__ import annotations

from pathlib import Path

from pi_core.testing.fake_server import Reply

from .conftest import PiRunner
from .test_print_mode import tool_result_texts

PACK = '''
from pydantic import BaseModel, Field, field_validator

from pi_core import Tool, hookimpl


class Where(BaseModel):
    shelf: str = Field(description="Shelf label.")


class NoteArgs(BaseModel):
    title: str = Field(description="Heading of the note.")
    copies: int = Field(1, ge=1, description="How many copies to file.")
    tags: list[str] = Field(default_factory=list, description="Labels to file it under.")
    where: Where | None = None

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a title needs a visible character")
        return value


def execute(args: NoteArgs, ctx) -> str:
    shelf = args.where.shelf if args.where else "-"
    return f"{type(args).__name__}: {args.title} x{args.copies} {args.tags} on {shelf}"


TOOL = Tool(name="file_note", description="File a note.", parameters=NoteArgs, execute=execute)


@hookimpl
def pi_tools():
    return [TOOL]
'''

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Heading of the note."},
        "copies": {"type": "integer", "default": 1, "minimum": 1, "description": "How many copies to file."},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels to file it under."},
        "where": {"anyOf": [{"type": "object", "properties": {"shelf": {"type": "string",
                                                                          "description": "Shelf label."}},
                             "required": ["shelf"]}, {"type": "null"}], "default": None},
    },
    "required": ["title"],
}


def test_a_pydantic_model_tool_end_to_end(pi_anthropic: PiRunner, tmp_path: Path) -> None:
    pack = tmp_path / "notes_pack.py"
    pack.write_text(PACK)
    pi = pi_anthropic
    pi.server.add(
        Reply(tool_calls=[("file_note", {"title": "groceries", "copies": "2", "where": {"shelf": "B"}})]),
        Reply(tool_calls=[("file_note", {"title": "x", "copies": 0})]),
        Reply(tool_calls=[("file_note", {"title": "   "})]),
        Reply(text="filed"),
    )
    done = pi.run("-e", str(pack), "--tools", "file_note", "-p", "file it")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "filed\n"
    [declared] = pi.server.requests[0].body["tools"]
    assert (declared["name"], declared["input_schema"]) == ("file_note", SCHEMA)
    # Valid: the string "2" is coerced as Pi coerces, and execute gets a NoteArgs with a nested Where.
    assert tool_result_texts(pi.server.requests[1].body)[-1] == "NoteArgs: groceries x2 [] on B"
    # The schema refuses it: Pi's (TypeBox) wording, from jsonschema.
    assert tool_result_texts(pi.server.requests[2].body)[-1] == (
        'Validation failed for tool "file_note":\n  - copies: must be >= 1\n\n'
        'Received arguments:\n{\n  "title": "x",\n  "copies": 0\n}')
    # The model's own validator refuses it: the same layout, pydantic's wording.
    assert tool_result_texts(pi.server.requests[3].body)[-1] == (
        'Validation failed for tool "file_note":\n  - title: Value error, a title needs a visible character\n\n'
        'Received arguments:\n{\n  "title": "   "\n}')


def _walkthrough_tool() -> str:
    """The first code block of CONTRIBUTING.md's "Writing a tool plugin": the module it teaches."""
    text = (Path(__file__).parents[2] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing a tool plugin"):]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_contributing_walkthrough_tool_runs_as_written(pi_anthropic: PiRunner, tmp_path: Path) -> None:
    pack = tmp_path / "word_count.py"
    pack.write_text(_walkthrough_tool())
    pi = pi_anthropic
    (pi.cwd / "notes.txt").write_text("one two\nthree\n")
    pi.server.add(Reply(tool_calls=[("word_count", {"path": "notes.txt"})]),
                  Reply(tool_calls=[("word_count", {"path": "gone.txt"})]), Reply(text="counted"))
    done = pi.run("-e", str(pack), "--tools", "word_count", "-p", "count")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "counted\n"
    [declared] = pi.server.requests[0].body["tools"]
    assert declared["input_schema"] == {"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "description": "File to count, relative to the cwd."}}}
    assert tool_result_texts(pi.server.requests[1].body)[-1] == "3"
    assert tool_result_texts(pi.server.requests[2].body)[-1] == "gone.txt: no such file"
