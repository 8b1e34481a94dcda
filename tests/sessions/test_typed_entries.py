"""Session entries as plugins read them (docs/plugins.md#session-entries): typed models over the store's dicts,
which still write Pi's files back byte for byte."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pi_core import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntries,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    hookimpl,
)
from pi_core.app.startup import session_parts
from pi_core.plugins import load_plugins, register_module
from pi_core.registry import build_registry
from pi_core.session import AgentSession, SessionConfig
from pi_core.sessions.manager import SessionManager
from pi_core.testing.fake_provider import FakeProvider, reply
from pi_core.types import (
    AssistantMessage,
    CustomMessage,
    Model,
    ToolResultMessage,
    UserMessage,
)

FIXTURES = sorted(Path(__file__).parent.joinpath("fixtures").glob("*.jsonl"))
MODEL = Model(id="fake-1", api="fake", provider="fake")


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_entry_of_a_pi_session_is_typed_and_gives_back_its_own_dict(path: Path, tmp_path: Path) -> None:
    store = SessionManager.open(shutil.copy(path, tmp_path))  # opening migrates a Pi v1 file in place
    view = SessionEntries(store)
    entries = view.get_entries()
    assert entries and not [e for e in entries if isinstance(e, UnknownEntry)]
    assert [e.to_json() for e in entries] == store.get_entries()
    kinds = {type(e) for e in entries}
    assert {MessageEntry, ThinkingLevelChangeEntry, ModelChangeEntry} <= kinds
    roles = {type(e.message) for e in entries if isinstance(e, MessageEntry)}
    assert {UserMessage, AssistantMessage, ToolResultMessage} <= roles
    assert view.get_branch()[-1] is view.leaf_entry()  # converted once, then cached
    assert view.header.version == 3 and view.header.id == store.session_id


def test_a_compacted_pi_session_reads_its_compactions_and_app_messages(tmp_path: Path) -> None:
    fixture = Path(__file__).parent / "fixtures" / "before-compaction.jsonl"
    entries = SessionEntries(SessionManager.open(shutil.copy(fixture, tmp_path)))
    compactions = [e for e in entries.get_entries() if isinstance(e, CompactionEntry)]
    assert compactions and all(c.summary and c.first_kept_entry_id and c.tokens_before > 0 for c in compactions)
    bash = [e.message for e in entries.get_entries() if isinstance(e, MessageEntry)
            and isinstance(e.message, CustomMessage)]
    assert bash and {m.role for m in bash} == {"bashExecution"}


def test_a_newer_pis_entry_types_and_keys_survive_reading_and_a_round_trip(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    lines = [header,
             {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "hi", "timestamp": 1, "mood": "curious"}, "origin": "voice"},
             {"type": "hologram", "id": "a2", "parentId": "a1", "timestamp": "2026-01-01T00:00:02.000Z",
              "frames": [1, 2]},
             {"type": "custom", "customType": "memo", "data": {"n": 1}, "id": "a3", "parentId": "a2",
              "timestamp": "2026-01-01T00:00:03.000Z"},
             {"type": "label", "id": "a4", "parentId": "a3", "timestamp": "2026-01-01T00:00:04.000Z",
              "targetId": "a1", "label": "start"}]
    path = tmp_path / "newer.jsonl"
    text = "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    store = SessionManager.open(path)
    message, hologram, memo, label = SessionEntries(store).get_entries()
    assert isinstance(message, MessageEntry) and message.model_extra == {"origin": "voice"}
    assert message.message.model_extra == {"mood": "curious"}
    assert isinstance(hologram, UnknownEntry) and hologram.type == "hologram" and hologram.model_extra == {"frames": [1, 2]}
    assert isinstance(memo, CustomEntry) and memo.custom_type == "memo" and memo.data == {"n": 1}
    assert isinstance(label, LabelEntry) and label.target_id == "a1" and label.label == "start"
    assert [e.to_json() for e in (message, hologram, memo, label)] == lines[1:]
    store.append_custom_entry("more", {"x": 1})
    assert path.read_text(encoding="utf-8").startswith(text)  # what was there is written back unchanged


def test_a_broken_entry_reads_as_unknown_instead_of_failing_the_plugin(tmp_path: Path) -> None:
    store = SessionManager.in_memory(tmp_path)
    entry_id = store.append_custom_entry("memo", None)
    raw = store.get_entry(entry_id)
    assert raw is not None
    del raw["customType"]  # as a hand-edited file could have it
    read = SessionEntries(store).get_entry(entry_id)
    assert isinstance(read, UnknownEntry) and read.id == entry_id and read.to_json() is not raw


def test_plugins_read_typed_entries_through_ctx_and_the_tree_hook(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    class Plugin:
        @staticmethod
        @hookimpl
        def pi_agent_event(ctx: Any, event: Any) -> None:
            if event.type == "agent_end":
                seen["branch"] = [(type(e).__name__, getattr(getattr(e, "message", None), "role", None))
                                  for e in ctx.session_manager.get_branch()]

        @staticmethod
        @hookimpl
        def pi_session_tree(ctx: Any, summary_entry: Any) -> None:
            seen["summary"] = summary_entry

    plugins = load_plugins(load_entry_points=False, discover_extensions=False)
    register_module(plugins, Plugin, "typed")
    registry = build_registry(plugins)
    provider = FakeProvider(reply("first"), reply("summary of the branch"))
    parts = session_parts(SessionManager.in_memory(tmp_path), plugins, registry, stream_fn=provider.stream)
    session = AgentSession(SessionConfig(cwd=tmp_path, model=MODEL, tools=[], all_tools={}), parts,
                           plugins=plugins, registry=registry)
    asyncio.run(session.prompt("hello"))
    assert seen["branch"][-2:] == [("MessageEntry", "user"), ("MessageEntry", "assistant")]
    first = session.store.get_entries()[0]["id"]

    async def move() -> None:
        await session.navigate_tree(first, summarize=True)

    asyncio.run(move())
    assert isinstance(seen["summary"], BranchSummaryEntry) and seen["summary"].summary.endswith("summary of the branch")
