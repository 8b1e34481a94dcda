"""gondolin's pieces through their Python API, against the fake bridge (no pi process): the path mapping, the
bridge client's protocol handling, grep over the VM and stopping a command."""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pi_examples.gondolin import bridge as bridge_module
from pi_examples.gondolin.bridge import BridgeClient, GondolinError
from pi_examples.gondolin.grep import vm_grep
from pi_examples.gondolin.ops import VmShell, to_guest_path

from pi_core.signals import AbortSignal
from pi_core.testing.fakebin import FakeBin
from pi_core.toolkit.procs import ExecOptions, ExecTimedOut

FAKE_BRIDGE = (Path(__file__).parent / "fake_gondolin_bridge.py").read_text()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "a.py").write_text("import os\nPRINT(os.sep)\nprint('a.b')\n")
    (root / "src" / "deep" / "b.txt").write_text("print\n" + "x" * 600 + " print\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("print in git\n")
    return root


def connect(tmp_path: Path, project: Path, mode: str = "") -> BridgeClient:
    bins = FakeBin(tmp_path / "bin")
    program = bins.add("gondolin-bridge", FAKE_BRIDGE)
    if mode:
        program.write_text(program.read_text().replace('os.environ.get("FAKE_GONDOLIN_MODE", "")', repr(mode)))
    client = BridgeClient([str(program)], str(project))
    client.start("/workspace", "pi project")
    return client


@pytest.fixture
def vm(tmp_path: Path, project: Path) -> Iterator[BridgeClient]:
    client = connect(tmp_path, project)
    yield client
    client.close()


def test_host_paths_map_into_the_workspace() -> None:
    cwd = "/home/me/proj"
    assert to_guest_path(cwd, "") == "/workspace"
    assert to_guest_path(cwd, "@src/a.py") == "/workspace/src/a.py"
    assert to_guest_path(cwd, "  ./src/../b ") == "/workspace/b"
    assert to_guest_path(cwd, "/home/me/proj") == "/workspace"
    assert to_guest_path(cwd, "/home/me/proj/x/y.txt") == "/workspace/x/y.txt"
    assert to_guest_path(cwd, "/home/me/project2/z") == "/home/me/project2/z", "a sibling is not inside"
    assert to_guest_path(cwd, "/workspace/k") == "/workspace/k"
    assert to_guest_path(cwd, "/etc//hosts") == "/etc/hosts"
    assert to_guest_path(cwd, "../outside") == "/outside"


def test_files_and_commands_go_through_the_bridge(vm: BridgeClient, project: Path) -> None:
    assert vm.id == "f00dfeed-0000-4000-8000-gondolinfake"
    vm.mkdir("/workspace/new/dir")
    vm.write_file("/workspace/new/dir/bin.dat", b"\x00\xff\n")
    assert (project / "new" / "dir" / "bin.dat").read_bytes() == b"\x00\xff\n"
    assert vm.read_file("/workspace/new/dir/bin.dat") == b"\x00\xff\n"
    assert vm.stat("/workspace/new").is_dir() and vm.stat("/workspace/new/dir/bin.dat").size == 3
    assert sorted(vm.list_dir("/workspace")) == [".git", "new", "src"]
    with pytest.raises(OSError) as missing:
        vm.access("/workspace/nope")
    assert missing.value.errno == errno.ENOENT
    out, err = bytearray(), bytearray()
    code = vm.exec(["/bin/sh", "-c", "pwd; echo oops >&2; exit 4"], cwd="/workspace/src", on_stdout=out.extend,
                   on_stderr=err.extend)
    assert (code, bytes(out), bytes(err)) == (4, b"/workspace/src\n", b"oops\n")
    arrivals: list[float] = []
    vm.exec(["/bin/sh", "-c", "echo early; sleep 0.6; echo late"], cwd="/workspace",
            on_stdout=lambda chunk: arrivals.append(time.monotonic()))
    finished = time.monotonic()
    assert len(arrivals) == 2 and finished - arrivals[0] > 0.4, "output streams while the command runs"
    results: list[int | None] = []
    runs = [threading.Thread(target=lambda n=n: results.append(vm.exec(["/bin/sh", "-c", f"sleep 0.3; exit {n}"],
                                                                       cwd="/workspace"))) for n in (1, 2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert sorted(results) == [1, 2], "two commands in flight at once"


def test_grep_walks_the_guest_tree(vm: BridgeClient, project: Path) -> None:
    host = str(project)
    found = vm_grep(vm, host, {"pattern": "print"}).content[0].text  # type: ignore[union-attr]
    assert found.split("\n") == ["src/a.py:3: print('a.b')", "src/deep/b.txt:1: print",
                                 f"src/deep/b.txt:2: {'x' * 500}... [truncated]", "", "[long lines truncated]"]
    insensitive = vm_grep(vm, host, {"pattern": "print", "ignoreCase": True, "glob": "*.py", "limit": 1})
    assert insensitive.content[0].text == "src/a.py:2: PRINT(os.sep)\n\n[1 matches limit reached]"  # type: ignore[union-attr]
    assert insensitive.details == {"matchLimitReached": 1}
    literal = vm_grep(vm, host, {"pattern": "a.b", "literal": True, "path": "src/a.py"})
    assert literal.content[0].text == "a.py:3: print('a.b')"  # type: ignore[union-attr]
    assert vm_grep(vm, host, {"pattern": "zzz"}).content[0].text == "No matches found"  # type: ignore[union-attr]
    with pytest.raises(Exception, match=r"Invalid regular expression: /\(/: "):
        vm_grep(vm, host, {"pattern": "("})
    with pytest.raises(Exception, match="ENOENT: no such file or directory, stat '/workspace/gone'"):
        vm_grep(vm, host, {"pattern": "x", "path": "gone"})


def test_a_timed_out_command_is_stopped_in_the_guest(vm: BridgeClient, project: Path) -> None:
    shell = VmShell(vm, str(project), "/bin/sh")
    seen = bytearray()
    with pytest.raises(ExecTimedOut):
        shell.exec("echo begun; sleep 30", str(project), ExecOptions(on_data=seen.extend, timeout=0.5))
    assert bytes(seen) == b"begun\n"
    assert shell.exec("true", str(project), ExecOptions(on_data=seen.extend)) == 0, "the VM still works"


def test_a_bridge_that_ignores_a_stop_fails_the_command(tmp_path: Path, project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bridge_module, "CLOSE_TIMEOUT", 0.3)
    vm = connect(tmp_path, project, "deaf")
    signal = AbortSignal()
    threading.Timer(0.3, signal.abort).start()
    with pytest.raises(GondolinError, match="did not answer within 0.3s"):
        vm.exec(["/bin/sh", "-c", "sleep 30"], cwd="/workspace", signal=signal)
    vm.close()


def test_guest_failures_that_are_no_file_error_name_the_vm(tmp_path: Path, project: Path) -> None:
    vm = connect(tmp_path, project, "vm-error")
    with pytest.raises(GondolinError, match="^Gondolin VM: guest agent not responding$"):
        vm.read_file("/workspace/src/a.py")
    vm.close()
    with pytest.raises(GondolinError, match="Gondolin VM is closed"):
        vm.stat("/workspace")
