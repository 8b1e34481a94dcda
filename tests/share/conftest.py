"""Share tests: a fake ``gh`` first on PATH (fake_gh.py), its call log, and a small session file."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from share_kit import SECRET, FakeGh

from pi_core.sessions import SessionManager

HERE = Path(__file__).parent


@pytest.fixture
def fake_gh(tmp_path: Path) -> FakeGh:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    script = bin_dir / "gh"
    script.write_text(f"#!{sys.executable}\nimport runpy\nrunpy.run_path({str(HERE / 'fake_gh.py')!r}, run_name='__main__')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "gh-log").mkdir()
    return FakeGh(bin_dir, tmp_path / "gh-log" / "calls.jsonl")


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    """Two prompts, one tool call whose output carries an API key."""
    sm = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    sm.append_message({"role": "user", "content": "Read the config", "timestamp": 1})
    sm.append_message({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "read",
                                                           "arguments": {"path": "config.env"}}],
                       "provider": "p", "model": "m", "usage": {}, "stopReason": "toolUse", "timestamp": 2})
    sm.append_message({"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                       "content": [{"type": "text", "text": f"ANTHROPIC_KEY={SECRET}"}], "isError": False,
                       "timestamp": 3})
    sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "The config sets a key."}],
                       "provider": "p", "model": "m", "usage": {}, "stopReason": "stop", "timestamp": 4})
    assert sm.session_file is not None
    return Path(sm.session_file)
