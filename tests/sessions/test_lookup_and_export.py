"""--session/--fork lookup, session dir resolution, and the HTML export (checked in headless Chromium if present)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from session_builders import FIXTURES, assistant, tool_call, tool_result, user

from pi_core.sessions import SessionManager, SessionNotFound, find_session, resolve_session_dir
from pi_core.export.html import export_html
from pi_core.sessions.store import default_session_dir


def make_session(cwd: str, session_dir: Path | None = None) -> SessionManager:
    sm = SessionManager.create(cwd, session_dir)
    sm.append_message(user("hello"))
    sm.append_message(assistant("hi"))
    return sm


def test_find_session_by_path_local_and_global_prefix(tmp_path: Path) -> None:
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    local = make_session(here)
    remote = make_session(there)
    found = find_session(local.session_id[:12], here)
    assert found.path == local.session_file and not found.other_project
    elsewhere = find_session(remote.session_id, here)
    assert elsewhere.path == remote.session_file and elsewhere.other_project and elsewhere.cwd == there
    by_path = find_session(str(tmp_path / "new.jsonl"), here)
    assert by_path.path == (tmp_path / "new.jsonl").resolve()
    with pytest.raises(SessionNotFound, match="No session found matching 'zzzz'"):
        find_session("zzzz", here)


def test_session_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = str(tmp_path / "p")
    assert resolve_session_dir(cwd) == default_session_dir(cwd)
    assert resolve_session_dir(cwd, setting="~/from-setting") == Path("~/from-setting").expanduser().resolve()
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "env"))
    assert resolve_session_dir(cwd, setting="/x") == tmp_path / "env"
    assert resolve_session_dir(cwd, cli_dir=str(tmp_path / "cli"), setting="/x") == tmp_path / "cli"
    sm = make_session(cwd, resolve_session_dir(cwd, cli_dir=str(tmp_path / "cli")))
    assert sm.session_file.parent == tmp_path / "cli"  # flat: no per-cwd subfolder


def build_export_session(tmp_path: Path) -> Path:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    sm.append_session_info("Export <test>")
    q = sm.append_message(user("What is <script>alert(1)</script> & co?"))
    sm.append_message({**assistant("Let me look", tool_calls=[tool_call("c1", "read", path="a<b>.py")]),
                       "content": [{"type": "thinking", "thinking": "secret plan"},
                                   {"type": "text", "text": "Let me look"},
                                   tool_call("c1", "read", path="a<b>.py")]})
    sm.append_message(tool_result("c1", "read", "file body </div> here"))
    sm.append_message(assistant("Main answer"))
    sm.branch(q)
    sm.append_message(assistant("Alternative answer"))
    return sm.session_file


def test_export_html_escapes_and_shows_everything(tmp_path: Path) -> None:
    out = export_html(build_export_session(tmp_path), tmp_path / "out.html")
    page = out.read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co?" in page
    assert "file body &lt;/div&gt; here" in page and "a&lt;b&gt;.py" in page
    assert '<details class="thinking"><summary>Thinking</summary>' in page and "secret plan" in page
    assert "Alternative answer" in page and "Main answer" in page  # both branches
    assert "1 branch point(s)" in page and "<title>Export &lt;test&gt;</title>" in page


def test_export_default_path_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "large.jsonl"
    shutil.copy(FIXTURES / "large-session.jsonl", source)
    out = export_html(source)
    assert out == tmp_path / "pi-session-large.html" and out.stat().st_size > 100_000
    assert (FIXTURES / "large-session.jsonl").read_bytes() == source.read_bytes()  # export never migrates the file
    with pytest.raises(Exception, match="File not found"):
        export_html(tmp_path / "missing.jsonl")


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless check needs /usr/bin/chromium (installed in CI)")
def test_export_renders_in_headless_chromium(tmp_path: Path) -> None:
    out = export_html(build_export_session(tmp_path), tmp_path / "page.html")
    dom = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", out.as_uri()],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    assert "<h1>Export &lt;test&gt;</h1>" in dom
    assert re.search(r"What is &lt;script&gt;alert\(1\)&lt;/script&gt; &amp;(amp;)? co\?", dom)
    assert "Main answer" in dom and "Alternative answer" in dom and "<script" not in dom


def test_export_html_tags_are_balanced(tmp_path: Path) -> None:
    from html.parser import HTMLParser

    class Balance(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []
            self.errors: list[str] = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            if tag not in ("meta", "img", "br"):
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            if not self.stack or self.stack.pop() != tag:
                self.errors.append(tag)

    for source in (build_export_session(tmp_path), FIXTURES / "before-compaction.jsonl"):
        parser = Balance()
        parser.feed(export_html(source, tmp_path / "check.html").read_text())
        assert parser.errors == [] and parser.stack == []
