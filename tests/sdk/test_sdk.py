"""pi_core.sdk driven against the fake model server: runs, events, refusals, custom tools, several sessions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pi_core.sdk import SdkError, create_session, create_session_sync
from pi_core.testing.fake_server import FakeModelServer, Reply
from pi_core.tools import Tool, ToolContext


def test_prompt_events_and_state(server: FakeModelServer) -> None:
    asyncio.run(_test_prompt_events_and_state(server))


async def _test_prompt_events_and_state(server: FakeModelServer) -> None:
    server.add(Reply(text="Hello from the fake model."))
    session = await create_session(model="fake/fake-model")
    seen: list[str] = []

    async def collect() -> None:
        async for event in session.events():
            seen.append(event.to_json()["type"])
            if event.type == "agent_settled":
                return

    collector = asyncio.create_task(collect())
    await asyncio.sleep(0)
    assert await session.prompt("hi") == "started"
    await asyncio.wait_for(collector, 10)
    assert seen[0] == "agent_start" and "message_end" in seen and seen[-2:] == ["agent_end", "agent_settled"]
    state = session.state
    assert state.model == "fake/fake-model" and state.session_file is None and not state.is_streaming
    assert [m.role for m in state.messages] == ["user", "assistant"]
    assert session.last_text() == "Hello from the fake model."
    await session.dispose()
    with pytest.raises(SdkError, match="disposed"):
        await session.prompt("again")


def test_prompt_during_a_run_is_refused_and_steer_is_delivered(server: FakeModelServer) -> None:
    asyncio.run(_test_prompt_during_a_run_is_refused_and_steer_is_delivered(server))


async def _test_prompt_during_a_run_is_refused_and_steer_is_delivered(server: FakeModelServer) -> None:
    release = asyncio.Event()

    async def slow(args: dict[str, object], ctx: object) -> str:
        await release.wait()
        return "slow done"

    tool = Tool(name="slow", description="Waits", parameters={"type": "object", "properties": {}}, execute=slow)
    server.add(Reply(tool_calls=[("slow", {})]), Reply(text="Saw the steer."))
    session = await create_session(model="fake/fake-model", tools=["read"], custom_tools=[tool])
    assert "slow" in session.state.tools
    run = asyncio.create_task(session.prompt("go"))
    while not session.state.is_streaming:
        await asyncio.sleep(0.01)
    with pytest.raises(SdkError, match="A run is in progress"):
        await session.prompt("second")
    session.steer("change course")
    release.set()
    await asyncio.wait_for(run, 10)
    texts = [m.content if isinstance(m.content, str) else m.content[0].text
             for m in session.state.messages if m.role == "user"]
    assert texts == ["go", "change course"]
    assert session.last_text() == "Saw the steer."
    await session.dispose()


def test_two_sessions_on_disk_in_one_process(server: FakeModelServer, tmp_path: Path) -> None:
    asyncio.run(_test_two_sessions_on_disk_in_one_process(server, tmp_path))


async def _test_two_sessions_on_disk_in_one_process(server: FakeModelServer, tmp_path: Path) -> None:
    server.add(Reply(text="first"), Reply(text="second"))
    one = await create_session(model="fake/fake-model", storage="disk", session_dir=tmp_path / "s1")
    two = await create_session(model="fake/fake-model", storage="disk", session_dir=tmp_path / "s2")
    await one.prompt("a")
    await two.prompt("b")
    assert one.last_text() == "first" and two.last_text() == "second"
    file_one = one.state.session_file
    assert file_one is not None and file_one.parent == tmp_path / "s1" and '"first"' in file_one.read_text()
    assert await two.new_session() and two.state.messages == ()
    assert await two.switch_session(file_one) and two.last_text() == "first"
    await one.dispose()
    await two.dispose()


def test_sync_wrapper(server: FakeModelServer) -> None:
    server.add(Reply(text="sync reply"))
    with create_session_sync(model="fake/fake-model") as session:
        kinds = [event.type for event in session.prompt_events("hi")]
        assert kinds[-1] == "agent_settled" and session.last_text() == "sync reply"


def test_abort_follow_up_fork_and_compact(server: FakeModelServer, tmp_path: Path) -> None:
    asyncio.run(_abort_follow_up_fork_and_compact(server, tmp_path))


async def _abort_follow_up_fork_and_compact(server: FakeModelServer, tmp_path: Path) -> None:
    started = asyncio.Event()

    async def hang(args: dict[str, object], ctx: ToolContext) -> str:
        started.set()
        await asyncio.wait_for(ctx.signal.wait(), 60)  # a well-behaved tool ends on abort
        return "aborted"

    tool = Tool(name="hang", description="Hangs", parameters={"type": "object", "properties": {}}, execute=hang)
    server.add(Reply(tool_calls=[("hang", {})]))
    session = await create_session(model="fake/fake-model", custom_tools=[tool], storage="disk",
                                   session_dir=tmp_path / "s")
    run = asyncio.create_task(session.prompt("hang please"))
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.wait_for(session.abort(), 10)
    await asyncio.wait_for(run, 10)
    assert not session.is_running

    server.add(Reply(text="one"), Reply(text="two"))
    session.follow_up("and then this")  # idle: kept for the next run, delivered when it would stop
    await session.prompt("first question")
    users = [m for m in session.state.messages if m.role == "user"]
    assert len(users) >= 2 and session.last_text() in ("one", "two")

    points = session.fork_points()
    assert points[0][1] == "hang please"
    before = session.state.session_file
    assert await session.fork(points[-1][0]) == points[-1][1]
    assert session.state.session_file != before

    server.add(Reply(text="A summary of the talk."))
    result = await session.compact("keep it short")
    assert result is not None
    await session.dispose()


def test_prompt_with_an_image_file_reaches_the_model(server: FakeModelServer, tmp_path: Path) -> None:
    import json
    import os

    from PIL import Image

    from pi_core.sdk import image_from_file

    models = Path(os.environ["PI_CODING_AGENT_DIR"]) / "models.json"
    config = json.loads(models.read_text())
    config["providers"]["fake"]["models"][0]["input"] = ["text", "image"]
    models.write_text(json.dumps(config))
    Image.new("RGB", (3, 2), (200, 10, 10)).save(tmp_path / "red.png")
    image = image_from_file(tmp_path / "red.png")
    assert image.mime_type == "image/png"
    server.add(Reply(text="A red square."))
    with create_session_sync(model="fake/fake-model") as session:
        session.prompt("What is this?", [image])
        assert session.last_text() == "A red square."
    parts = server.requests[0].body["contents"][-1]["parts"]
    assert {"inlineData": {"mimeType": "image/png", "data": image.data}} in parts
    assert any(part.get("text") == "What is this?" for part in parts)


@pytest.mark.parametrize("make", ["missing", "fifo", "text"])
def test_image_from_file_names_what_is_wrong(tmp_path: Path, make: str) -> None:
    import os

    from pi_core.sdk import image_from_file

    path = tmp_path / "thing"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "text":
        path.write_text("not an image")
    expected = {"missing": "not a file", "fifo": "not a file", "text": "is not a PNG, JPEG, GIF or WebP image"}
    with pytest.raises(SdkError, match=expected[make]):
        image_from_file(path)
