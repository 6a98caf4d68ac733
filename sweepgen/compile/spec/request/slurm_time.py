"""Slurm's time formats (``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``) as whole minutes,
seconds rounded up so a limit is never shortened. Pure: the spec's ``resources.time`` is checked
with it when the spec loads, and every executor reads the lock's value with it.
"""

from __future__ import annotations

import math
from typing import Any

HINT = 'use minutes, "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"'


def parse(value: Any) -> int | tuple[str, str]:
    """A limit's whole minutes (an int is minutes), or (what is wrong with ``value``, how to write
    it): the one rule of the spec's check and of every executor's reading of the lock."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return (
            f"must be minutes or a Slurm time string, got {value!r}",
            'e.g. 90 or "01:30:00" or "1-00:00:00"',
        )
    found = value if isinstance(value, int) else _parse_time_str(value.strip())
    if found is None:
        return f"{value!r} is not a Slurm time", HINT
    if found < 1:
        return f"{value!r} is shorter than one minute", "Slurm limits are whole minutes"
    return found


def _parse_time_str(text: str) -> int | None:
    dated = "-" in text
    days, clock = _split_days(text)
    parts = clock.split(":")
    if days is None or not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        return None
    nums = [int(p) for p in parts]
    hours, minutes, seconds = _clock(nums, dated=dated)
    if not _clock_fits(seconds, minutes, minutes_bounded=len(nums) == 3 or dated):
        return None
    return days * 24 * 60 + hours * 60 + minutes + math.ceil(seconds / 60)


def _clock_fits(seconds: int, minutes: int, *, minutes_bounded: bool) -> bool:
    """Slurm refuses seconds past 59, and minutes past 59 where hours are given too."""
    return seconds <= 59 and not (minutes_bounded and minutes > 59)


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
