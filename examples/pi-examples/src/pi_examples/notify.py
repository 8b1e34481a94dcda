"""notify: a desktop notification from the terminal (OSC 777, OSC 99 on kitty, a toast on Windows Terminal)
each time pi has finished and waits for input.

The escape sequences go to the terminal on stdout; in RPC mode stdout carries the protocol, so they go to
stderr there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TextIO

from pi_core import hookimpl
from pi_core.events import AgentEvent
from pi_core.extension import ExtensionContext

TITLE, BODY = "Pi", "Ready for input"


def windows_toast_script(title: str, body: str) -> str:
    kind = "Windows.UI.Notifications"
    manager = f"[{kind}.ToastNotificationManager, {kind}, ContentType = WindowsRuntime]"
    template = f"[{kind}.ToastTemplateType]::ToastText01"
    return "; ".join([
        f"{manager} > $null",
        f"$xml = [{kind}.ToastNotificationManager]::GetTemplateContent({template})",
        f"$xml.GetElementsByTagName('text')[0].AppendChild($xml.CreateTextNode('{body}')) > $null",
        f"[{kind}.ToastNotificationManager]::CreateToastNotifier('{title}').Show([{kind}.ToastNotification]::new($xml))",
    ])


def notify(title: str, body: str, terminal: TextIO) -> None:
    if os.environ.get("WT_SESSION"):
        try:
            subprocess.Popen(["powershell.exe", "-NoProfile", "-Command", windows_toast_script(title, body)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            pass  # no PowerShell reachable: a missing notification is not worth an error
        return
    if os.environ.get("KITTY_WINDOW_ID"):
        # kitty: the title first (d=0: more to come), then the body of notification 1
        terminal.write(f"\x1b]99;i=1:d=0;{title}\x1b\\\x1b]99;i=1:p=body;{body}\x1b\\")
    else:
        terminal.write(f"\x1b]777;notify;{title};{body}\x07")
    terminal.flush()


@hookimpl
def pi_agent_event(ctx: ExtensionContext, event: AgentEvent) -> None:
    # agent_end may still be followed by a retry, a compaction or queued work; agent_settled is the real end.
    if event.type == "agent_settled":
        notify(TITLE, BODY, sys.stderr if ctx.mode == "rpc" else sys.stdout)
