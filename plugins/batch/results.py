"""``DIR/results.jsonl``: one line per finished task, appended and synced as each task ends.

A run holds ``DIR/.pi-batch.lock`` so two runs never write one file. ``--resume`` keeps every final
line (``ok``, ``error``, ``timeout``) and drops ``cancelled`` ones, whose tasks run again; a line cut off
by a crash is dropped too (the file is rewritten atomically first, so nothing readable is lost).
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from pi_plugins.batch.runner import Outcome
from pi_plugins.batch.tasks import TaskSpec

from pi_core.errors import PiError

RESULTS = "results.jsonl"
FINAL = frozenset({"ok", "error", "timeout"})


@dataclass(frozen=True)
class Finished:
    """A task's final result, as written."""

    task: TaskSpec
    outcome: Outcome
    attempts: int
    started_at: float
    ended_at: float
    session: str | None  # path relative to the output directory

    def to_json(self) -> dict[str, Any]:
        outcome, usage = self.outcome, self.outcome.usage
        return {
            "id": self.task.id, "line": self.task.line, "status": outcome.status, "answer": outcome.answer,
            "error": outcome.error, "turns": outcome.turns,
            "usage": {"input": usage.input, "output": usage.output, "cache_read": usage.cache_read,
                      "cache_write": usage.cache_write, "total_tokens": usage.tokens},
            "cost": round(usage.cost, 8), "duration_s": round(outcome.duration_s, 3), "attempts": self.attempts,
            "model": outcome.model, "session": self.session, "workspace": outcome.workspace,
            "started_at": _iso(self.started_at), "ended_at": _iso(self.ended_at), "meta": self.task.meta,
        }


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ResultsFile:
    def __init__(self, out: Path, *, resume: bool) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.path = out / RESULTS
        self._lock = (out / ".pi-batch.lock").open("w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            self._lock.close()
            raise PiError(f"another pi batch is writing to {out}; wait for it or choose another --out") from err
        self.previous: dict[str, dict[str, Any]] = {}
        self.dropped_cancelled = 0
        self.dropped_broken = 0
        kept = self._read()
        if kept and not resume:
            self._lock.close()
            raise PiError(f"{self.path} already has {len(kept)} result(s); add --resume to skip those tasks "
                          "and run the rest, or choose another --out")
        if self.dropped_cancelled or self.dropped_broken:
            self._rewrite(kept)
        self.previous = {record["id"]: record for record in kept}
        self._file: IO[str] = self.path.open("a", encoding="utf-8")

    def _read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        kept: list[dict[str, Any]] = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.dropped_broken += 1
                continue
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                self.dropped_broken += 1
            elif record.get("status") in FINAL:
                kept.append(record)
            else:
                self.dropped_cancelled += 1
        return kept

    def _rewrite(self, kept: list[dict[str, Any]]) -> None:
        temp = self.path.with_name(self.path.name + ".tmp")
        with temp.open("w", encoding="utf-8") as handle:
            for record in kept:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, self.path)

    def write(self, finished: Finished) -> None:
        self._file.write(json.dumps(finished.to_json(), ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
        self._lock.close()
