"""A real single-node Slurm (with slurmdbd + MariaDB, so sacct works) for the tests marked ``slurm``.

tests/conftest.py registers this module as a plugin, so a test asks for the fixture by name. It is
session-scoped: the first Slurm test starts the cluster with ci/slurm/slurm_up.sh (installing the
Debian packages if they are missing) and the session's end stops it with ci/slurm/slurm_down.sh,
which signals only the daemons and job processes of this cluster, by PID. A cluster that was
already running from the same directory (a developer's) is reused and left running.

``slurm_cluster_2n`` is a second cluster of two compute nodes on this machine (slurm_up.sh with
SLURM_CI_NODES=2: two slurmd, each its own port), in its own directory and ports, for the tests of
runs that span nodes; it is module-scoped, and points SLURM_CONF at itself only while its module
runs. It has no accounting (no second MariaDB): sweepgen then follows jobs through squeue.

Skips only when this machine cannot run the daemons (not Linux, not root, or Slurm missing with no
apt-get to install it), and says why. With the environment variable CI set, even that fails: CI
must run these tests. A start that fails on a machine that could run Slurm always fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UP, DOWN = ROOT / "ci" / "slurm" / "slurm_up.sh", ROOT / "ci" / "slurm" / "slurm_down.sh"
CLUSTER_DIR = Path(os.environ.get("SWEEPGEN_SLURM_DIR", "/tmp/sweepgen-slurm-ci"))
CLUSTER_2N_DIR = Path(os.environ.get("SWEEPGEN_SLURM_2N_DIR", "/tmp/sweepgen-slurm-ci-2n"))
TWO_NODES = {
    "SLURM_CI_NODES": "2",
    "SLURM_CI_ACCOUNTING": "0",
    "SLURM_CI_PORT_BASE": os.environ.get("SWEEPGEN_SLURM_2N_PORT_BASE", "6917"),
}
DAEMONS = ("slurmctld", "slurmd", "slurmdbd", "munged", "mariadbd")
START_TIMEOUT_S = 900  # a first start installs packages
LOCK_TIMEOUT_S = 1200  # how long to wait for another session's Slurm tests to end
_ACTIVE: list[dict[str, str]] = []  # the environment of the cluster this session holds, if any


def cannot_run_reason() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the Slurm daemons need Linux"
    if os.geteuid() != 0:
        return "not root: ci/slurm/slurm_up.sh starts the Slurm daemons (and apt-get) as root"
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
    missing = [d for d in DAEMONS if shutil.which(d, path=path) is None]
    if missing and shutil.which("apt-get") is None:
        return f"Slurm is not installed ({', '.join(missing)} missing) and there is no apt-get to install it"
    return None


def _skip_unless_runnable() -> None:
    reason = cannot_run_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set, so the Slurm tests must run, but {reason}")
        pytest.skip(f"no Slurm: {reason}")


@pytest.fixture(scope="module")
def slurm_cluster_2n():
    """Two compute nodes (n1, n2) on this machine; SLURM_CONF points at them while the module runs."""
    _skip_unless_runnable()
    lock = _session_lock(CLUSTER_2N_DIR)
    try:
        env, reused = _start(CLUSTER_2N_DIR, TWO_NODES)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            if not reused:
                _stop(CLUSTER_2N_DIR)
    finally:
        lock.close()


@pytest.fixture(scope="session")
def slurm_cluster():
    _skip_unless_runnable()
    if _ACTIVE:
        # each test module that imports this fixture gets its own session-scoped instance; the
        # first one owns the cluster and the lock, the others share it (re-locking would deadlock)
        yield _ACTIVE[-1]
        return
    lock = _session_lock(CLUSTER_DIR)
    try:
        env, reused = _start(CLUSTER_DIR)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)  # sbatch/squeue/sacct in the tests and in sweepgen read SLURM_CONF
        _ACTIVE.append(env)
        try:
            yield env
        finally:
            _ACTIVE.pop()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            if not reused:
                _stop(CLUSTER_DIR)
    finally:
        lock.close()


def _stop(folder: Path) -> None:
    down = subprocess.run(["bash", str(DOWN), str(folder)], capture_output=True, text=True, timeout=300)
    if down.returncode != 0:
        raise RuntimeError(f"slurm_down.sh could not stop the test cluster:\n{down.stderr[-2000:]}")


def _start(folder: Path, knobs: dict[str, str] | None = None) -> tuple[dict[str, str], bool]:
    """slurm_up.sh; its exports, and whether it reused a cluster that was already running."""
    proc = subprocess.run(
        ["bash", str(UP), str(folder)],
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
        env={**os.environ, **(knobs or {})},
    )
    if proc.returncode != 0:
        pytest.fail(f"ci/slurm/slurm_up.sh {folder} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    env = dict(
        line.removeprefix("export ").split("=", 1)
        for line in proc.stdout.splitlines()
        if line.startswith("export ") and "=" in line
    )
    if "SLURM_CONF" not in env:
        pytest.fail(f"slurm_up.sh printed no SLURM_CONF:\n{proc.stdout}\n{proc.stderr[-2000:]}")
    return env, "reusing it" in proc.stderr


def _session_lock(folder: Path):
    """One test session at a time per cluster directory: a second session (another checkout's tests
    on the same machine) would otherwise restart the cluster under the first one, or stop it."""
    import fcntl
    import time

    folder.parent.mkdir(parents=True, exist_ok=True)
    handle = open(f"{folder}.lock", "w")  # noqa: SIM115 - held for the session
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.close()
                pytest.fail(
                    f"another test session has held {folder}.lock for {LOCK_TIMEOUT_S} s; "
                    "set SWEEPGEN_SLURM_DIR and SLURM_CI_PORT_BASE to run a second cluster"
                )
            time.sleep(1)
