"""A huge file that starts like an image (issue 17 item 8): refused by its size, never loaded to be decoded."""

from __future__ import annotations

import json
import resource
import subprocess
from pathlib import Path

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import PiRunner

SIZE = 1_500_000_000  # sparse: no disk is used, but reading it all would need 1.5 GB and more to decode


def huge_png(path: Path) -> None:
    with open(path, "wb") as handle:
        handle.write(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 100)
        handle.truncate(SIZE)


def peak_rss_mb(command: list[str], pi: PiRunner) -> tuple[subprocess.CompletedProcess[str], float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run(command, capture_output=True, text=True, cwd=pi.cwd, env=pi.env(), timeout=120,
                          check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux: the largest child so far
    return done, max(before, after) / 1024


def test_read_refuses_a_huge_image_by_its_size(pi: PiRunner) -> None:
    huge_png(pi.cwd / "huge.png")
    pi.server.add(Reply(tool_calls=[("read", {"path": "huge.png"})]), Reply(text="too big"))
    done, peak = peak_rss_mb(pi.command("-p", "look at it"), pi)
    assert done.returncode == 0 and done.stdout == "too big\n", done.stderr
    sent = json.dumps(pi.server.requests[1].body)
    assert "[Image omitted: the file is 1431 MB; pi decodes images up to 50 MB." in sent
    assert peak < 700, f"pi peaked at {peak:.0f} MB reading a {SIZE // 10**6} MB file"


def test_an_at_file_argument_checks_the_size_first(pi: PiRunner) -> None:
    huge_png(pi.cwd / "huge.png")
    pi.server.add(Reply(text="noted"))
    done, peak = peak_rss_mb(pi.command("-p", "@huge.png", "what is this?"), pi)
    assert done.returncode == 0, done.stderr
    sent = json.dumps(pi.server.requests[0].body)
    assert "[Image omitted: the file is 1431 MB" in sent and "inlineData" not in sent
    assert peak < 700
