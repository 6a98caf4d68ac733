"""How a multi-process run starts inside its Slurm job: who supervises, the rendezvous, the argv.

A run of ``nodes`` × ``procs_per_node`` processes (sweepgen.run.core.shape) is one Slurm job whose
header asks for ``--nodes``, ``--ntasks-per-node`` and ``--gpus-per-node``. What the job step runs
depends on the launcher:

- ``torchrun``, ``accelerate``, ``none``: one *participant* per node (the step is ``srun
  --ntasks-per-node=1``, each task given every CPU its node holds); it starts the launcher, which
  starts ``procs_per_node`` processes there (``none``: the command itself, once per node).
- ``srun``: Slurm itself starts ``procs_per_node`` tasks per node; each participant runs the
  command as one rank, with RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT from Slurm's vars.

Every rank agrees on the rendezvous because each derives it from the same job data: the master
address is the first host of ``$SLURM_JOB_NODELIST`` (its NodeAddr), the port is derived from
``$SLURM_JOB_ID`` (so two runs sharing a node never pick the same one), the node rank is
``$SLURM_NODEID``. Only the *supervisor* (node 0's participant; for ``srun``, rank 0) holds the
run's lock and writes its status: the status is written once per attempt, whatever the world size.

Pure functions of the shape and the environment, so ``--dry-run`` shows the same argv (with the
variables unresolved) that the node runs, and the unit tests need no cluster.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sweepgen.run.core.shape import RunShape

PORT_BASE = 20000  # the rendezvous port is PORT_BASE + job id mod PORT_SPAN: above the usual
PORT_SPAN = 20000  # services, below Linux's ephemeral range (32768+ overlaps only at the top)
SCONTROL_TIMEOUT_S = 30


@dataclass(frozen=True)
class Rendezvous:
    """Where every rank meets. Strings, so the dry run can show the expressions instead."""

    master_addr: str
    master_port: str
    node_rank: str


@dataclass(frozen=True)
class Participant:
    """This task of the job step: which node, which rank, and whether it supervises the run."""

    node_rank: int
    rank: int  # SLURM_PROCID: the task's rank in the step (the node's rank for per-node launchers)
    local_rank: int
    supervisor: bool

    @property
    def label(self) -> str:
        """Names this participant's log and notes: ``node1``, or ``rank3`` under srun."""
        return f"node{self.node_rank}" if self.rank == self.node_rank else f"rank{self.rank}"


def multi(shape: RunShape | None) -> bool:
    """True when the run is more than the one process per job that runs always were."""
    return shape is not None and (shape.nodes > 1 or shape.launched)


def forwarded(signum: int, shape: RunShape | None) -> int:
    """The signal passed on to the run's process group for one Slurm sent. torchrun and accelerate
    die of SIGUSR2 (its default action) without telling their workers, so under them the time
    limit's warning is passed on as SIGTERM, which they forward to every worker."""
    wrapped = shape is not None and shape.launcher in ("torchrun", "accelerate")
    return signal.SIGTERM if wrapped and signum == signal.SIGUSR2 else signum


def port_for(job_id: int) -> int:
    return PORT_BASE + job_id % PORT_SPAN


def participant(shape: RunShape, env: Mapping[str, str]) -> Participant:
    node = int(env.get("SLURM_NODEID", "0"))
    rank = int(env.get("SLURM_PROCID", "0"))
    local = int(env.get("SLURM_LOCALID", "0"))
    if shape.launcher == "srun":
        return Participant(node_rank=node, rank=rank, local_rank=local, supervisor=rank == 0)
    return Participant(node_rank=node, rank=node, local_rank=0, supervisor=node == 0)


def step_srun_args(shape: RunShape, cpus_per_proc: int) -> list[str]:
    """Extra ``srun`` options of the job step: one task per node, holding the node's CPUs, unless
    srun is the launcher (then the step's tasks are the ranks, as the header asks)."""
    if not multi(shape) or shape.launcher == "srun":
        return []
    return [
        f"--nodes={shape.nodes}",
        f"--ntasks={shape.nodes}",
        "--ntasks-per-node=1",
        f"--cpus-per-task={cpus_per_proc * shape.procs_per_node}",
    ]


