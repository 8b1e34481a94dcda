"""RPC ``compact`` and ``export_html`` in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.modes.rpc.client import RpcError
from pi_core.testing.fake_provider import reply
from pi_core.types import Usage
from tests.rpc.conftest import Rig


def entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_compact_after_one_exchange(rig: Rig) -> None:
    answer = reply("The answer is 42, as computed.")
    answer.usage = Usage(input=1200, output=300)
    client = rig.start(answer, reply("## Goal\nSummarised."))
    client.prompt_and_wait("What is six times seven? Explain at length.")
    start = client.event_count()
    result = client.compact("focus on numbers")
    assert result["summary"] == "## Goal\nSummarised."
    assert result["tokensBefore"] == 1500 and result["firstKeptEntryId"]
    assert client.wait_for_event("compaction_start", after=start) == {"type": "compaction_start", "reason": "manual"}
    end = client.wait_for_event("compaction_end", after=start)
    assert end["reason"] == "manual" and end["aborted"] is False and end["willRetry"] is False
    assert end["result"]["summary"] == "## Goal\nSummarised."
    assert "focus on numbers" in rig.provider.contexts[1].messages[0].text()
    compactions = [r for r in entries(rig.session_files()[0]) if r["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["summary"] == "## Goal\nSummarised."
    messages = client.get_messages()
    assert messages[0]["role"] == "compactionSummary"
    usage = client.get_session_stats()["contextUsage"]
    assert usage["tokens"] is None and usage["percent"] is None
    assert client.get_state()["isCompacting"] is False


def test_compact_twice_is_already_compacted(rig: Rig) -> None:
    client = rig.start(reply("hello"), reply("summary"))
    client.prompt_and_wait("hi")
    client.compact()
    response = client.send({"id": "c2", "type": "compact"})
    assert response == {"id": "c2", "type": "response", "command": "compact", "success": False,
                        "error": "Already compacted"}
    end = [e for e in client.events if e["type"] == "compaction_end"][-1]
    assert end["errorMessage"] == "Compaction failed: Already compacted"


def test_compact_empty_session_fails(rig: Rig) -> None:
    client = rig.start()
    with pytest.raises(RpcError, match=r"Nothing to compact \(session too small\)"):
        client.compact()


def test_export_html_writes_a_page(rig: Rig) -> None:
    client = rig.start(reply("exported reply"))
    with pytest.raises(RpcError, match="Nothing to export yet - start a conversation first"):
        client.export_html()
    client.prompt_and_wait("export me")
    path = Path(client.export_html())
    assert path.is_file() and path.suffix == ".html" and path.parent == rig.cwd
    assert path.name == f"pi-session-{rig.session_files()[0].stem}.html"
    assert "exported reply" in path.read_text(encoding="utf-8")
    (rig.cwd / "out").mkdir()
    assert Path(client.export_html("out/page.html")) == rig.cwd / "out" / "page.html"
    assert (rig.cwd / "out" / "page.html").is_file()


def test_session_stats_read_a_hand_edited_summary_usage(rig: Rig) -> None:
    """A summary's stored usage counts in the stats; fields that are not numbers count as 0, and a cost
    without a total is the sum of its parts (the file may have been edited by hand)."""
    answer = reply("The answer is 42.")
    answer.usage = Usage(input=100, output=20)
    client = rig.start(answer, reply("## Goal\nSummarised."))
    client.prompt_and_wait("What is six times seven?")
    client.compact()
    path = rig.session_files()[0]
    records = entries(path)
    for record in records:
        if record["type"] == "compaction":
            record["usage"] = {"input": "lots", "output": 7, "cacheRead": True, "cacheWrite": None,
                               "cost": {"input": 0.5, "output": 0.25}}
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    client.new_session()
    client.switch_session(str(path))
    stats = client.get_session_stats()
    assert stats["tokens"] == {"input": 100, "output": 27, "cacheRead": 0, "cacheWrite": 0, "total": 127}
    assert stats["cost"] == 0.75
