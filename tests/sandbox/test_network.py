"""``sandbox.network``: "off" cuts the sandboxed commands' network but not pi's; a host list routes them through
pi's proxy (bubblewrap), which lets only those hosts through; Landlock refuses a host list at start-up."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from .conftest import Box, bwrap_problem, landlock_problem

FETCH = ("python3 -c \"import urllib.request, sys; r = urllib.request.urlopen(sys.argv[1], timeout=10); "
         "print(r.status, r.read().decode())\" {url} 2>&1 | tail -1")


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[int]:
    """A web server on this machine's loopback: outside the sandbox's network namespace."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_host_list_lets_only_those_hosts_through_the_proxy(box: Box, web: int) -> None:
    problem = bwrap_problem()
    if problem:
        pytest.skip(f"a host list needs bubblewrap: {problem}")
    box.settings(mode="workspace-write", network=["localhost"])
    calls = [
        ("bash", {"command": FETCH.format(url=f"http://localhost:{web}/allowed")}),
        ("bash", {"command": FETCH.format(url=f"http://127.0.0.1:{web}/denied")}),
        ("bash", {"command": f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {web}))\""}),
    ]
    run = box.run(calls)
    assert run.process.returncode == 0, run.process.stderr
    allowed, denied, direct = (text for _tool, text, _failed in run.results)
    assert allowed.strip() == "200 hello from /allowed"
    assert "403" in denied and "Forbidden" in denied  # the proxy's answer, as the command saw it
    assert "Connection refused" in direct  # around the proxy there is no way out


def test_the_proxy_says_why_it_refused(box: Box, web: int) -> None:
    problem = bwrap_problem()
    if problem:
        pytest.skip(f"a host list needs bubblewrap: {problem}")
    box.settings(mode="read-only", network=["*.example.invalid"])
    read_body = ("python3 -c \"import urllib.request, urllib.error, sys\ntry: urllib.request.urlopen(sys.argv[1])\n"
                 "except urllib.error.HTTPError as e: print(e.code, e.read().decode())\" http://127.0.0.1:{port}/")
    run = box.run([("bash", {"command": read_body.format(port=web)})])
    [(_tool, text, _failed)] = run.results
    assert text.strip() == ("403 blocked by the sandbox: host 127.0.0.1 is not in sandbox.network "
                            "(allowed: *.example.invalid)")


def test_landlock_refuses_a_host_list_at_start_up(box: Box) -> None:
    problem = landlock_problem()
    if problem:
        pytest.skip(problem)
    box.settings(mode="workspace-write", mechanism="landlock", network=["pypi.org"])
    run = box.run([])
    assert run.process.returncode == 1
    assert "Landlock: sandbox.network lists hosts (pypi.org)" in run.process.stderr
    assert 'set sandbox.network to "off" or "on"' in run.process.stderr
    assert box.pi.server.requests == []  # refused before anything ran


def test_network_on_lets_commands_connect(box: Box, web: int, mechanism: str) -> None:
    box.settings(mode="workspace-write", mechanism=mechanism, network="on")
    run = box.run([("bash", {"command": FETCH.format(url=f"http://127.0.0.1:{web}/open")})])
    assert run.results[0][1].strip() == "200 hello from /open"


def test_the_commands_of_a_run_share_one_private_loopback(box: Box, web: int) -> None:
    """Under bubblewrap every command joins the run's network namespace: a server one command starts answers
    the next on localhost (as without the sandbox), while this machine's own loopback stays out of reach."""
    problem = bwrap_problem()
    if problem:
        pytest.skip(f"needs bubblewrap: {problem}")
    if shutil.which("nsenter") is None:
        pytest.skip("without nsenter each command gets a network namespace of its own")
    box.settings(mode="workspace-write", mechanism="bubblewrap", network="off")
    port = 8765 if web != 8765 else 8766  # any port: the namespace is the run's own
    serve = (f"setsid python3 -m http.server {port} --bind 127.0.0.1 > server.log 2>&1 < /dev/null & "
             f"echo $! > server.pid; sleep 1")
    calls = [
        ("bash", {"command": serve}),
        ("bash", {"command": f"python3 -c \"import urllib.request; print(urllib.request.urlopen("
                             f"'http://127.0.0.1:{port}/server.pid', timeout=10).status)\""}),
        ("bash", {"command": FETCH.format(url=f"http://127.0.0.1:{web}/mine")}),
        ("bash", {"command": "kill $(cat server.pid) && echo stopped"}),
    ]
    run = box.run(calls)
    assert run.process.returncode == 0, run.process.stderr
    _started, served, machine, stopped = (text for _tool, text, _failed in run.results)
    assert served.strip() == "200", served
    assert "Connection refused" in machine and "hello" not in machine
    assert stopped.strip() == "stopped"
