"""The spec's ``resources:`` block: what one run asks for, and the shape of a multi-process run.

A run's shape is ``nodes`` × ``procs_per_node`` processes started by a ``launcher`` (torchrun,
accelerate, srun, or none: the command starts its own processes, as before), with
``gpus_per_node`` GPUs on each node. ``gpus_per_run`` is the older one-node spelling of
``gpus_per_node``: it stays valid alone, and writing both is an error, as two numbers for one
thing would leave the reader guessing which one counts.

Everything is checked when the spec loads (``check``, ``render``, ``run``), each error at the key's
``file:line:col``; the lock records the resolved shape (defaults filled in) so the executors read
one answer and never re-derive it. A spec that names none of the shape keys gets a lock without
them (byte-identical to locks written before they existed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from sweepgen import yamlio
from sweepgen.compile.spec.shape_names import LAUNCHERS, SHAPE_KEYS
from sweepgen.errors import Location, SpecError

__all__ = ["LAUNCHERS", "SHAPE_KEYS", "Launcher", "Resources", "check", "lock_block", "shape"]

Launcher = Literal["torchrun", "accelerate", "srun", "none"]


class Resources(BaseModel):
    """Per-run resources: the Slurm request, and the run's shape for both executors."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)
    partition: StrictStr | None = Field(default=None, description="Slurm partition (sbatch --partition)")
    gpus_per_run: StrictInt | None = Field(
        default=None, ge=0, description="GPUs of a one-node run (the older spelling of gpus_per_node)"
    )
    cpus_per_run: StrictInt | None = Field(default=None, ge=1, description="CPU cores each run gets")
    mem: StrictStr | None = Field(default=None, pattern=r"^[0-9]+[KMGT]?$", description='e.g. "8G"')
    time: StrictStr | StrictInt | None = Field(
        default=None, description='"HH:MM:SS", "D-HH:MM:SS" or an int number of minutes'
    )
    sbatch_extra: list[StrictStr] = Field(
        default_factory=list, description="verbatim sbatch options, e.g. --qos=high"
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


def check(resources: Resources | None, doc: yamlio.Doc) -> None:
    """Raise a SpecError at the offending key when the shape cannot be run as written."""
    if resources is None:
        return
    where = _where(doc)
    if resources.gpus_per_run is not None and resources.gpus_per_node is not None:
        raise SpecError(
            "resources sets both gpus_per_run and gpus_per_node",
            location=where("gpus_per_run"),
            key="resources.gpus_per_run",
            hint="gpus_per_run is the older one-node spelling of gpus_per_node: keep only gpus_per_node",
        )
    if resources.gpus_per_run is not None and (resources.nodes or 1) > 1:
        raise SpecError(
            "gpus_per_run is for one-node runs; this run spans several nodes",
            location=where("gpus_per_run"),
            key="resources.gpus_per_run",
            hint="write gpus_per_node (the GPUs of each node) instead",
        )
    launcher = resources.launcher or "none"
    gpus = _gpus(resources)
    procs = resources.procs_per_node
    if procs is not None and procs > 1 and launcher == "none":
        raise SpecError(
            f"procs_per_node is {procs} but no launcher starts the processes",
            location=where("procs_per_node"),
            key="resources.procs_per_node",
            hint="set resources.launcher to torchrun, accelerate or srun; with launcher none the "
            "command is started once per node and starts its own processes (drop procs_per_node)",
        )
    if procs is not None and gpus > 0 and procs > gpus:
        raise SpecError(
            f"procs_per_node ({procs}) is more than the GPUs of a node ({gpus})",
            location=where("procs_per_node"),
            key="resources.procs_per_node",
            hint="each process drives at least one GPU: lower procs_per_node or raise gpus_per_node",
        )


def shape(resources: Resources) -> dict[str, Any]:
    """The resolved shape: every default filled in, as the lock records it."""
    launcher = resources.launcher or "none"
    gpus = _gpus(resources)
    if launcher == "none":
        procs = 1  # sweepgen starts the command once per node; it starts its own processes
    else:
        procs = resources.procs_per_node or max(gpus, 1)
    return {
        "nodes": resources.nodes or 1,
        "gpus_per_node": gpus,
        "procs_per_node": procs,
        "launcher": launcher,
    }


def lock_block(resources: Resources | None) -> dict[str, Any] | None:
    """The lock's ``resources``: the keys as written, and the resolved shape when the spec names
    any shape key (absent otherwise, so older specs keep their lock bytes)."""
    if resources is None:
        return None
    block = resources.model_dump(exclude=set(SHAPE_KEYS))
    if any(getattr(resources, k) is not None for k in SHAPE_KEYS):
        block.update(shape(resources))
    return block


def _gpus(resources: Resources) -> int:
    if resources.gpus_per_node is not None:
        return resources.gpus_per_node
    return resources.gpus_per_run or 0


def _where(doc: yamlio.Doc) -> Callable[[str], Location]:
    def at(key: str) -> Location:
        return doc.loc(("resources", key))

    return at
