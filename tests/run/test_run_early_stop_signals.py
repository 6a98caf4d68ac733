"""SIGTERM or SIGHUP reaching `sweepgen run` before its loops install their handlers (while it loads
the CLI, reads the sweep, plans, records its command line) ends it as Ctrl-C there would: exit 130,
"interrupted" (or click's "aborted") said, nothing left running, nothing started twice. Before,
Python's default action killed it (-15 / -1: 143 / 129 to a shell), with nothing said.

The moments are states of the real process, never sleeps: the first moment it catches SIGTERM
(/proc/PID/status SigCgt), the CPU time it has used (utime + stime in /proc/PID/stat: how far
through its loading it got, whatever the machine's load), and its recorded command line written.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from run_support import LOADED_S, WAITER, make_sweep, output_of
from search_support import REPO, sweepgen

from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads process states from /proc"
)

RUNS = ("r0", "r1")


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _catches_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


def _cpu_at_least(ticks: int) -> Callable[[int, Path], bool]:
    """``ticks`` of CPU spent, or every run started already: a run that needs fewer ticks to reach
    its runs (modules compiled, a quiet machine) is then signalled while they run."""
    return lambda pid, root: (
        _cpu_ticks(pid) >= ticks or all(_starts(root / "runs" / "fake" / r) for r in RUNS)
    )


MOMENTS: dict[str, Callable[[int, Path], bool]] = {
    "catches SIGTERM": lambda pid, root: _catches_sigterm(pid),
    # (starting Python and sweepgen's package takes ~10 ticks here; reading the sweep and planning
    # ~70 more, compiling modules included: the machines write no bytecode)
    "20 ticks of CPU": _cpu_at_least(20),
    "40 ticks of CPU": _cpu_at_least(40),
    "60 ticks of CPU": _cpu_at_least(60),
    "command line recorded": lambda pid, root: (root / "generated" / "fake" / ".sweepgen-run.json").exists(),
}


def _sweepgen_run(root: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """`sweepgen run generated/fake ARGS` (after ``prefix``, e.g. nohup), SIGHUP at its default action
    as in a terminal's job, even where these tests run under nohup."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "sweepgen", "run", "generated/fake", *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )


