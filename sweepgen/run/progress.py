"""Read a run's progress from its directory while it runs: the last metrics line and the log tail.

Both read only the end of the file, so polling a long run stays cheap, and both tolerate the last
line being half written (the trainer may be writing it right now).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.errors import ConfigError, Location
from sweepgen.run.base import LOG_FILE, METRICS_FILE, SUMMARY_FILE

ATTEMPT_MARK = "=== sweepgen: attempt"  # the local executor starts each attempt's log section with it


def _read_end(path: Path, max_bytes: int) -> bytes:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            return fh.read()
    except FileNotFoundError:
        return b""


def last_metrics(run_dir: Path, *, max_bytes: int = 65536) -> dict[str, Any] | None:
    """The last complete JSON line of metrics.jsonl, or None before the first one."""
    for line in reversed(_read_end(run_dir / METRICS_FILE, max_bytes).splitlines()):
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # half-written last line, or the first line cut by the seek
        if isinstance(row, dict):
            return row
    return None


def log_tail(run_dir: Path, *, lines: int = 20, max_bytes: int = 65536) -> list[str]:
    """The last ``lines`` lines of the latest attempt in run.log (earlier attempts are left out)."""
    text = _read_end(run_dir / LOG_FILE, max_bytes).decode("utf-8", errors="replace")
    mark = text.rfind(ATTEMPT_MARK)
    if mark >= 0:
        text = text[text.find("\n", mark) + 1 :] if "\n" in text[mark:] else ""
    return text.splitlines()[-lines:]


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """summary.json (written last and atomically by the trainer), or None if the run has none."""
    try:
        data = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"summary.json is not valid JSON: {err.msg}",
            location=Location(str(run_dir / SUMMARY_FILE), err.lineno, err.colno),
            hint="the trainer writes it atomically; a broken one was written by something else",
        ) from err
    return data if isinstance(data, dict) else None


def total_steps(config: Mapping[str, Any]) -> int | None:
    """The planned number of steps, where the config says it (bundled trainer: grpo.max_steps)."""
    grpo = config.get("grpo")
    value = grpo.get("max_steps") if isinstance(grpo, Mapping) else config.get("max_steps")
    return value if isinstance(value, int) else None
