"""How long a local run has run, told by the machine's boot clock (seconds since this boot, counted
through a suspend, never moved by a change of the wall clock: NTP stepping it, ``date -s``, a VM
restored from a snapshot): a status's ``started`` and ``ended`` are wall-clock times, so a clock
moved back or forward while a run ran made its elapsed time wrong (negative, shown 0:00, or an hour
too long).

The supervisor records where on this clock it started (``ids.boot_s``, with the boot's id) and, at
the end, how long it ran (``ids.elapsed_s``). Standard library only: the supervisor imports it.
"""

from __future__ import annotations

import os
import time
from typing import Any

BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"
BOOT_S = "boot_s"  # in ids: the supervisor's start on the boot clock
ELAPSED_S = "elapsed_s"  # in ids of an ended run: how long its supervisor ran it, on the boot clock


def now_s() -> float | None:
    """Seconds on the boot clock (Linux), else on the monotonic clock; None where neither is."""
    for name in ("CLOCK_BOOTTIME", "CLOCK_MONOTONIC"):
        clock = getattr(time, name, None)
        if clock is not None:
            try:
                return time.clock_gettime(clock)
            except OSError:
                continue
    return None


def process_start_s() -> float | None:
    """When this process started, on the boot clock (``/proc/self/stat``'s start time, counted from
    the boot in clock ticks, rounded down), never later than now; now where that cannot be read.
    A `sweepgen run` is started from this moment, not from when its imports were done: a `cancel`
    asked in between (its runs folder read before the `run` read its clock) is one it must hear."""
    now = now_s()
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read(4096).rsplit(")", 1)[1].split()[19])
        start = ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return start if now is None else min(start, now)


def boot_id() -> str | None:
    """This boot's id (Linux): a status written before the machine restarted names processes that
    are all gone, whatever process now has their pid and start time (both count from the boot)."""
    try:
        with open(BOOT_ID_FILE, encoding="ascii") as fh:
            return fh.read(64).strip() or None
    except (OSError, ValueError):
        return None


def _seconds(value: Any) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return float(value) if ok and value >= 0 and value != float("inf") else None


def ended_after(ids: dict[str, Any]) -> float | None:
    """How long an ended run ran, as its supervisor measured it; None where it did not."""
    return _seconds(ids.get(ELAPSED_S))


def running_for(ids: dict[str, Any]) -> float | None:
    """How long a running run of this machine and boot has run; None where that cannot be known
    here (another machine's or boot's clock, or a status that does not say)."""
    start, now, boot = _seconds(ids.get(BOOT_S)), now_s(), boot_id()
    if start is None or now is None or boot is None or ids.get("boot_id") != boot or now < start:
        return None
    return now - start
