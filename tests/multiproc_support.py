"""Helpers of the tests of multi-process runs on the real Slurm (test_slurm_multiproc.py on one
node, test_slurm_two_nodes.py on two): the probe command, the lock's shape, what the ranks left."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

PROBE = Path(__file__).resolve().parent / "fixtures" / "ddp_probe.py"
PROBE_COMMAND = f"{sys.executable} {PROBE} {{config}}"
WAIT_S = 240  # torch's import alone takes seconds per rank on a loaded machine


def shape(folder: Path, launcher: str, procs: int = 2, nodes: int = 1) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = {
        "time": 10,
        "nodes": nodes,
        "gpus_per_node": 0,
        "procs_per_node": procs,
        "launcher": launcher,
    }
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


def starts(run_dir: Path) -> list[dict]:
    path = run_dir / "ranks.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def expected_acc(world: int, steps: int) -> int:
    return world * (world + 1) // 2 * steps * (steps + 1) // 2


def processes_naming(text: str) -> list[int]:
    """Live processes whose command line mentions ``text`` (a run's config path)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(pid))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
