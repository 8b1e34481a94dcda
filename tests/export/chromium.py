"""Drive headless Chromium over the DevTools protocol on a pipe (no websocket library needed).

``with Browser() as browser: page = browser.open(url)`` gives a page whose console errors and uncaught
exceptions are collected, on which JavaScript can be evaluated and screenshots taken.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

CHROMIUM = Path(os.environ.get("PI_TEST_CHROMIUM", "/usr/bin/chromium"))
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-extensions", "--mute-audio", "--remote-debugging-pipe", "--lang=en-US",
]


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    browser: Browser
    session_id: str
    console_errors: list[str] = field(default_factory=list)
    console_messages: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)  # alert/confirm/prompt texts (a sign of injected script)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, self.session_id)

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} raised: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, path: Path, width: int = 1400, height: int = 1000) -> Path:
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def press(self, key: str) -> None:
        """Type one printable key (or "Escape") into the page."""
        text = {} if len(key) > 1 else {"text": key}
        self.send("Input.dispatchKeyEvent", type="keyDown", key=key, **text)
        self.send("Input.dispatchKeyEvent", type="keyUp", key=key)

    def click(self, selector: str) -> None:
        """Click the first element matching ``selector`` through a real mouse event at its centre."""
        box = self.evaluate(
            f"(() => {{ const el = document.querySelector({json.dumps(selector)}); el.scrollIntoView({{block: 'center'}});"
            " const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def wait_for(self, expression: str, timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise BrowserError(f"timed out waiting for {expression!r}")


class Browser:
    def __init__(self) -> None:
        if not CHROMIUM.exists():
            raise BrowserError(f"{CHROMIUM} is not installed")
        self.profile = tempfile.mkdtemp(prefix="pi-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire_pipes() -> None:  # the child reads commands on fd 3 and writes replies on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        self.proc = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "TZ": "UTC", "LANG": "en_US.UTF-8", "LANGUAGE": "en_US"},
            pass_fds=(3, 4), preexec_fn=wire_pipes,  # noqa: PLW1509 - the test process starts no threads first
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._next_id = 0
        self._buffer = b""
        self.pages: dict[str, Page] = {}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", {})
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, timeout: float) -> dict[str, Any]:
        import select

        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_child], [], [], remaining)[0]:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def _dispatch_event(self, message: dict[str, Any]) -> None:
        page = self.pages.get(message.get("sessionId", ""))
        if page is None:
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            page.console_messages.append(f"{params.get('type')}: {text}")
            if params.get("type") in ("error", "assert"):
                page.console_errors.append(text)
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            page.console_errors.append(str(details.get("exception", {}).get("description") or details.get("text")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            page.console_errors.append(str(params["entry"].get("text")))
        elif method == "Page.javascriptDialogOpening":
            page.dialogs.append(str(params.get("message")))
            self._write("Page.handleJavaScriptDialog", {"accept": True}, page.session_id)  # reply ignored

    def _write(self, method: str, params: dict[str, Any], session_id: str | None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session_id:
            message["sessionId"] = session_id
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        return self._next_id

    def send(self, method: str, params: dict[str, Any], session_id: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        wanted = self._write(method, params, session_id)
        while True:
            reply = self._read_message(timeout)
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._dispatch_event(reply)

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session_id = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session_id)
        self.pages[session_id] = page
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            page.send(domain)
        page.send("Emulation.setDeviceMetricsOverride", width=1400, height=1000, deviceScaleFactor=1, mobile=False)
        page.send("Page.navigate", url=url)
        page.wait_for("document.readyState === 'complete'")
        return page
