"""Pickers: filtering, moving, multi-select, free text, and the stand-alone ``pi --resume`` picker."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pi_plugins.interactive.pickers import Picker, PickItem, pick_session
from prompt_toolkit.output import DummyOutput

from pi_core.sessions.store import SessionInfo
from pi_core.tui.fuzzy import fuzzy_filter, fuzzy_score


def info(path: str, name: str | None, first: str, age_s: float) -> SessionInfo:
    now = int(time.time() * 1000)
    return SessionInfo(path=Path(path), id=path, cwd="/p", name=name, parent_session_path=None, created=now,
                       modified=now - int(age_s * 1000), message_count=4, first_message=first,
                       all_messages_text=first + " more words")


def test_fuzzy_prefers_contiguous_and_word_start_matches() -> None:
    paths = ["src/app/main.py", "src/maintenance.py", "docs/m_a_i_n.txt", "tests/test_app.py"]
    assert fuzzy_filter("main", paths, key=lambda p: p)[:2] == ["src/app/main.py", "src/maintenance.py"]
    assert fuzzy_score("xyz", "src/app.py") is None
    assert fuzzy_filter("tap", paths, key=lambda p: p)[0] == "tests/test_app.py"  # word starts win


def test_picker_filters_moves_and_selects() -> None:
    picker = Picker("Pick", [PickItem("alpha", 1), PickItem("beta", 2), PickItem("gamma", 3, hint="third")])
    picker.move(1)
    assert picker.result() == 2
    picker.move(-2)
    assert picker.result() == 3  # wraps around
    picker.type("third")  # the hint is searchable too
    assert picker.result() == 3
    picker.type("zzz")
    assert picker.result() is None
    lines = "".join(text for _, text in picker.lines(60))
    assert "no matches" in lines


def test_multi_picker_toggles_and_free_text_returns_typed_text() -> None:
    picker = Picker("Tools", [PickItem("read", "read"), PickItem("bash", "bash")], multi=True, checked={0})
    picker.move(1)
    picker.toggle()
    assert picker.result() == ["read", "bash"]
    assert "[x] bash" in "".join(text for _, text in picker.lines(60))
    ask = Picker("Name?", [], free_text=True, placeholder="a name")
    assert "a name" in "".join(text for _, text in ask.lines(60))
    ask.type("my session")
    assert ask.result() == "my session"


def test_resume_picker_runs_full_screen_and_returns_the_path(pipe: Any) -> None:
    infos = [info("/s/old.jsonl", None, "old question", 7200), info("/s/new.jsonl", "named", "new q", 60)]
    pipe.send_text("old\r")
    assert pick_session(infos, input=pipe, output=DummyOutput()) == Path("/s/old.jsonl")


def test_resume_picker_cancel_returns_none(pipe: Any) -> None:
    pipe.send_text("\x03")  # Ctrl+C
    assert pick_session([info("/s/a.jsonl", None, "q", 1)], input=pipe, output=DummyOutput()) is None
    assert pick_session([]) is None


def test_a_timed_picker_counts_the_seconds_down_in_its_heading() -> None:
    picker = Picker("Pick\nReally?", [PickItem("Yes", True)], deadline=time.monotonic() + 5)
    assert picker.heading() == "Pick\nReally? (5s)"  # Pi appends to the whole heading, message included
    picker.deadline = time.monotonic() + 3.5
    assert picker.lines(80)[0] == ("bold", "Pick\nReally? (4s)\n")
    picker.deadline = time.monotonic() - 1
    assert picker.heading().endswith("(0s)")
    assert Picker("Plain", []).heading() == "Plain"
