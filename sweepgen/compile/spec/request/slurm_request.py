"""What a Slurm request in ``resources:`` may hold: a partition name, a memory size, long sbatch
options that sweepgen does not set itself. Pure predicates, each answering the problem with a value
(None: none): the spec model checks them when the spec loads (so `check` refuses a request `run
--executor slurm` would), and the Slurm executor checks the lock's values with them again.
"""

from __future__ import annotations

import re
from typing import Any

_MEM = re.compile(r"^[1-9][0-9]*[KMGT]?$")
_FLAG = re.compile(r"^--[a-z][a-z0-9-]*(=.*)?$")

MEM_HINT = "write a number with an optional K/M/G/T suffix, e.g. 64G (a bare number is MB)"
PARTITION_HINT = "see `sinfo -s` for the partitions of your cluster"
FLAG_HINT = 'write it as sbatch takes it in a #SBATCH line, e.g. "--account=rl"'

# sbatch options sweepgen sets itself: asking for them through sbatch_extra would silently fight
# with what sweepgen writes (or break how it finds logs and job ids), so they are refused.
MANAGED_FLAGS = {
    "--partition": "resources.partition",
    "--time": "resources.time",
    "--mem": "resources.mem",
    "--cpus-per-task": "resources.cpus_per_run",
    "--gpus-per-node": "resources.gpus_per_node",
    "--gpus": "resources.gpus_per_node",
    "--gres": "resources.gpus_per_node",
    "--array": None,
    "--output": None,
    "--error": None,
    "--job-name": None,
    "--signal": None,
    "--open-mode": None,
    "--hold": None,
    "--nodes": "resources.nodes",
    "--ntasks": "resources.nodes and resources.procs_per_node",
    "--ntasks-per-node": "resources.procs_per_node",
    "--wckey": None,
    "--wrap": None,
}


def partition_problem(value: Any) -> str | None:
    """A partition name is one word."""
    if value is None or (isinstance(value, str) and value.strip() and not any(c.isspace() for c in value)):
        return None
    return f"must be a partition name, got {value!r}"


def mem_problem(value: Any) -> str | None:
    """A Slurm memory size (a bare number is megabytes, as sbatch reads it)."""
    if value is None or (isinstance(value, str) and _MEM.match(value)):
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return None
    return f"{value!r} is not a Slurm memory size"


def flag_problem(item: Any) -> tuple[str, str] | None:
    """(problem, hint) of one sbatch_extra item: a long option as a #SBATCH line takes it, and none
    that sweepgen sets itself."""
    if not isinstance(item, str) or not _FLAG.match(item) or "\n" in item:
        return f"{item!r} is not a long sbatch option", FLAG_HINT
    flag = item.split("=", 1)[0]
    if flag in MANAGED_FLAGS:
        where = MANAGED_FLAGS[flag]
        return f"{flag} is set by sweepgen", (
            f"use {where} instead" if where else "sweepgen manages this option for every run"
        )
    return None
