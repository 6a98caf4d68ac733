"""The one value of the spec's ``resources:`` block that every executor honours: ``time``, a run's
limit (Slurm's time formats, parsed to whole minutes). The Slurm executor reads the rest of the block
(sweepgen.run.slurm.resources); the local executor stops a run after ``time`` unless --time-limit
says otherwise.
"""

from __future__ import annotations

from typing import Any

from sweepgen.compile.run_api import slurm_time
from sweepgen.errors import ConfigError, Location


def parse_time(value: Any, *, key: str = "time", lock_path: str = "") -> int:
    """Slurm's time formats to whole minutes (seconds round up, so a limit is never shortened):
    ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; an int is minutes."""
    parsed = slurm_time.parse(value)
    if isinstance(parsed, tuple):
        raise bad(key, parsed[0], lock_path, parsed[1])
    return parsed


def location(lock_path: str) -> Location | None:
    return Location(lock_path) if lock_path else None


def bad(key: str, message: str, lock_path: str, hint: str) -> ConfigError:
    return ConfigError(
        f"{key.split('.')[-1]} {message}",
        location=location(lock_path),
        key=key,
        hint=hint + " (in the spec's resources block; render again after fixing)",
    )
