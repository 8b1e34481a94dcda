"""The app driven end to end in-process: keys in through a pipe, scrollback out through rich."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pi_core.testing.fake_provider import FakeProvider, reply
from tests.interactive.harness import Harness, make_session


def test_prompt_streams_answer_into_scrollback(tmp_path: Path, pipe: Any) -> None:
    async def main() -> None:
        h = Harness(make_session(FakeProvider(reply("Hello **there**")), tmp_path), pipe)
        await h.start()
        h.send("hi\r")
        await h.wait_for(lambda: "Hello there" in h.screen())
        assert await h.quit() == 0
        assert "hi" in h.screen()

    asyncio.run(main())
