"""``pi -p`` builds only the dataclasses it uses (issue 19): pi's classes are declared with
pi_core.records.lazyclass.dataclass, which defers dataclasses' processing to a class's first use, and a
print run uses a minority of them. Counts classes, never timings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_core.testing.fake_server import Reply
from pi_core.testing.runner import pi_runner

# An extension that writes, at exit, pi's module-level dataclasses: processed or still waiting.
EXTENSION = """\
import atexit
import json
import sys
from pathlib import Path

from pi_core.records.lazyclass import is_pending


def _write():
    seen = {{"processed": [], "pending": []}}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("pi_core", "pi_plugins", "pi_builtin_tools"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name and "__dataclass_fields__" in vars(value):
                seen["pending" if is_pending(value) else "processed"].append(f"{{name}}.{{value.__qualname__}}")
    Path({out!r}).write_text(json.dumps(seen))


atexit.register(_write)
"""

# 41 of them when this was written (main before: every one of the ~105 loaded), the rest never used.
MAX_PROCESSED = 50


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-completions"])
def test_a_print_run_processes_only_the_dataclasses_it_uses(tmp_path: Path, api: str) -> None:
    out = tmp_path / "dataclasses.json"
    extension = tmp_path / "count_dataclasses.py"
    extension.write_text(EXTENSION.format(out=str(out)))
    with pi_runner(tmp_path, api) as pi:
        pi.server.add(Reply(text="the answer"))
        done = pi.run("-e", str(extension), "-p", "hi")
        assert done.returncode == 0, done.stderr
        assert done.stdout == "the answer\n"
    seen = json.loads(out.read_text())
    processed, pending = seen["processed"], seen["pending"]
    # What a run needs was built: the session's configuration, the loop, the request.
    assert {"pi_core.session_parts.SessionConfig", "pi_core.loop.LoopConfig", "pi_core.tools.Tool"} <= set(processed)
    # What it does not need was not built (if imported at all): compaction, skills it found none of.
    assert not {"pi_core.compaction.plan.CutPoint", "pi_core.resources.skills.Skill"} & set(processed)
    assert pending, "pi's dataclasses are declared lazily"
    assert len(processed) <= MAX_PROCESSED, processed