def _signalled_while_stopped(proc: subprocess.Popen[str], sig: int, state_file: Path) -> bool:
    """Send ``sig`` while the process is held stopped (SIGSTOP, then SIGCONT), so what it had done
    when the signal came is known however late this test is scheduled; whether it had recorded
    its command line by then."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + LOADED_S
        while _process_state(proc.pid) not in ("T", "t", None):
            assert time.monotonic() < deadline, "never stopped"
            time.sleep(0.002)
        recorded = state_file.exists()
        proc.send_signal(sig)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    return recorded


def _process_state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def _starts(run: Path) -> int:
    path = run / "starts.txt"
    return len(path.read_text().splitlines()) if path.is_file() else 0


def _wait_for(proc: subprocess.Popen[str], root: Path, moment: Callable[[int, Path], bool]) -> None:
    deadline = time.monotonic() + LOADED_S
    while True:
        try:
            if moment(proc.pid, root):
                return
        except OSError:  # it exited: said by the assertion below
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            out, err = output_of(proc)  # never wait on a run that waits for its release
            raise AssertionError(f"the moment never came (exit {proc.returncode})\n{out}{err}")
        time.sleep(0.002)


@pytest.mark.parametrize(
    ("moment", "sig"),
    [(m, signal.SIGTERM if i % 2 == 0 else signal.SIGHUP) for i, m in enumerate(MOMENTS)],
    ids=[f"{m}-{'TERM' if i % 2 == 0 else 'HUP'}" for i, m in enumerate(MOMENTS)],
)
def test_a_stop_signal_before_run_installs_its_handlers_is_an_interrupt(tmp_path, moment, sig):
    release = tmp_path / "release"
    make_sweep(tmp_path, {name: {"release": str(release)} for name in RUNS})
    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    proc = _sweepgen_run(tmp_path, "--command", command, "--jobs", "2")
    try:
        _wait_for(proc, tmp_path, MOMENTS[moment])
        recorded = _signalled_while_stopped(proc, sig, tmp_path / "generated" / "fake" / ".sweepgen-run.json")
        out, err = proc.communicate(timeout=LOADED_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, (proc.returncode, out, err)
    # said as Ctrl-C is said there: "aborted" (click's word) while the command line is read,
    # "interrupted" from the command on
    assert ("interrupted" in err or "aborted" in err) and "Traceback" not in err, out + err
    runs = [tmp_path / "runs" / "fake" / name for name in RUNS]
    before = [_starts(run) for run in runs]
    if not recorded:  # signalled before it recorded its command line, which it does before any start
        assert before == [0, 0], before
    for run, starts in zip(runs, before):
        assert starts <= 1 and not (run.is_dir() and runlock.is_held(run)), run
        status = read_status(run) if run.is_dir() else None
        if starts:  # started before the signal: stopped and recorded as an interrupted run is
            assert status is not None and status.state is RunState.CANCELLED, status
    # the sweep goes on from there: each run started once more, never two at once
    release.touch()
    again = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed")
    assert again.returncode == 0, again.stdout + again.stderr
    assert [_starts(run) for run in runs] == [n + 1 for n in before]
    for run in runs:
        status = read_status(run)
        assert status is not None and status.state is RunState.FINISHED, status


def test_another_command_stopped_while_the_cli_loads_still_ends_by_the_signal(tmp_path):
    """Only `run` turns the signals into an interrupt: `status` ends by SIGTERM as it always did,
    also when the signal came while the CLI loaded (it is delivered again, not swallowed)."""
    make_sweep(tmp_path, {"r0": {"release": str(tmp_path / "release")}})
    proc = sweepgen(tmp_path, "status", "generated/fake", wait=False)
    _wait_for(proc, tmp_path, MOMENTS["catches SIGTERM"])
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=LOADED_S)
    assert proc.returncode == -signal.SIGTERM


def test_the_signals_are_deferred_only_when_sweepgen_is_the_program():
    """A library caller (this test runner) importing the CLI keeps its own SIGTERM handling."""
    import sweepgen.cli

    assert signal.getsignal(signal.SIGTERM) is not sweepgen.run.core.stopping.stop_signals._remember


def _pending(pid: int, sig: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) >> (sig - 1) & 1:
            return True
    return False


@pytest.mark.skipif(shutil.which("nohup") is None, reason="needs nohup")
def test_under_nohup_a_closed_terminal_stops_nothing(tmp_path):
    """`nohup sweepgen run` starts with SIGHUP ignored, which the user asked for so that the sweep
    outlives the terminal: a SIGHUP then, at its start or while runs train, stops nothing."""
    release = tmp_path / "release"
    make_sweep(tmp_path, {"r0": {"release": str(release)}})
    script = tmp_path / "waiter.py"
    script.write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"
    proc = _sweepgen_run(tmp_path, "--command", command, prefix=("nohup",))
    run = tmp_path / "runs" / "fake" / "r0"
    try:
        # loading, or the run started already (it needs fewer ticks on a quiet machine: waiting for
        # 20 ticks then took the idle polling ~40 s)
        _wait_for(proc, tmp_path, lambda pid, root: _cpu_ticks(pid) >= 20 or _starts(run) == 1)
        proc.send_signal(signal.SIGHUP)
        _wait_for(proc, tmp_path, lambda pid, root: _starts(run) == 1)  # training
        proc.send_signal(signal.SIGHUP)
        _wait_for(proc, tmp_path, lambda pid, root: not _pending(pid, signal.SIGHUP))
        release.touch()
        out, err = proc.communicate(timeout=LOADED_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, (proc.returncode, out, err)
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    assert _starts(run) == 1