def argv_for(
    shape: RunShape, argv: Sequence[str], rdzv: Rendezvous, launcher_cmd: Sequence[str]
) -> list[str]:
    """What one participant runs: the command under the launcher, told the shape and rendezvous."""
    n, p = shape.nodes, shape.procs_per_node
    if shape.launcher == "torchrun":
        return [
            *launcher_cmd,
            f"--nnodes={n}",
            f"--nproc-per-node={p}",
            f"--node-rank={rdzv.node_rank}",
            f"--master-addr={rdzv.master_addr}",
            f"--master-port={rdzv.master_port}",
            "--no-python",  # the command is a full argv (python ... or any executable)
            *argv,
        ]
    if shape.launcher == "accelerate":
        # --multi_gpu is accelerate's torch.distributed launcher, the only one that starts several
        # processes without MPI, GPUs or not (--cpu alone runs one process); --cpu for one process
        # without GPUs
        mode = ["--multi_gpu"] if n * p > 1 else ([] if shape.gpus_per_node else ["--cpu"])
        return [
            *launcher_cmd,
            f"--num_machines={n}",
            f"--num_processes={n * p}",
            f"--machine_rank={rdzv.node_rank}",
            f"--main_process_ip={rdzv.master_addr}",
            f"--main_process_port={rdzv.master_port}",
            *mode,
            "--no_python",
            *argv,
        ]
    return list(argv)  # srun (Slurm started the ranks) and none (the command starts its own)


def env_for(shape: RunShape, rdzv: Rendezvous, env: Mapping[str, str]) -> dict[str, str]:
    """The rendezvous in the environment every launcher's processes read; under srun also each
    rank's identity, which torch.distributed's ``env://`` init takes."""
    out = {
        "MASTER_ADDR": rdzv.master_addr,
        "MASTER_PORT": rdzv.master_port,
        "NNODES": str(shape.nodes),
        "NODE_RANK": rdzv.node_rank,
    }
    if shape.launcher == "srun":
        out.update(
            RANK=env.get("SLURM_PROCID", "0"),
            WORLD_SIZE=env.get("SLURM_NTASKS", str(shape.world_size)),
            LOCAL_RANK=env.get("SLURM_LOCALID", "0"),
            LOCAL_WORLD_SIZE=str(shape.procs_per_node),
        )
    return out


def rendezvous(env: Mapping[str, str]) -> Rendezvous:
    """The job's rendezvous, on the node: the first node's address, the port from the job id."""
    job_id = env.get("SLURM_JOB_ID")
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not job_id or not job_id.isdigit() or not nodelist:
        raise RuntimeError("not inside a Slurm job: SLURM_JOB_ID or SLURM_JOB_NODELIST is missing")
    return Rendezvous(
        master_addr=node_address(first_host(nodelist)),
        master_port=str(port_for(int(job_id))),
        node_rank=env.get("SLURM_NODEID", "0"),
    )


def symbolic_rendezvous() -> Rendezvous:
    """The same rendezvous as the dry run shows it: resolved only inside the job."""
    return Rendezvous(
        master_addr="<first host of $SLURM_JOB_NODELIST>",
        master_port=f"<{PORT_BASE} + $SLURM_JOB_ID % {PORT_SPAN}>",
        node_rank="$SLURM_NODEID",
    )


def first_host(nodelist: str) -> str:
    """``scontrol show hostnames`` expands Slurm's host list (``n[01-04],gpu7``); the first is the
    master. Asked of Slurm rather than parsed here: its list syntax has more forms than it seems."""
    out = subprocess.run(
        ["scontrol", "show", "hostnames", nodelist],
        capture_output=True,
        text=True,
        timeout=SCONTROL_TIMEOUT_S,
        check=True,
    ).stdout.split()
    if not out:
        raise RuntimeError(f"`scontrol show hostnames {nodelist}` named no host")
    return out[0]


def node_address(name: str) -> str:
    """The node's NodeAddr (what its NodeName resolves to in slurm.conf; the name when unset):
    a NodeName need not be a resolvable host name (several slurmd on one machine, cloud nodes)."""
    proc = subprocess.run(
        ["scontrol", "show", "node", "-o", name],
        capture_output=True,
        text=True,
        timeout=SCONTROL_TIMEOUT_S,
    )
    match = re.search(r"\bNodeAddr=(\S+)", proc.stdout)
    return match.group(1) if proc.returncode == 0 and match else name


def launcher_command(launcher: str) -> list[str]:
    """The launcher's own argv on the node: the one on PATH (what the user would type), else the
    one installed beside the python that runs sweepgen. Empty for srun and none (nothing wraps)."""
    if launcher == "torchrun":
        return [_which("torchrun")]
    if launcher == "accelerate":
        return [_which("accelerate"), "launch"]
    return []


def shown_launcher(launcher: str) -> list[str]:
    return {"torchrun": ["torchrun"], "accelerate": ["accelerate", "launch"]}.get(launcher, [])


def _which(tool: str) -> str:
    found = shutil.which(tool)
    if found:
        return found
    beside = Path(sys.executable).parent / tool
    if beside.is_file():
        return str(beside)
    raise FileNotFoundError(
        f"{tool} is not on PATH on this node, nor beside {sys.executable}; install it in the run's "
        "environment (resources.launcher names it)"
    )
