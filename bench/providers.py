"""LLM-layer costs, printed as figures (run by hand: ``python bench/providers.py``).

- streaming a long ``write`` tool call (50 KB of arguments in 20-character deltas) through the
  anthropic-messages plugin and the fake server: wall time and per-event overhead;
- the partial-JSON work alone for the same deltas (jiter on the whole text so far, as MessageBuilder does);
- time to first event for a short text reply (SDK client already warm).
"""

from __future__ import annotations

import asyncio
import json
import time

from pi_plugins.anthropic_messages import PROVIDER as ANTHROPIC

from pi_core.llm.tool_json import parse_partial_json
from pi_core.providers import LazyProvider
from pi_core.testing.fake_server import FakeModelServer, Reply, ToolUse
from pi_core.testing.streams import anthropic_model, options, user_context

CONTENT = ("def handler(event):\n    return {\"ok\": True, \"value\": event * 2}\n" * 900)[:50_000]


async def stream_once(provider: LazyProvider, server: FakeModelServer) -> tuple[int, float, float]:
    start = time.perf_counter()
    first: float | None = None
    count = 0
    async for _ in provider.stream(anthropic_model(server), user_context(), options()):
        first = first or time.perf_counter() - start
        count += 1
    return count, first or 0.0, time.perf_counter() - start


def main() -> None:
    provider = ANTHROPIC
    with FakeModelServer() as server:
        server.add(Reply(text="warm-up"), Reply(text="hi"),
                   Reply(tool_calls=[ToolUse("write", {"path": "big.py", "content": CONTENT})], chunk_size=20))

        async def run() -> None:
            await stream_once(provider, server)
            _, first, total = await stream_once(provider, server)
            print(f"short reply: first event after {first * 1000:.1f} ms, done after {total * 1000:.1f} ms")
            count, _, total = await stream_once(provider, server)
            print(f"50 KB tool call: {count} events in {total:.2f} s ({total / count * 1e6:.0f} us/event)")

        asyncio.run(run())
    text = json.dumps({"path": "big.py", "content": CONTENT})
    deltas = [text[i:i + 20] for i in range(0, len(text), 20)]
    start = time.perf_counter()
    so_far = ""
    for delta in deltas:
        so_far += delta
        parse_partial_json(so_far)
    total = time.perf_counter() - start
    print(f"partial JSON for {len(deltas)} deltas: {total:.2f} s ({total / len(deltas) * 1e6:.0f} us/delta)")


if __name__ == "__main__":
    main()
