"""Read a run's progress from its directory while it runs: the last metrics line and the log tail.

Both read only the end of the file, so polling a long run stays cheap, and both tolerate the last
line being half written (the trainer may be writing it right now).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sweepgen.run.core import runfiles
from sweepgen.run.core.base import LOG_FILE, METRICS_FILE, SUMMARY_FILE

ATTEMPT_MARK = "=== sweepgen: attempt"  # the local executor starts each attempt's log section with it


def _read_end(path: Path, max_bytes: int) -> bytes:
    """The last ``max_bytes`` of a regular file; nothing for a missing file, link, FIFO or device
    (``runfiles.read_end``: never through a link, so a committed run.log linking outside is never
    printed, and a FIFO in a run folder never hangs `run` or `status`)."""
    return runfiles.read_end(path, max_bytes)


def last_metrics(run_dir: Path, *, max_bytes: int = 65536) -> dict[str, Any] | None:
    """The last complete JSON line of metrics.jsonl, or None before the first one."""
    for line in reversed(_read_end(run_dir / METRICS_FILE, max_bytes).splitlines()):
        try:
            row = json.loads(line, parse_int=runfiles.bounded_int)
        except (ValueError, RecursionError):  # JSON and UTF-8 errors are ValueErrors
            continue  # half-written last line, the first line cut by the seek, or a line too deep
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
    """summary.json (written last and atomically by the trainer), or None if the run has none.
    A summary that is no regular file, too large, not JSON, too deep or holding NaN or Infinity
    is a ``runfiles.RunFileError`` with the reason."""
    data = runfiles.read_json(run_dir / SUMMARY_FILE)
    if data is not None and not isinstance(data, dict):
        raise runfiles.RunFileError(run_dir / SUMMARY_FILE, f"is a JSON {type(data).__name__}, not an object")
    return data


def total_steps(config: Mapping[str, Any]) -> int | None:
    """The planned number of steps, where the config says it (bundled trainer: grpo.max_steps)."""
    grpo = config.get("grpo")
    value = grpo.get("max_steps") if isinstance(grpo, Mapping) else config.get("max_steps")
    return value if isinstance(value, int) else None
