"""Inside a sandbox with a host allow-list: listen on the network namespace's loopback and hand each connection to
pi's proxy on its Unix socket.

``python -I -S bridge.py SOCKET PORT``: the run's shared network (``netns.py``); prints ``ready`` once listening
and serves until its stdin closes (pi holds the other end, so it ends with pi, however pi ends).
``python -I -S bridge.py SOCKET PORT -- COMMAND [ARGS...]``: one command's own network namespace (no
``nsenter``); runs the command meanwhile and exits as it does (its code, or the signal that killed it).
Standard library only and no ``site``: it starts quickly.
"""

import os
import signal
import socket
import sys
import threading


def _pump(source, sink):
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            sink.sendall(chunk)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _serve(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _accept(listener, path):
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_serve, args=(client, path), daemon=True).start()


def main(argv):
    if len(argv) < 2 or len(argv) > 2 and (argv[2] != "--" or len(argv) < 4):
        sys.stderr.write("usage: bridge.py SOCKET PORT [-- COMMAND [ARGS...]]\n")
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_accept, args=(listener, path), daemon=True).start()
    if not command:
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while sys.stdin.buffer.read(65536):
            pass
        return 0
    try:
        pid = os.posix_spawnp(command[0], command, os.environ)
    except OSError as err:
        sys.stderr.write(f"{command[0]}: {err.strerror or err}\n")
        return 127
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
