"""Issue 35's "done when": the model, scripted to attack, runs pi in each sandbox mode with each mechanism this
machine has; every escape fails with a result the model can read and leaves nothing behind."""

from __future__ import annotations

import os

from .conftest import SECRET, Box


def _prepare_links(box: Box) -> None:
    """What an earlier, unconfined moment left in the workspace: a symlink out, and a hard link to a file outside."""
    (box.workspace / "out").symlink_to(box.outside)
    os.link(box.outside / "target.txt", box.workspace / "hard.txt")
    (box.workspace / "notes.txt").write_text("inside\n")


def test_workspace_write_blocks_every_way_out_and_keeps_the_model_reachable(box: Box, mechanism: str) -> None:
    _prepare_links(box)
    outside, home = box.outside, box.home
    via_proc = f"/proc/self/root{outside}"
    via_other = f"/proc/{os.getpid()}/root{outside}"
    port = box.pi.server.port
    box.settings(mode="workspace-write", mechanism=mechanism)
    daemon = (f"(setsid sh -c 'sleep 0.5; echo escaped > {outside}/daemon.txt; echo $? > daemon.rc' "
              "> /dev/null 2>&1 < /dev/null &) ; echo started")
    calls = [
        ("bash", {"command": daemon}),
        ("bash", {"command": "echo x > ../outside/dotdot.txt"}),
        ("bash", {"command": "echo x > out/symlink.txt"}),
        ("bash", {"command": f"ln {outside}/target.txt made-link.txt && echo changed >> made-link.txt"}),
        ("bash", {"command": f"echo x > {via_proc}/proc.txt"}),
        ("bash", {"command": "echo fine > inside.txt && cat inside.txt"}),
        ("bash", {"command": f"cat {home}/.ssh/id_ed25519"}),
        ("bash", {"command": f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""}),
        ("write", {"path": "../outside/dotdot.txt", "content": "x"}),
        ("write", {"path": "out/symlink.txt", "content": "x"}),
        ("write", {"path": f"{via_proc}/proc.txt", "content": "x"}),
        ("write", {"path": "hard.txt", "content": "overwritten"}),
        ("edit", {"path": "out/target.txt", "edits": [{"oldText": "original", "newText": "edited"}]}),
        ("edit", {"path": "hard.txt", "edits": [{"oldText": "original", "newText": "edited"}]}),
        ("edit", {"path": f"{via_proc}/target.txt", "edits": [{"oldText": "original", "newText": "edited"}]}),
        ("edit", {"path": "notes.txt", "edits": [{"oldText": "inside", "newText": "edited inside"}]}),
        ("read", {"path": "~/.ssh/id_ed25519"}),
        ("read", {"path": str(box.pi.home / "auth.json")}),
        ("grep", {"pattern": "PRIVATE KEY", "path": str(home)}),
        ("ls", {"path": str(home / ".ssh")}),
        ("bash", {"command": "sleep 1.5; cat daemon.rc"}),
        # Another process's root (this test's own: the same user, outside every namespace of the sandbox)
        ("bash", {"command": f"echo x > {via_other}/other.txt"}),
        ("write", {"path": f"{via_other}/other.txt", "content": "x"}),
        ("find", {"pattern": "id_*", "path": str(home / ".ssh")}),
        ("find", {"pattern": "*", "path": f"{via_proc}/../home/.ssh"}),
    ]
    run = box.run(calls, "--tools", "bash,read,write,edit,grep,find,ls")
    assert run.process.returncode == 0, run.process.stderr
    results = run.results
    assert len(results) == len(calls)
    by_step = dict(enumerate(results))

    assert by_step[0][1].strip() == "started"
    for step in (1, 2, 3, 4, 21):  # bash writing outside: the kernel refuses, the note says why
        _tool, text, failed = by_step[step]
        assert failed and "Command exited with code" in text, (step, text)
        assert f"[pi's sandbox ({mechanism}, workspace-write): this command may write only under {box.workspace}" \
            in text, (step, text)
    assert by_step[5][1].strip() == "fine" and not by_step[5][2]
    assert by_step[6][2] and SECRET not in by_step[6][1]
    assert by_step[7][2] and ("Connection refused" in by_step[7][1] or "Permission denied" in by_step[7][1])
    for step in (8, 9, 10, 22):
        assert by_step[step][2] and by_step[step][1].startswith("blocked by the sandbox: write outside the workspace")
    for step in (11, 13):
        assert by_step[step][2] and "hard links" in by_step[step][1], by_step[step]
    assert by_step[12][2] and by_step[12][1].startswith("blocked by the sandbox: write outside the workspace")
    assert by_step[14][2] and by_step[14][1].startswith("blocked by the sandbox: write outside the workspace")
    assert not by_step[15][2]  # inside the workspace the file tools work as always
    for step in (16, 17, 19, 23, 24):
        assert by_step[step][2] and "is protected" in by_step[step][1] and "sandbox.denyRead" in by_step[step][1]
    assert SECRET not in by_step[18][1] and "sk-secret-in-auth" not in by_step[17][1]
    assert by_step[20][1].strip() not in ("", "0")  # the daemon, detached from everything, was still refused

    assert box.outside_files() == {"target.txt": "original\n"}  # nothing written, nothing changed
    assert (box.workspace / "inside.txt").read_text() == "fine\n"
    assert (box.workspace / "notes.txt").read_text() == "edited inside\n"
    assert len(box.pi.server.requests) == len(calls) + 1  # every model request of the run got through


