"""``pi --share SESSION [--yes]`` against a fake ``gh`` on PATH that records its arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_gh import GIST_ID
from share_kit import SECRET, FakeGh

VIEWER = f"https://pi.dev/session/#{GIST_ID}"


def pi(tmp_path: Path, *args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PI_SHARE_VIEWER_URL"}
    full = {**base, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), **env}
    return subprocess.run([sys.executable, "-c", "from pi_core.app.cli import cli; cli()", *args], input=stdin,
                          capture_output=True, text=True, cwd=tmp_path, env=full, timeout=60, check=False)


def test_yes_uploads_a_private_gist_and_prints_the_viewer_link(tmp_path: Path, fake_gh: FakeGh,
                                                               session_file: Path) -> None:
    result = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env())
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Share URL: {VIEWER}\nGist: https://gist.github.com/tester/{GIST_ID}\n"
    calls = fake_gh.calls()
    assert calls[0] == ["auth", "status"]
    assert calls[1][:3] == ["gist", "create", "--public=false"] and calls[1][3].endswith("session.html")
    assert not Path(calls[1][3]).exists()  # the temporary page is gone
    page = fake_gh.uploaded.read_text()
    assert "The config sets a key." in page and "<html" in page
    assert SECRET not in page and "[REDACTED]" in page


def test_viewer_base_follows_pi_share_viewer_url(tmp_path: Path, fake_gh: FakeGh, session_file: Path) -> None:
    result = pi(tmp_path, "--share", str(session_file), "--yes",
                env={**fake_gh.env(), "PI_SHARE_VIEWER_URL": "https://viewer.example/s"})
    assert result.stdout.splitlines()[0] == f"Share URL: https://viewer.example/s#{GIST_ID}"


def test_confirmation_names_the_contents_and_no_means_nothing_is_uploaded(tmp_path: Path, fake_gh: FakeGh,
                                                                          session_file: Path) -> None:
    result = pi(tmp_path, "--share", str(session_file), env=fake_gh.env(), stdin="n\n")
    assert result.returncode == 1 and result.stdout == ""
    assert "1 user, 2 assistant, 1 tool results messages, 1 tool calls" in result.stderr
    assert "file contents" in result.stderr and "Share this session? [y/N]" in result.stderr
    assert "Error: Not shared (pass --yes to share without asking)" in result.stderr
    assert [call[0] for call in fake_gh.calls()] == ["auth"]  # checked, never uploaded
    # a script without --yes (end of input) is a no as well
    assert pi(tmp_path, "--share", str(session_file), env=fake_gh.env()).returncode == 1
    assert not fake_gh.uploaded.exists()


def test_yes_at_the_prompt_shares(tmp_path: Path, fake_gh: FakeGh, session_file: Path) -> None:
    result = pi(tmp_path, "--share", str(session_file), env=fake_gh.env(), stdin="y\n")
    assert result.returncode == 0 and result.stdout.startswith(f"Share URL: {VIEWER}\n")


def test_gh_signed_out_missing_or_failing_is_named(tmp_path: Path, fake_gh: FakeGh, session_file: Path) -> None:
    signed_out = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env("signed-out"))
    assert signed_out.returncode == 1
    assert signed_out.stderr.strip() == "Error: GitHub CLI is not logged in. Run 'gh auth login' first."
    missing = pi(tmp_path, "--share", str(session_file), "--yes",
                 env={"PATH": str(Path(sys.executable).parent)})
    assert missing.stderr.strip() == "Error: GitHub CLI (gh) is not installed. Install it from https://cli.github.com/"
    broken = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env("broken"))
    assert broken.stderr.strip() == "Error: Failed to create gist: HTTP 422: Validation Failed"
    assert "Traceback" not in signed_out.stderr + missing.stderr + broken.stderr


def test_missing_session_file(tmp_path: Path, fake_gh: FakeGh) -> None:
    result = pi(tmp_path, "--share", "nope.jsonl", "--yes", env=fake_gh.env())
    assert result.returncode == 1 and result.stderr.strip() == f"Error: File not found: {tmp_path / 'nope.jsonl'}"
    assert fake_gh.calls() == []


def test_radius_destinations_are_refused_by_name(tmp_path: Path, fake_gh: FakeGh, session_file: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    (agent / "settings.json").write_text(json.dumps({"sessionShareDestination": "radius"}))
    radius = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env())
    assert radius.returncode == 1 and "Sharing to Radius is not supported by pi" in radius.stderr
    assert fake_gh.calls() == []
    (agent / "settings.json").write_text(json.dumps({"sessionShareDestination": "auto"}))
    (agent / "auth.json").write_text(json.dumps({"radius": {"type": "oauth", "access": "a", "refresh": "r",
                                                            "expires": 9999999999999}}))
    (agent / "auth.json").chmod(0o600)
    auto = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env())
    assert auto.returncode == 1 and "signed in to Radius" in auto.stderr and "not supported" in auto.stderr
    (agent / "settings.json").write_text(json.dumps({"sessionShareDestination": "gist"}))
    gist = pi(tmp_path, "--share", str(session_file), "--yes", env=fake_gh.env())
    assert gist.returncode == 0 and gist.stdout.startswith(f"Share URL: {VIEWER}")
