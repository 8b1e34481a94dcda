"""The terminal side of ``pi auth login``: prompts on stdin/stdout, the browser opened unless ``--no-browser``."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from pi_core.models.oauth import LoginCancelled, LoginMethod


def is_interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def open_browser(url: str) -> None:
    """Open ``url`` without waiting (``$BROWSER`` is honoured); a machine without a browser just shows the URL."""
    import webbrowser

    threading.Thread(target=lambda: webbrowser.open(url), name="pi-open-browser", daemon=True).start()


class TerminalLoginUI:
    """``LoginUI`` on the terminal. ``browser`` False means ``--no-browser``: prefer the non-browser methods."""

    def __init__(self, provider: str, browser: bool) -> None:
        self.provider = provider
        self.browser = browser
        self.skipped: list[str] = []

    def write(self, line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    async def choose(self, message: str, methods: list[LoginMethod]) -> LoginMethod:
        if self.browser:
            self.skipped = [m.label for m in methods[1:]]
            return methods[0]
        others = [m for m in methods if not m.browser]
        if not others:  # only a browser sign-in: still offered, without opening the browser
            return methods[0]
        if len(others) == 1:
            self.write(f"{message} {others[0].label}")
            return others[0]
        self.write(message)
        for index, method in enumerate(others, 1):
            self.write(f"  {index}. {method.label}")
        while True:
            answer = (await self._line(f"Select 1-{len(others)}: ")).strip()
            if answer.isdigit() and 1 <= int(answer) <= len(others):
                return others[int(answer) - 1]
            self.write(f"Enter a number from 1 to {len(others)}.")

    async def ask(self, message: str, placeholder: str = "", secret: bool = False) -> str:
        prompt = f"{message}{f' ({placeholder})' if placeholder else ''}: "
        if secret:
            import getpass

            try:
                return await asyncio.to_thread(getpass.getpass, prompt)
            except (EOFError, KeyboardInterrupt):
                raise LoginCancelled() from None
        return await self._line(prompt)

    async def paste(self, message: str, placeholder: str = "") -> str:
        return await self._line(f"{message}{f' ({placeholder})' if placeholder else ''}: ")

    def open_url(self, url: str, instructions: str) -> None:
        self.write(f"Open this URL to sign in:\n  {url}")
        if instructions:
            self.write(instructions)
        if self.browser:
            open_browser(url)
        rerun = f'"pi auth login {self.provider} --no-browser"'
        if len(self.skipped) == 1:
            self.write(f'To use "{self.skipped[0]}" instead, run {rerun}')
        elif self.skipped:
            labels = ", ".join(f'"{label}"' for label in self.skipped)
            self.write(f"Other sign-in methods: {labels}. Run {rerun} to choose one.")

    def show_device_code(self, verification_uri: str, user_code: str) -> None:
        self.write(f"Open {verification_uri} and enter code: {user_code}")
        if self.browser:
            open_browser(verification_uri)
        self.write("Waiting for authentication...")

    def progress(self, message: str) -> None:
        self.write(message)

    async def _line(self, prompt: str) -> str:
        """One line from stdin, cancellable (a browser redirect can make the question moot)."""
        sys.stdout.write(prompt)
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str] = loop.create_future()
        buffer = bytearray()
        fd = sys.stdin.fileno()

        def readable() -> None:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                if not done.done():
                    done.set_exception(LoginCancelled())
                return
            buffer.extend(chunk)
            if b"\n" in buffer and not done.done():
                done.set_result(buffer.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r"))

        loop.add_reader(fd, readable)
        try:
            return await done
        finally:
            loop.remove_reader(fd)
