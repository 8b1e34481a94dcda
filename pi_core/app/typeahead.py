"""Keys typed while pi starts: caught from the first moment and shown in a stand-in editor.

Loading the interactive UI (prompt_toolkit, the plugins, the session) takes most of a second. When the CLI
knows the run will be interactive it calls ``start()``: the terminal goes into the raw mode the UI uses, a
thread reads what is typed and draws it in a three-row stand-in for the editor, and the UI, once it takes
keys itself, calls ``take()`` for the bytes in the order they came (the stand-in is wiped, the terminal
settings given back for the UI to save). Something that needs the terminal before the UI (a start-up
question) calls ``hold()``: reading stops and the bytes wait for ``take()``. ``release()`` ends it on every
way out; text nobody took stays on screen rather than vanish.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import select
import signal
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from typing import Any

# Escape sequences (CSI with its parameters, SS3, or ESC + one character) draw nothing in the stand-in.
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|.)?", re.DOTALL)
_INTERRUPT = b"\x03"


class Typeahead:
    """What is typed on ``fd`` from ``begin()`` until ``hold()``, drawn on ``out`` (both the terminal)."""

    def __init__(self, fd: int, out: int) -> None:
        self.fd, self.out = fd, out
        self.saved: list[Any] = termios.tcgetattr(fd)
        self.typed = bytearray()
        self._wake_read, self._wake_write = os.pipe()
        self._thread = threading.Thread(target=self._read, name="pi-typeahead", daemon=True)
        self._colour = "" if os.environ.get("NO_COLOR") else "\x1b[90m"
        self.reading = False
        self.lock = threading.RLock()  # one writer at a time: the reader's echo or output printed above
        self._signals: dict[int, Any] = {}

    def begin(self) -> None:
        raw = termios.tcgetattr(self.fd)
        # The UI's raw mode (prompt_toolkit's): Enter stays \r and Ctrl+C a key, as the editor will read them.
        raw[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
        raw[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self.fd, termios.TCSANOW, raw)
        try:
            for signum in (signal.SIGTERM, signal.SIGHUP):  # killed while starting: the terminal as it was first
                if signal.getsignal(signum) is signal.SIG_DFL:
                    self._signals[signum] = signal.signal(signum, self._on_signal)
            self.reading = True
            self._draw()
            self._thread.start()
        except BaseException:  # no thread (or no signals here): no stand-in, the terminal as it was
            if self.reading:  # drawn already
                self._write("\r\x1b[1A\x1b[J\x1b[?2004l")
            self.reading = False
            self._restore()
            raise

    def _draw(self) -> None:
        rule = self._rule()
        # bracketed paste on, as the editor has it: a pasted text with new lines is one paste, not several Enters
        self._write(f"\x1b[?2004h\r\x1b[K{rule}\r\n\x1b[K\r\n\x1b[K{rule}\x1b[1A\r{shown(self.typed, self._width())}")

    @contextlib.contextmanager
    def above(self) -> Iterator[None]:
        """Print something (start-up output) where the stand-in is; it is drawn again below."""
        with self.lock:
            if not self.reading:
                yield
                return
            self._write("\r\x1b[1A\x1b[J")
            try:
                yield
            finally:
                sys.stdout.flush()
                self._draw()

    def hold(self) -> None:
        """Stop reading (what is not read yet stays for the UI), wipe the stand-in, give the terminal back."""
        self._stop(keep_text=False)

    def release(self) -> None:
        """Like ``hold`` for good; typed text nobody took is left on screen, the cursor below it."""
        self._stop(keep_text=True)

    def _stop(self, *, keep_text: bool) -> None:
        if not self.reading:
            return
        os.write(self._wake_write, b"x")
        self._thread.join()
        os.close(self._wake_read)
        os.close(self._wake_write)
        with self.lock:
            self.reading = False
            left = keep_text and shown(self.typed, self._width())
            self._write(("\r\x1b[1B\r\n" if left else "\r\x1b[1A\x1b[J") + "\x1b[?2004l")
        self._restore()

    def _read(self) -> None:
        interrupts = 0
        while True:
            ready, _, _ = select.select([self.fd, self._wake_read], [], [])
            if self._wake_read in ready:
                return
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.typed += data
                self._write(f"\r\x1b[K{shown(self.typed, self._width())}")
            # Ctrl+C twice with nothing else between quits, as in the editor (a start-up that hangs can be left).
            interrupts = interrupts + data.count(_INTERRUPT) if data.strip(_INTERRUPT) == b"" else 0
            if interrupts >= 2:
                import _thread

                _thread.interrupt_main()
                return

    def _on_signal(self, signum: int, frame: object) -> None:
        self.release()
        os.kill(os.getpid(), signum)  # the default action, now that the handler is gone

    def _rule(self) -> str:
        return f"{self._colour}{'─' * self._width()}\x1b[0m" if self._colour else "─" * self._width()

    def _width(self) -> int:
        try:
            return max(os.get_terminal_size(self.out).columns, 2)
        except OSError:
            return 80

    def _write(self, text: str) -> None:
        try:
            os.write(self.out, text.encode())
        except OSError:
            pass

    def _restore(self) -> None:
        for signum, previous in self._signals.items():
            if signal.getsignal(signum) == self._on_signal:  # not replaced since (the app installs its own)
                with contextlib.suppress(ValueError):  # only the main thread may
                    signal.signal(signum, previous)
        self._signals.clear()
        try:
            termios.tcsetattr(self.fd, termios.TCSANOW, self.saved)
        except termios.error:
            pass


def shown(typed: bytes | bytearray, width: int) -> str:
    """The editor line the stand-in shows: the text since the last Enter (or Ctrl+C, which clears it), the
    last line of it, escape sequences and other control keys dropped, Backspace applied, cut to ``width``."""
    line: list[str] = []
    for char in _ESCAPES.sub("", bytes(typed).decode(errors="ignore")):
        if char in "\r\n\x03":
            line = []
        elif char in "\x7f\x08":
            if line:
                line.pop()
        elif char.isprintable():
            line.append(char)
    return "".join(line)[-(width - 1):]


_current: Typeahead | None = None
TAKES = "takes_typeahead"  # set True on a mode's ``run`` that calls ``take()``


def start() -> None:
    """Catch keys from now on, when stdin and stdout are a terminal (else nothing happens)."""
    global _current
    if _current is not None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    try:
        _current = Typeahead(sys.stdin.fileno(), sys.stdout.fileno())
        _current.begin()
    except (OSError, termios.error, ValueError, RuntimeError):
        _current = None
        return
    atexit.register(release)


def hold() -> None:
    if _current is not None:
        _current.hold()


def take() -> bytes:
    """Everything typed so far, once; reading stops and the terminal is as it was before ``start``."""
    global _current
    if _current is None:
        return b""
    _current.hold()
    typed, _current = bytes(_current.typed), None
    return typed


@contextlib.contextmanager
def above() -> Iterator[None]:
    """Around output printed before the UI runs: it goes where the stand-in was, the stand-in below it."""
    if _current is None:
        yield
        return
    with _current.above():
        yield


def hand_to(run: Callable[..., object]) -> None:
    """The CLI, about to run a mode: one whose ``run`` does not say it takes the keys (``TAKES``) gets the
    terminal as it was."""
    if getattr(run, TAKES, False) is not True:
        release()


def release() -> None:
    global _current
    if _current is not None:
        _current.release()
        _current = None
