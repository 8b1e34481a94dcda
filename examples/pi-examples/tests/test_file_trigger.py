"""file_trigger: text written to the trigger file starts a turn as "External trigger: ..." and is cleared."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pi_core.testing.fake_script import Reply


def test_writing_the_trigger_file_starts_a_turn(example, tmp_path: Path) -> None:
    trigger = tmp_path / "trigger.txt"
    example.server.add(Reply(text="running them"))
    client = example.rpc("file_trigger", "--no-session", env={"PI_FILE_TRIGGER": str(trigger)})
    notice = client.wait_for_event(lambda e: e.get("method") == "notify")
    assert notice["message"] == f"Watching {trigger}"
    time.sleep(0.7)
    assert example.server.requests == [], "no file, no turn"
    trigger.write_text("Run the tests\n")
    client.wait_for_event("agent_start")
    client.wait_for_event("agent_end")
    assert trigger.read_text() == ""
    sent = json.dumps(example.server.requests[0].body["messages"])
    assert "External trigger: Run the tests" in sent
    custom = [m for m in client.get_messages() if m.get("role") == "custom"]
    assert custom and custom[0]["customType"] == "file-trigger" and custom[0]["display"] is True
    time.sleep(0.7)
    assert len(example.server.requests) == 1, "an emptied file triggers nothing more"
