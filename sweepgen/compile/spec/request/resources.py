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
from typing import Any

from sweepgen.compile.spec.request.executor_resources import Launcher, Resources, RunResources
from sweepgen.compile.spec.request.shape_names import LAUNCHERS, SHAPE_KEYS
from sweepgen.errors import Location, SpecError
from sweepgen.formats import yamlio

__all__ = ["LAUNCHERS", "SHAPE_KEYS", "Launcher", "Resources", "RunResources", "check", "lock_block", "shape"]


def check(resources: RunResources | None, doc: yamlio.Doc) -> None:
    """Raise a SpecError at the offending key when the shape cannot be run as written."""
    if resources is None:
        return
    where = _where(doc)
    _check_gpus_per_run(resources, where)
    _check_procs(resources, where)


def _check_gpus_per_run(resources: RunResources, where: Callable[[str], Location]) -> None:
    """gpus_per_run, the older one-node spelling of gpus_per_node: not both, not on several nodes."""
    if resources.gpus_per_run is None:
        return
    if resources.gpus_per_node is not None:
        raise SpecError(
            "resources sets both gpus_per_run and gpus_per_node",
            location=where("gpus_per_run"),
            key="resources.gpus_per_run",
            hint="gpus_per_run is the older one-node spelling of gpus_per_node: keep only gpus_per_node",
        )
    if (resources.nodes or 1) > 1:
        raise SpecError(
            "gpus_per_run is for one-node runs; this run spans several nodes",
            location=where("gpus_per_run"),
            key="resources.gpus_per_run",
            hint="write gpus_per_node (the GPUs of each node) instead",
        )


def _check_procs(resources: RunResources, where: Callable[[str], Location]) -> None:
    """procs_per_node: started by a launcher, at most one process per GPU."""
    procs = resources.procs_per_node
    if procs is None:
        return
    gpus = _gpus(resources)
    if procs > 1 and (resources.launcher or "none") == "none":
        raise SpecError(
            f"procs_per_node is {procs} but no launcher starts the processes",
            location=where("procs_per_node"),
            key="resources.procs_per_node",
            hint="set resources.launcher to torchrun, accelerate or srun; with launcher none the "
            "command is started once per node and starts its own processes (drop procs_per_node)",
        )
    if gpus > 0 and procs > gpus:
        raise SpecError(
            f"procs_per_node ({procs}) is more than the GPUs of a node ({gpus})",
            location=where("procs_per_node"),
            key="resources.procs_per_node",
            hint="each process drives at least one GPU: lower procs_per_node or raise gpus_per_node",
        )


def shape(resources: RunResources) -> dict[str, Any]:
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


def lock_block(resources: RunResources | None) -> dict[str, Any] | None:
    """The lock's ``resources``: the keys as written, and the resolved shape when the spec names
    any shape key (absent otherwise, so older specs keep their lock bytes)."""
    if resources is None:
        return None
    block = resources.model_dump(exclude=set(SHAPE_KEYS))
    if any(getattr(resources, k) is not None for k in SHAPE_KEYS):
        block.update(shape(resources))
    return block


def _gpus(resources: RunResources) -> int:
    if resources.gpus_per_node is not None:
        return resources.gpus_per_node
    return resources.gpus_per_run or 0


def _where(doc: yamlio.Doc) -> Callable[[str], Location]:
    def at(key: str) -> Location:
        return doc.loc(("resources", key))

    return at
