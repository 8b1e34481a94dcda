"""plan_mode's helpers: which bash commands plan mode allows, how plan steps and [DONE:n] markers are read."""

from __future__ import annotations

import pytest
from pi_examples.plan_mode.utils import (
    TodoItem,
    all_steps_complete,
    clean_step_text,
    extract_done_steps,
    extract_todo_items,
    is_safe_command,
    mark_completed_steps,
)


@pytest.mark.parametrize("command", [
    "ls -la", "  cat README.md", "grep -rn foo src", "git status", "git log --oneline -5", "GIT DIFF",
    "git ls-files", "npm list", "python --version", "curl -s https://example.invalid", "wget -O - x",
    "sed -n 1,5p a.txt", "rg plan", "find . -name '*.py' | wc -l", "diff <(ls a) <(ls b)",
])
def test_read_only_commands_are_allowed(command: str) -> None:
    assert is_safe_command(command)


@pytest.mark.parametrize("command", [
    "rm x", "ls && rm -rf build", "echo hi > f", "cat a >> b", "cp a b", "git commit -m x", "git checkout main",
    "git branch -D old", "npm install left-pad", "pip install x", "sudo ls", "ls | tee out", "vim a.txt",
    "echo a 2>&1",  # any ">" counts as a redirection into a file, as in Pi
    "sed -i s/a/b/ f",  # not on the allow-list
    "Cat a.txt",  # the program names are matched as typed
    "make", "python script.py", "",
])
def test_writing_or_unknown_commands_are_blocked(command: str) -> None:
    assert not is_safe_command(command)


def test_word_boundaries_are_ascii_like_javascripts() -> None:
    assert not is_safe_command("echo ärm")  # "rm" after a non-ASCII letter is still the word rm
    assert is_safe_command("ls formation")  # but not inside an ASCII word


def test_steps_come_from_the_last_plan_header_cleaned() -> None:
    text = ("Plan:\n1. draft step that is dropped\n\nThe real one:\n**Plan:**\n"
            "1. **Run the** `pytest` suite\n2) Check   config/paths.py for *stale* entries**\n"
            "3. /etc/hosts\n4. - dash item here\n5. tiny\n6. Update the   docs\nnot a step\n")
    items = extract_todo_items(text)
    assert [(t.step, t.text) for t in items] == [
        (1, "Pytest suite"), (2, "Config/paths.py for stale entries"), (3, "Docs")]
    assert not any(t.completed for t in items)
    assert extract_todo_items("1. no header here at all") == []


def test_clean_step_text() -> None:
    assert clean_step_text("read the file a.txt carefully") == "File a.txt carefully"
    assert clean_step_text("install\tthe  deps") == "Deps"
    assert clean_step_text("fix `b`") == "Fix b"


def test_done_markers_in_every_spelling() -> None:
    text = "[DONE:1] [done: 2] [DONE 3] Done: 4. Step 5 is complete, step 6 finished, Step 7 is not done, [DONE:1]"
    assert extract_done_steps(text) == [1, 2, 3, 4, 5, 6]
    items = [TodoItem(1, "a step"), TodoItem(2, "b step", completed=True), TodoItem(9, "c step")]
    assert mark_completed_steps(text, items) == 1
    assert [t.completed for t in items] == [True, True, False]


@pytest.mark.parametrize(("message", "done"), [
    ("All steps complete.", True), ("every step is done", True), ("The plan is complete!", True),
    ("plan done", True), ("all steps are done", False),  # "are" must be followed directly, as in Pi
    ("Not all of it is finished", False), ("Step 1 done", False),
])
def test_whole_plan_completion_phrases(message: str, done: bool) -> None:
    assert all_steps_complete(message) is done
