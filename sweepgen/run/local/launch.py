"""How a local run of several processes is started: the launcher's command line around the run's.

``torchrun`` is ``python -m torch.distributed.run --standalone`` (a one-node rendezvous on a port
it picks itself, so two runs side by side never collide); ``accelerate`` is ``python -m
accelerate.commands.launch`` with ``--main_process_port 0`` (a free port). Both run the command as
written (``--no-python`` / ``--no_python``), so any command works: a Python module, a script, a
shell wrapper. The ``python`` is the command's own when it starts with a Python interpreter (where
torch is installed for it), else the one on PATH.

Only the launcher's process is the supervisor's child; the ranks it starts (in sessions of their
own) are found and ended through the supervisor's process tree (pgroup.end_group).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence

from sweepgen.errors import ConfigError, Location
from sweepgen.run.core.shape import RunShape

_PYTHON = re.compile(r"python[0-9.]*")
# ranks of one run on this machine: CPU ranks may share cores (a test of a DDP run on a laptop), but
# a spec is no reason to start a million processes (resources.procs_per_node: 1000000)
MAX_LOCAL_PROCS_PER_CPU = 4
MIN_LOCAL_PROCS_CEILING = 64


def local_procs_ceiling() -> int:
    return max(MIN_LOCAL_PROCS_CEILING, MAX_LOCAL_PROCS_PER_CPU * (os.cpu_count() or 1))


def check_local(shape: RunShape, lock_path: str) -> None:
    """Refuse a shape this machine cannot run (exit 2, naming the lock's key)."""
    if shape.launcher == "srun":
        raise ConfigError(
            "resources.launcher srun needs Slurm",
            location=Location(lock_path),
            key="resources.launcher",
            hint="run with --executor slurm, or set launcher to torchrun or accelerate for local runs",
        )
    if shape.nodes > 1:
        raise ConfigError(
            f"a run of {shape.nodes} nodes cannot run on one machine",
            location=Location(lock_path),
            key="resources.nodes",
            hint="run with --executor slurm, or set resources.nodes to 1 for local runs",
        )
    ceiling = local_procs_ceiling()
    if shape.procs_per_node > ceiling:
        raise ConfigError(
            f"a run of {shape.procs_per_node} processes would start them all on this machine "
            f"({os.cpu_count()} CPUs: at most {ceiling} ranks a run here)",
            location=Location(lock_path),
            key="resources.procs_per_node",
            hint="lower resources.procs_per_node, or run with --executor slurm",
        )


def python_of(argv: Sequence[str]) -> str:
    """The interpreter that runs the launcher: the command's own Python, else ``python`` on PATH."""
    first = argv[0]
    if _PYTHON.fullmatch(first.rsplit("/", 1)[-1]):
        return shutil.which(first) or first
    return shutil.which("python") or shutil.which("python3") or "python"


def _keeps_folder_off(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is a Python given ``-P`` (the bundled trainer's command): the working folder
    (a checkout's) is kept off its sys.path, and off its launcher's (a committed `torch/` would
    otherwise run in place of the installed one as `python -m torch.distributed.run` starts)."""
    if not _PYTHON.fullmatch(argv[0].rsplit("/", 1)[-1]):
        return False
    for word in argv[1:]:
        if word == "-P":
            return True
        if not word.startswith("-") or word in ("-m", "-c"):
            return False
    return False


def launched_argv(shape: RunShape, argv: Sequence[str]) -> list[str]:
    """The command line the supervisor starts: ``argv`` itself, or ``argv`` under the launcher."""
    n = str(shape.procs_per_node)
    python = [python_of(argv), *(["-P"] if _keeps_folder_off(argv) else [])]
    if shape.launcher == "torchrun":
        launcher = ["-m", "torch.distributed.run", "--standalone", "--nnodes", "1", "--nproc-per-node", n]
        return [*python, *launcher, "--no-python", "--", *argv]
    if shape.launcher == "accelerate":
        multi = ["--multi_gpu"] if shape.procs_per_node > 1 else []  # accelerate's word for DDP, CPU too
        launcher = [
            "-m",
            "accelerate.commands.launch",
            *multi,
            "--num_processes",
            n,
            "--num_machines",
            "1",
            "--main_process_port",
            "0",
        ]  # precision and the rest: the user's accelerate config, as `accelerate launch` reads it
        return [*python, *launcher, "--no_python", *argv]
    return list(argv)
