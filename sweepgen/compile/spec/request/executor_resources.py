"""Each executor's ``resources:`` section: the keys it takes, one pydantic model per executor name.

Every executor honours ``time`` and the run's shape (``RunResources``); an executor that takes more
(Slurm's request: partition, CPUs, memory, verbatim sbatch options) declares them in its own model
here, and ``EXECUTOR_RESOURCES`` names it beside the executor's line in sweepgen.run.core.registry
(a test holds the two name lists equal). The spec's ``resources:`` block is ``Resources``: every key
some executor takes, so a key none takes is refused when the spec loads, at its file:line:col with
the closest key, and so is a value no executor could take (``slurm_time``, ``slurm_request``). Which
executor runs the sweep is chosen later (``run --executor``); that executor reads its own keys from
the lock and checks them again (a lock can be edited).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from sweepgen.compile.spec.request import slurm_request, slurm_time

_T = TypeVar("_T")
Launcher = Literal["torchrun", "accelerate", "srun", "none"]


def _sbatch_option(item: str) -> str:
    problem = slurm_request.flag_problem(item)
    return _checked(*problem, item) if problem else item


def _checked(problem: str | None, hint: str, value: _T) -> _T:
    """``value``, or the spec error that says what is wrong with it and how to write it."""
    if problem:
        raise ValueError(f"{problem}: {hint}")
    return value


class RunResources(BaseModel):
    """What every executor honours: a run's time limit and its shape."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)
    gpus_per_run: StrictInt | None = Field(
        default=None, ge=0, description="GPUs of a one-node run (the older spelling of gpus_per_node)"
    )
    time: StrictStr | StrictInt | None = Field(
        default=None, description='"HH:MM:SS", "D-HH:MM:SS" or an int number of minutes'
    )
    nodes: StrictInt | None = Field(default=None, ge=1, description="nodes one run spans (default 1)")
    gpus_per_node: StrictInt | None = Field(
        default=None, ge=0, description="GPUs the run gets on each node (default 0)"
    )
    procs_per_node: StrictInt | None = Field(
        default=None,
        ge=1,
        description="processes the launcher starts on each node (default gpus_per_node, or 1 without GPUs)",
    )
    launcher: Launcher | None = Field(
        default=None,
        description="what starts the processes: torchrun, accelerate, srun, or none (the command "
        "starts its own; the default)",
    )

    @field_validator("time")
    @classmethod
    def _slurm_time(cls, value: str | int | None) -> str | int | None:
        """A time every executor reads as Slurm does, checked here so `check` refuses it, not `run`."""
        parsed = slurm_time.parse(value) if value is not None else None
        return _checked(*parsed, value) if isinstance(parsed, tuple) else value


class LocalResources(RunResources):
    """The local executor: time and shape only (it packs runs onto this machine's GPUs)."""


class SlurmResources(RunResources):
    """The Slurm executor: its sbatch request besides time and shape (sweepgen.run.slurm.resources)."""

    partition: StrictStr | None = Field(default=None, description="Slurm partition (sbatch --partition)")
    cpus_per_run: StrictInt | None = Field(default=None, ge=1, description="CPU cores each run gets")
    mem: StrictStr | None = Field(default=None, description='e.g. "8G"')
    sbatch_extra: list[Annotated[StrictStr, AfterValidator(_sbatch_option)]] = Field(
        default_factory=list, description="verbatim sbatch options, e.g. --qos=high"
    )

    @field_validator("partition")
    @classmethod
    def _partition(cls, value: str | None) -> str | None:
        return _checked(slurm_request.partition_problem(value), slurm_request.PARTITION_HINT, value)

    @field_validator("mem")
    @classmethod
    def _mem(cls, value: str | None) -> str | None:
        return _checked(slurm_request.mem_problem(value), slurm_request.MEM_HINT, value)


EXECUTOR_RESOURCES: dict[str, type[RunResources]] = {
    "local": LocalResources,
    "slurm": SlurmResources,
}


class Resources(LocalResources, SlurmResources):
    """Per-run resources: the Slurm request, and the run's shape for both executors."""


def keys_of(executor: str) -> tuple[str, ...]:
    """The ``resources:`` keys the executor called ``executor`` takes."""
    return tuple(EXECUTOR_RESOURCES[executor].model_fields)
