"""The one value of the spec's ``resources:`` block that every executor honours: ``time``, a run's
limit (Slurm's time formats, parsed to whole minutes). The Slurm executor reads the rest of the block
(sweepgen.run.slurm.resources); the local executor stops a run after ``time`` unless --time-limit
says otherwise.
"""

from __future__ import annotations

import math
from typing import Any

from sweepgen.errors import ConfigError, Location


def parse_time(value: Any, *, key: str = "time", lock_path: str = "") -> int:
    """Slurm's time formats to whole minutes (seconds round up, so a limit is never shortened):
    ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; an int is minutes."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise bad(
            key,
            f"must be minutes or a Slurm time string, got {value!r}",
            lock_path,
            'e.g. 90 or "01:30:00" or "1-00:00:00"',
        )
    minutes: int | None
    if isinstance(value, int):
        minutes = value
    else:
        minutes = _parse_time_str(value.strip())
        if minutes is None:
            raise bad(
                key,
                f"{value!r} is not a Slurm time",
                lock_path,
                'use minutes, "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"',
            )
    if minutes < 1:
        raise bad(key, f"{value!r} is shorter than one minute", lock_path, "Slurm limits are whole minutes")
    return minutes


def _parse_time_str(text: str) -> int | None:
    dated = "-" in text
    days, clock = _split_days(text)
    parts = clock.split(":")
    if days is None or not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    nums = [int(p) for p in parts]
    hours, minutes, seconds = _clock(nums, dated=dated)
    if seconds > 59 or (len(nums) == 3 or dated) and minutes > 59:
        return None
    return days * 24 * 60 + hours * 60 + minutes + math.ceil(seconds / 60)


def _split_days(text: str) -> tuple[int | None, str]:
    """ "D-rest" as (D, rest), D None when it is not digits; without a day part (0, text)."""
    if "-" not in text:
        return 0, text
    day_part, clock = text.split("-", 1)
    return (int(day_part) if day_part.isdigit() else None), clock


def _clock(nums: list[int], *, dated: bool) -> tuple[int, int, int]:
    """(hours, minutes, seconds) of a time's clock part, as Slurm reads it."""
    if dated:  # D-H, D-H:M, D-H:M:S
        hours, minutes, seconds = (nums + [0, 0])[:3]
        return hours, minutes, seconds
    if len(nums) == 3:  # H:M:S
        return nums[0], nums[1], nums[2]
    return 0, nums[0], (nums[1] if len(nums) == 2 else 0)  # M or M:S


def location(lock_path: str) -> Location | None:
    return Location(lock_path) if lock_path else None


def bad(key: str, message: str, lock_path: str, hint: str) -> ConfigError:
    return ConfigError(
        f"{key.split('.')[-1]} {message}",
        location=location(lock_path),
        key=key,
        hint=hint + " (in the spec's resources block; render again after fixing)",
    )
