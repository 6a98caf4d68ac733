"""The spec's ``resources:`` block, read from the lock and turned into sbatch parameters.

Pure: no Slurm needed, so ``--dry-run`` and the unit tests work anywhere. Everything is checked
here, before anything is submitted, because a typo in a resource request otherwise surfaces as a
job that sits pending forever or dies after hours in the queue.

What is accepted (all keys optional except ``time``)::

    resources:
      partition: gpu            # sbatch --partition; absent: the cluster's default partition
      gpus_per_run: 1           # --gpus-per-node (one run = one task on one node); 0 or absent: none
      cpus_per_run: 8           # --cpus-per-task; absent: 1
      mem: 64G                  # --mem, Slurm syntax (a number with an optional K/M/G/T suffix)
      time: "04:00:00"          # --time: minutes, or Slurm's [days-]hours:minutes:seconds forms
      sbatch_extra:             # verbatim #SBATCH lines, e.g. ["--account=rl", "--qos=high"]
        - --account=rl

``time`` is required: submitit would otherwise silently request 5 minutes, and every real run
would be killed by a limit nobody wrote down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sweepgen.compile.run_api import Lock, slurm_request
from sweepgen.errors import ConfigError
from sweepgen.run.core import registry
from sweepgen.run.core.plan.resources import bad as _bad
from sweepgen.run.core.plan.resources import location as _loc
from sweepgen.run.core.plan.resources import parse_time

MANAGED_FLAGS = slurm_request.MANAGED_FLAGS  # re-exported: the tests and docs name it here


@dataclass(frozen=True)
class SlurmResources:
    time_min: int  # the time limit in whole minutes (what submitit and sbatch take)
    partition: str | None = None
    gpus_per_run: int = 0
    cpus_per_run: int = 1
    mem: str | None = None
    sbatch_extra: tuple[str, ...] = ()  # "--flag=value" strings, written verbatim

    @property
    def signal_delay_s(self) -> int:
        """How long before the time limit the run is told to stop (SIGUSR2, forwarded as SIGTERM)
        so the trainer can save a checkpoint: 90 s, or a tenth of a short limit (at least 10 s)."""
        return min(90, max(10, self.time_min * 6))


def _partition(partition: Any, lock_path: str) -> str | None:
    """A partition name: one word (absent: the cluster's default partition)."""
    problem = slurm_request.partition_problem(partition)
    if problem:
        raise _bad("resources.partition", problem, lock_path, slurm_request.PARTITION_HINT)
    return None if partition is None else str(partition)


def _mem(value: Any, lock_path: str) -> str | None:
    """A Slurm memory size (a bare int is megabytes, as sbatch reads it)."""
    mem = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    problem = slurm_request.mem_problem(mem)
    if problem:
        raise _bad(
            "resources.mem", problem.replace(repr(mem), repr(value), 1), lock_path, slurm_request.MEM_HINT
        )
    return mem


def known_keys() -> tuple[str, ...]:
    """The ``resources:`` keys the Slurm executor takes: its declared section (the run's time and
    shape, and the sbatch request), sweepgen.compile.spec.request.executor_resources."""
    return registry.resource_keys("slurm")


def resources_from_lock(lock: Lock, *, lock_path: str) -> SlurmResources:
    """Read and check the lock's top-level ``resources``; every problem names the key and the fix."""
    raw = lock.resources
    if raw is None:
        raise ConfigError(
            "the Slurm executor needs a `resources:` block (at least `time`)",
            location=_loc(lock_path),
            key="resources",
            hint='add e.g. `resources: {time: "02:00:00", cpus_per_run: 4}` to the spec and render again',
        )
    if not isinstance(raw, Mapping):
        raise _bad("resources", "must be a mapping", lock_path, "e.g. resources: {time: 60}")
    raw = {k: v for k, v in raw.items() if v is not None}  # the lock writes unset keys as null
    known = known_keys()
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise _bad(
            f"resources.{unknown[0]}",
            "is not a known resource",
            lock_path,
            f"known: {', '.join(known)}; other sbatch options go in resources.sbatch_extra",
        )
    if raw.get("time") is None:
        raise _bad(
            "resources.time",
            "is required for Slurm",
            lock_path,
            'give the time limit of one run, e.g. time: "04:00:00" (submitit would default to 5 minutes)',
        )
    time_min = parse_time(raw["time"], key="resources.time", lock_path=lock_path)
    partition = _partition(raw.get("partition"), lock_path)
    gpus_key = "gpus_per_node" if "gpus_per_node" in raw else "gpus_per_run"  # the resolved one first
    gpus = _count(raw.get(gpus_key, 0), f"resources.{gpus_key}", lock_path, minimum=0)
    cpus = _count(raw.get("cpus_per_run", 1), "resources.cpus_per_run", lock_path, minimum=1)
    mem = _mem(raw.get("mem"), lock_path)
    extra = _extra(raw.get("sbatch_extra"), lock_path)
    return SlurmResources(
        time_min=time_min,
        partition=partition,
        gpus_per_run=gpus,
        cpus_per_run=cpus,
        mem=mem,
        sbatch_extra=extra,
    )


def _count(value: Any, key: str, lock_path: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise _bad(
            key,
            f"must be a whole number ≥ {minimum}, got {value!r}",
            lock_path,
            f"e.g. {key.split('.')[-1]}: {max(minimum, 1)}",
        )
    return value


def _extra(value: Any, lock_path: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping):  # {account: rl} is accepted as ["--account=rl"]
        items = _as_flags(value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise _bad(
            "resources.sbatch_extra",
            "must be a list of sbatch options",
            lock_path,
            'e.g. sbatch_extra: ["--account=rl", "--qos=high"]',
        )
    return tuple(
        _checked_flag(item, f"resources.sbatch_extra[{i}]", lock_path) for i, item in enumerate(items)
    )


def _as_flags(value: Mapping[Any, Any]) -> list[str]:
    """{account: rl, exclusive: true} as ["--account=rl", "--exclusive"]."""
    items = []
    for k, v in value.items():
        flag = "--" + str(k).lstrip("-").replace("_", "-")
        items.append(flag if v is True else f"{flag}={v}")
    return items


def _checked_flag(item: Any, key: str, lock_path: str) -> str:
    """A long sbatch option as a #SBATCH line takes it, and none that sweepgen sets itself."""
    problem = slurm_request.flag_problem(item)
    if problem:
        raise _bad(key, problem[0], lock_path, problem[1])
    return str(item)
