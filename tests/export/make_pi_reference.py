"""Regenerate pi_reference/: what Pi's own ``--export`` page shows for each fixture session (run by hand).

    PI_REFERENCE_CMD="node path/to/pi-coding-agent/dist/cli.js" python tests/export/make_pi_reference.py

For every session in fixtures/ (written by Pi 1.6.0) it runs Pi's export, opens the page in headless Chromium and
stores the page's visible text twice, gzipped: as it opens, and after the "o" key expanded the tool outputs.
"""

from __future__ import annotations

import gzip
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from chromium import Browser

FIXTURES = HERE / "fixtures"  # copies of shared/fixtures/pi-sessions: sessions written by Pi 1.6.0


def main() -> None:
    command = shlex.split(os.environ["PI_REFERENCE_CMD"])
    with tempfile.TemporaryDirectory() as tmp, Browser() as browser:
        env = {**os.environ, "PI_CODING_AGENT_DIR": tmp, "HOME": tmp}
        for session in sorted(FIXTURES.glob("*.jsonl")):
            page_path = Path(tmp) / f"{session.stem}.html"
            subprocess.run([*command, "--export", str(session), str(page_path)], env=env, check=True, timeout=120)
            page = browser.open(page_path.as_uri())
            time.sleep(0.5)
            texts = {"": page.evaluate("document.body.innerText")}
            page.press("o")
            time.sleep(0.5)
            texts["-expanded"] = page.evaluate("document.body.innerText")
            for suffix, text in texts.items():
                (HERE / "pi_reference" / f"{session.stem}{suffix}.txt.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
            print(session.name, "ok")


if __name__ == "__main__":
    main()
