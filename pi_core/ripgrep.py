"""Locate the ``rg`` binary that the PyPI ``ripgrep`` wheel installs next to our Python; nothing is downloaded."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from pi_core.errors import ToolError

RG_MISSING = "ripgrep (rg) is not available and could not be downloaded"


def find_rg() -> str | None:
    """``rg`` on PATH, else the one in this interpreter's bin directory (the venv's), else None."""
    on_path = shutil.which("rg")
    if on_path:
        return on_path
    name = "rg.exe" if sys.platform == "win32" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return None


def require_rg() -> str:
    """The ``rg`` path, or ``ToolError`` with Pi's text when it is missing."""
    rg = find_rg()
    if rg is None:
        raise ToolError(RG_MISSING)
    return rg
