"""--session/--fork lookup, session dir resolution, and the export's default path (the viewer: tests/export)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from session_builders import FIXTURES, assistant, user

from pi_core.export.html import export_html
from pi_core.sessions import (
    SessionManager,
    SessionNotFound,
    find_session,
    resolve_session_dir,
)
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


def test_export_default_path_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "large.jsonl"
    shutil.copy(FIXTURES / "large-session.jsonl", source)
    out = export_html(source)
    assert out == tmp_path / "pi-session-large.html" and out.stat().st_size > 100_000
    assert (FIXTURES / "large-session.jsonl").read_bytes() == source.read_bytes()  # export never migrates the file
    with pytest.raises(Exception, match="File not found"):
        export_html(tmp_path / "missing.jsonl")
