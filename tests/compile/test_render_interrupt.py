"""Ctrl-C during a parallel render: one line, no worker traceback, never a hang, every worker gone
and the sweep folder's lock free, nothing left behind. The signal goes to the whole process group,
as a terminal sends it, while the workers render (staged files appear)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from spec_support import HEAD, write_project

REPO = Path(__file__).resolve().parents[2]
N = 800
# tens of ms a file: the render stages for seconds, so a test process the machine leaves waiting for a
# while (CI runs two test workers on two cores) still finds it mid-render (at 1 ms a file it once
# found the render finished)
TEMPLATE = "{% for i in range(2) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{ config | to_yaml }}"


def _children(pid: int) -> set[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return set()
    return {int(p) for p in text.split()}


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait(ready, what: str, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"render ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _staged(sweep: Path) -> int:
    try:
        return sum(1 for name in os.listdir(sweep) if name.startswith(".staged"))
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("staged", [1, N // 8])
def test_ctrl_c_during_a_parallel_render_stops_cleanly(project: Path, staged: int) -> None:
    grid = "grid:\n  training.seed: [" + ", ".join(str(i) for i in range(N)) + "]\n"
    write_project(project, grid, head=HEAD, template=TEMPLATE)
    env = {**os.environ, "PYTHONPATH": str(REPO), "SWEEPGEN_WORKERS": "2"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "render", "specs/demo.yaml"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, which gets the signal as from a terminal
    )
    sweep = project / "generated" / "demo"
    workers: set[int] = set()

    def rendering() -> bool:
        workers.update(_children(proc.pid))
        return len(workers) >= 2 and _staged(sweep) >= staged

    try:
        _wait(rendering, f"{staged} staged file(s)", proc)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers):
        assert time.monotonic() < deadline, f"render workers outlived the render: {workers}"
        time.sleep(0.05)
    if sweep.exists():  # the lock is free: another render could start now
        fd = os.open(sweep, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        assert _staged(sweep) == 0
    assert not (project / "generated").exists() or not any(sweep.glob("*.yaml"))
