"""What share tests hold in common: the fake ``gh``'s handle and the secret the session carries."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

SECRET = "sk-ant-api03-" + "x" * 40


@dataclass
class FakeGh:
    bin_dir: Path
    log: Path

    def env(self, state: str = "") -> dict[str, str]:
        return {"PATH": f"{self.bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_GH_LOG": str(self.log),
                "FAKE_GH_STATE": state}

    def calls(self) -> list[list[str]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    @property
    def uploaded(self) -> Path:
        return self.log.with_name("uploaded.html")
