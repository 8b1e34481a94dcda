"""``export_html`` on files: escaping, balanced markup, old session versions, errors and the output path."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pi_core.export.html import export_html
from pi_core.sessions import SessionManager

HERE = Path(__file__).parent
VOID = {"meta", "img", "br", "hr", "input"}
OLD_FILE = HERE.parent / "sessions" / "fixtures" / "before-compaction.jsonl"  # a version-1 file written by Pi


def old_version(tmp_path: Path) -> Path:
    """The first 80 lines of Pi's version-1 file: no entry ids yet, parents implied by order."""
    path = tmp_path / "old.jsonl"
    path.write_text("".join(OLD_FILE.read_text().splitlines(keepends=True)[:80]))
    return path


class Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.errors.append(f"<{tag} /> is not a void element")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def small_session(tmp_path: Path) -> Path:
    sm = SessionManager.create(str(tmp_path), tmp_path / "s")
    sm.append_session_info("Export <test>")
    first = sm.append_message({"role": "user", "content": "What is <script>alert(1)</script> & co?", "timestamp": 1})
    sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "Main answer"}], "provider": "p",
                       "model": "m", "usage": {}, "stopReason": "stop", "timestamp": 2})
    sm.branch(first)
    sm.append_message({"role": "assistant", "content": [{"type": "text", "text": "Alternative answer"}], "provider": "p",
                       "model": "m", "usage": {}, "stopReason": "stop", "timestamp": 3})
    assert sm.session_file is not None
    return sm.session_file


def test_text_is_escaped_and_both_branches_are_in_the_page(tmp_path: Path) -> None:
    page = export_html(small_session(tmp_path), tmp_path / "out.html").read_text()
    assert "<script>alert" not in page and "What is &lt;script&gt;alert(1)&lt;/script&gt; &amp; co?" in page
    assert "Main answer" in page and "Alternative answer" in page
    assert "<title>Export &lt;test&gt;</title>" in page


@pytest.mark.parametrize("source", ["small", "old-version", "pi-1.6.0"])
def test_markup_is_balanced(tmp_path: Path, source: str) -> None:
    path = {"small": lambda: small_session(tmp_path), "old-version": lambda: old_version(tmp_path),
            "pi-1.6.0": lambda: HERE / "fixtures" / "branched-with-summary.jsonl"}[source]()
    parser = Balance()
    parser.feed(export_html(path, tmp_path / "check.html").read_text())
    assert parser.errors == [] and parser.stack == []


def test_old_version_file_is_not_migrated_on_disk(tmp_path: Path) -> None:
    source = old_version(tmp_path)
    before = source.read_bytes()
    page = export_html(source, tmp_path / "old.html").read_text()
    assert source.read_bytes() == before
    assert page.count('class="tree-node"') == len(before.decode().splitlines()) - 1  # every entry got an id


def test_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="File not found"):
        export_html(tmp_path / "missing.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(Exception, match="Not a session file"):
        export_html(tmp_path / "empty.jsonl")


def test_cli_export_writes_the_viewer(tmp_path: Path) -> None:
    source = HERE / "fixtures" / "branched-with-summary.jsonl"
    done = subprocess.run([str(Path(sys.executable).parent / "pi"), "--export", str(source), str(tmp_path / "o.html")],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Exported to: {tmp_path / 'o.html'}"
    page = (tmp_path / "o.html").read_text()
    assert 'id="tree-container"' in page and "TURN3 on the branch" in page
    assert json.loads(source.read_text().splitlines()[0])["id"] in page


def run_export(tmp_path: Path, *extra: str) -> str:
    source = HERE / "fixtures" / "branched-with-summary.jsonl"
    done = subprocess.run([str(Path(sys.executable).parent / "pi"), "--export", str(source), str(tmp_path / "t.html"),
                           *extra], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    return (tmp_path / "t.html").read_text()


def test_export_uses_the_theme_setting_and_custom_theme_files(tmp_path: Path, agent_dir: Path) -> None:
    from pi_core.resources.themes import REQUIRED_COLORS, builtin_themes

    agent_dir.mkdir(parents=True)
    assert f"--exportPageBg:{builtin_themes()['dark'].export['pageBg']}" in run_export(tmp_path)
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "light"}))
    assert f"--exportPageBg:{builtin_themes()['light'].export['pageBg']}" in run_export(tmp_path)
    colors = {role: "#123456" for role in REQUIRED_COLORS} | {"accent": "#ff0000"}
    (tmp_path / "mine.json").write_text(json.dumps({"name": "mine", "colors": colors, "export": {"pageBg": "#010203"}}))
    (agent_dir / "settings.json").write_text(json.dumps({"theme": "mine"}))
    page = run_export(tmp_path, "--theme", str(tmp_path / "mine.json"))
    assert "--accent:#ff0000" in page and "--exportPageBg:#010203" in page