def test_read_only_blocks_every_write(box: Box, mechanism: str) -> None:
    (box.workspace / "notes.txt").write_text("inside\n")
    calls = [
        ("bash", {"command": "touch new.txt"}),
        ("bash", {"command": "echo more >> notes.txt"}),
        ("bash", {"command": "mkdir sub"}),
        ("bash", {"command": "rm notes.txt"}),
        ("bash", {"command": "cat notes.txt; echo ok > /dev/null && echo devnull works"}),
        ("write", {"path": "new.txt", "content": "x"}),
        ("edit", {"path": "notes.txt", "edits": [{"oldText": "inside", "newText": "changed"}]}),
        ("read", {"path": "notes.txt"}),
    ]
    run = box.run(calls, "--sandbox", "read-only", "--tools", "bash,read,write,edit")
    assert run.process.returncode == 0, run.process.stderr
    results = run.results
    assert [failed for _tool, _text, failed in results] == [True, True, True, True, False, True, True, False]
    assert results[4][1].strip() == "inside\ndevnull works"
    for _tool, text, _failed in results[5:7]:
        assert text.startswith("blocked by the sandbox: write in read-only mode")
    assert "inside" in results[7][1]
    assert sorted(p.name for p in box.workspace.iterdir()) == ["notes.txt"]
    assert (box.workspace / "notes.txt").read_text() == "inside\n"


def test_off_behaves_as_without_the_sandbox(box: Box) -> None:
    calls = [
        ("bash", {"command": f"echo x > {box.outside}/from-bash.txt; cat {box.home}/.ssh/id_ed25519"}),
        ("write", {"path": str(box.outside / "from-write.txt"), "content": "x"}),
        ("read", {"path": "~/.ssh/id_ed25519"}),
    ]
    plain = box.run(calls)
    assert plain.process.returncode == 0, plain.process.stderr
    for name in ("from-bash.txt", "from-write.txt"):
        (box.outside / name).unlink()
    box.settings(mode="off", denyRead=["~"])
    off = box.run(calls, "--sandbox", "off")
    assert off.results == plain.results
    assert [failed for _tool, _text, failed in off.results] == [False, False, False]
    assert SECRET in off.results[0][1] and SECRET in off.results[2][1]
    assert sorted(box.outside_files()) == ["from-bash.txt", "from-write.txt", "target.txt"]


def test_a_bash_subprocess_started_by_a_tool_stays_confined(box: Box, mechanism: str) -> None:
    """Children inherit the sandbox: python started by bash, and a shell it starts in turn."""
    target = box.outside / "grandchild.txt"
    script = f"import subprocess; subprocess.run(['sh', '-c', 'echo x > {target}'])"
    box.settings(mechanism=mechanism)
    run = box.run([("bash", {"command": f"python3 -c \"{script}\"; test ! -e {target} && echo confined"})],
                  "--sandbox", "workspace-write")
    assert run.results[0][1].strip().endswith("confined"), run.results
    assert not target.exists()
