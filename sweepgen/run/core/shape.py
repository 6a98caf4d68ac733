"""The shape of one run, read from the lock: how many nodes, GPUs and processes, and what starts them.

The compiler checked the spec and recorded the resolved shape (sweepgen.compile.spec.request.resources);
here the lock is data, so each value is checked again for type and range before an executor trusts
it. A lock without shape keys (a spec that names none, or one rendered before they existed) is a
one-node run of one process under no launcher, with ``gpus_per_run`` GPUs: what runs always were.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sweepgen.compile.run_api import LAUNCHERS, Lock
from sweepgen.errors import ConfigError, Location


@dataclass(frozen=True)
class RunShape:
    nodes: int = 1
    gpus_per_node: int = 0
    procs_per_node: int = 1
    launcher: str = "none"  # one of LAUNCHERS

    @property
    def world_size(self) -> int:
        return self.nodes * self.procs_per_node

    @property
    def launched(self) -> bool:
        """True when sweepgen starts the ranks through a launcher (not the command itself)."""
        return self.launcher != "none"


def shape_from_lock(lock: Lock, *, lock_path: str) -> RunShape:
    """The run's shape; a damaged value is an exit-2 error naming the lock and the key."""
    raw = getattr(lock, "resources", None)  # (unit tests hand executors a bare {} for the lock)
    if raw is None:
        return RunShape()
    if not isinstance(raw, Mapping):
        raise _bad("resources", "is not a mapping", lock_path)
    if raw.get("launcher") is None:  # no shape keys: the one-process run of every older lock
        return RunShape(gpus_per_node=_count(raw, "gpus_per_run", lock_path, minimum=0, default=0))
    launcher = raw["launcher"]
    if launcher not in LAUNCHERS:
        raise _bad("resources.launcher", f"is {launcher!r}, not one of {', '.join(LAUNCHERS)}", lock_path)
    gpus = _count(raw, "gpus_per_node", lock_path, minimum=0, default=0)
    procs = _count(raw, "procs_per_node", lock_path, minimum=1, default=1)
    if gpus and procs > gpus:
        raise _bad("resources.procs_per_node", f"({procs}) is more than gpus_per_node ({gpus})", lock_path)
    return RunShape(
        nodes=_count(raw, "nodes", lock_path, minimum=1, default=1),
        gpus_per_node=gpus,
        procs_per_node=procs,
        launcher=str(launcher),
    )


def _count(raw: Mapping[str, Any], key: str, lock_path: str, *, minimum: int, default: int) -> int:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _bad(f"resources.{key}", f"must be a whole number ≥ {minimum}, got {value!r}", lock_path)
    return value


def _bad(key: str, message: str, lock_path: str) -> ConfigError:
    return ConfigError(
        f"{key} {message}",
        location=Location(lock_path) if lock_path else None,
        key=key,
        hint="the lock is written by `sweepgen render`: fix the spec's resources block and render again",
    )
