"""Editor helpers: completion (slash commands, ``@`` files, Tab paths), input kinds and ``!cmd``.

prompt_toolkit is imported inside functions and classes built on demand, so importing this module
stays cheap; the app calls ``make_completer`` once it is up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_plugins.interactive.commands import MenuCommand, split_command

from pi_core.tui.fuzzy import fuzzy_filter

MAX_INDEXED_FILES = 20_000
MAX_FILE_SUGGESTIONS = 20


@dataclass
class InputKind:
    kind: str  # "empty", "command", "bash", "prompt"
    text: str
    command: str = ""  # slash command name, or the shell command for "bash"
    args: str = ""
    send_output: bool = True  # "!cmd" sends, "!!cmd" does not


def classify(text: str) -> InputKind:
    """What a submitted editor text is: a slash command, a shell command, or a prompt."""
    stripped = text.strip()
    if not stripped:
        return InputKind("empty", text)
    if stripped.startswith("!!"):
        return InputKind("bash", text, stripped[2:].strip(), send_output=False)
    if stripped.startswith("!"):
        return InputKind("bash", text, stripped[1:].strip())
    parsed = split_command(stripped)
    if parsed is not None:
        return InputKind("command", stripped, parsed[0], parsed[1])
    return InputKind("prompt", text)


class FileIndex:
    """Files under ``cwd`` (git-ignore aware through ripgrep when present), listed once on first use."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        if self._paths is None:
            self._paths = self._list()
        return self._paths

    def _list(self) -> list[str]:
        rg = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
        files: list[str] = []
        if Path(rg).exists():
            done = subprocess.run([rg, "--files", "--hidden", "--glob", "!.git"], cwd=self.cwd,
                                  capture_output=True, text=True, timeout=10, check=False)
            files = done.stdout.splitlines()[:MAX_INDEXED_FILES]
        else:
            for root, dirs, names in os.walk(self.cwd):
                dirs[:] = [d for d in dirs if d not in (".git", "node_modules", "__pycache__", ".venv")]
                rel = os.path.relpath(root, self.cwd)
                files.extend(os.path.normpath(os.path.join(rel, n)) for n in names)
                if len(files) >= MAX_INDEXED_FILES:
                    break
        dirs_seen = {str(Path(f).parent) + "/" for f in files if str(Path(f).parent) != "."}
        return sorted(dirs_seen) + sorted(files)

    def search(self, query: str) -> list[str]:
        return fuzzy_filter(query, self.paths(), key=lambda p: p)[:MAX_FILE_SUGGESTIONS]


def path_candidates(word: str, cwd: Path) -> list[str]:
    """Completions of a path prefix, as full replacement words; directories end with '/'."""
    expanded = os.path.expanduser(word)
    head, tail = os.path.split(expanded)
    base = Path(head) if os.path.isabs(head) else cwd / head
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return []
    prefix_shown = word[: len(word) - len(tail)]
    out = []
    for entry in entries:
        if entry.name.startswith(tail) and (tail.startswith(".") or not entry.name.startswith(".")):
            out.append(prefix_shown + entry.name + ("/" if entry.is_dir() else ""))
    return out


def make_completer(commands: Callable[[], dict[str, MenuCommand]], cwd: Path, files: FileIndex,
                   providers: Callable[[], Any] = lambda: None) -> Any:
    """pi's completions, or those of the plugins' provider stack (``providers()``: its top) when there is one."""
    from prompt_toolkit.completion import CompleteEvent, Completer, Completion
    from prompt_toolkit.document import Document

    class PiCompleter(Completer):
        def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            return self.builtin(document, complete_event)

        async def get_completions_async(self, document: Document, complete_event: CompleteEvent) -> Any:
            top = providers()
            if top is None:
                for completion in self.builtin(document, complete_event):
                    yield completion
                return
            lines = document.text.split("\n")
            found = await top.get_suggestions(lines, document.cursor_position_row, document.cursor_position_col, None)
            for item in found.items if found is not None else []:
                yield Completion(item.value, start_position=-len(found.prefix), display=item.label or item.value,
                                 display_meta=item.description or "")

        def builtin(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
            before = document.text_before_cursor
            if before.startswith("/") and " " in before and "\n" not in before:
                name, _, prefix = before[1:].partition(" ")
                command = commands().get(name)
                complete = command.complete if command is not None else None
                for item in (complete(prefix) or []) if complete is not None else []:
                    yield Completion(item.value, start_position=-len(prefix), display=item.label or item.value,
                                     display_meta=item.description or "")
                return
            if before.startswith("/") and " " not in before and "\n" not in before:
                table = commands()
                query = before[1:]
                names = [n for n in table if n.startswith(query)] or fuzzy_filter(query, list(table), key=lambda n: n)
                for name in names:
                    command = table[name]
                    meta = command.description + (f" ({command.source})" if command.source != "builtin" else "")
                    yield Completion("/" + name, start_position=-len(before), display="/" + name, display_meta=meta)
                return
            word = before.split()[-1] if before and not before[-1].isspace() else ""
            if word.startswith("@"):
                for path in files.search(word[1:]):
                    yield Completion("@" + path, start_position=-len(word), display=path)
            elif complete_event.completion_requested:
                for candidate in path_candidates(word, cwd):
                    shown = candidate.rstrip("/").rsplit("/", 1)[-1] + ("/" if candidate.endswith("/") else "")
                    yield Completion(candidate, start_position=-len(word), display=shown)

    return PiCompleter()


def _drawn_cursor_class() -> Any:
    from prompt_toolkit.layout.processors import (
        Processor,
        Transformation,
        TransformationInput,
    )

    class DrawnCursorProcessor(Processor):
        """Pi's own cursor: the character under the cursor in reverse video (the terminal's is hidden)."""

        def apply_transformation(self, ti: TransformationInput) -> Transformation:
            from prompt_toolkit.layout.utils import explode_text_fragments

            cursor = ti.buffer_control.buffer.document.cursor_position_row, ti.buffer_control.buffer.document.cursor_position_col
            if ti.lineno != cursor[0]:
                return Transformation(ti.fragments)
            fragments = explode_text_fragments(ti.fragments)
            column = ti.source_to_display(cursor[1])
            if column < len(fragments):
                style_, text = fragments[column][0], fragments[column][1]
                fragments[column] = (style_ + " reverse", text)
            else:
                fragments.append(("reverse", " "))
            return Transformation(fragments)

    return DrawnCursorProcessor


def DrawnCursor() -> Any:
    return _drawn_cursor_class()()
