"""NVIDIA MPS for packed runs: start the control daemon for one sweep, stop it afterwards.

With several runs per GPU (``--per-gpu K``), MPS lets their kernels share the GPU at once instead of
time-slicing contexts. ``run --mps`` starts ``nvidia-cuda-mps-control -d`` with its own pipe and log
folders (so it never touches a daemon someone else runs), hands the children the matching
``CUDA_MPS_PIPE_DIRECTORY`` / ``CUDA_MPS_LOG_DIRECTORY``, and sends ``quit`` when the sweep ends,
whatever way it ends. A machine without MPS is an error before any run starts, never a silent
fallback to time-slicing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sweepgen.errors import UserError

CONTROL = "nvidia-cuda-mps-control"
START_TIMEOUT_S = 30.0


@dataclass
class _MpsSession:
    env: dict[str, str]  # what each child's environment needs to reach this daemon
    warnings: list[str] = field(default_factory=list)  # filled on the way out, for the CLI to show


@contextmanager
def mps_daemon(gpus: list[str]) -> Iterator[_MpsSession]:
    """Run an MPS control daemon for ``gpus`` while the block runs."""
    if not gpus:
        raise UserError("--mps needs --gpus", hint="name the GPUs the packed runs share, e.g. --gpus 0")
    control = _control()
    root = Path(tempfile.mkdtemp(prefix="sweepgen-mps-"))
    env = {
        "CUDA_MPS_PIPE_DIRECTORY": str(root / "pipe"),
        "CUDA_MPS_LOG_DIRECTORY": str(root / "log"),
    }
    for folder in env.values():
        os.mkdir(folder)
    daemon_env = {**os.environ, **env, "CUDA_VISIBLE_DEVICES": ",".join(gpus)}
    _start(control, daemon_env, root)
    session = _MpsSession(env)
    try:
        yield session
    finally:
        problem = _quit(control, daemon_env)
        if problem is None:
            shutil.rmtree(root, ignore_errors=True)
        else:  # keep the pipe folder: it is the only way to reach the daemon to stop it
            session.warnings.append(
                f"the MPS daemon did not stop ({problem}); stop it with `echo quit | "
                f"CUDA_MPS_PIPE_DIRECTORY={env['CUDA_MPS_PIPE_DIRECTORY']} {CONTROL}`"
            )


def _control() -> str:
    """The MPS control program's path; exit 2 when it is not on PATH."""
    control = shutil.which(CONTROL)
    if control is None:
        raise UserError(
            f"--mps: `{CONTROL}` is not on PATH, so MPS cannot start",
            hint="install the NVIDIA driver's MPS tools (or run without --mps: packed runs then time-slice)",
        )
    return control


def _start(control: str, daemon_env: dict[str, str], root: Path) -> None:
    """Start the daemon (``-d`` returns once it runs); when it does not start, its folder ``root``
    goes (nothing uses it) and the reason is a UserError."""
    try:
        started = subprocess.run(
            [control, "-d"], env=daemon_env, capture_output=True, text=True, timeout=START_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        shutil.rmtree(root, ignore_errors=True)
        raise UserError(f"--mps: `{CONTROL} -d` failed: {err}", hint="check the driver and GPU") from None
    if started.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        detail = (started.stderr or started.stdout).strip()
        raise UserError(
            f"--mps: `{CONTROL} -d` exited {started.returncode}" + (f": {detail}" if detail else ""),
            hint=f"see the daemon log in a manual start: CUDA_MPS_LOG_DIRECTORY=... {CONTROL} -d",
        )


def _quit(control: str, env: dict[str, str]) -> str | None:
    """Ask the daemon to quit; None when it did, else what went wrong."""
    # "quit" waits for the clients to detach; the runs have ended (or been stopped) by now.
    try:
        done = subprocess.run(
            [control], input="quit\n", env=env, capture_output=True, text=True, timeout=START_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return str(err)
    return None if done.returncode == 0 else f"`quit` exited {done.returncode}"
