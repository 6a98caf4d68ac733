"""`sweepgen cancel` itself SIGKILLed mid-way: after it asked a run's supervisor to stop (the reason
on file, the signal sent), before it saw the end recorded. The supervisor records the cancel on its
own; `status`, a second `cancel`, a plain `run` and `--rerun-failed` then say and do what is true:
nothing starts twice, and the cancelled run starts again only when asked.

The kill lands at a known point: `cancel` runs through a wrapper that replaces the one function
at the window by itself and then a SIGKILL of its own process (never a sleep).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner
from run_support import FAKE_COMMAND, LOADED_S, make_sweep

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, read_status

_KILLED_AFTER_ASKING = (
    "import os, signal, sys\n"
    "from sweepgen.run.local import liveness\n"
    "real = liveness.request_stop\n"
    "def patched(*args, **kwargs):\n"
    "    out = real(*args, **kwargs)\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "    return out\n"
    "liveness.request_stop = patched\n"
    "from sweepgen.cli import main\n"
    "main(sys.argv[1:], prog_name='sweepgen')\n"
)


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "OMP_NUM_THREADS": "1"}


def _sweepgen(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sweepgen", *args]
    return subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=LOADED_S)


def _starts(run: Path) -> int:
    return len((run / "starts.jsonl").read_text().splitlines())


def test_a_cancel_killed_after_asking_the_supervisor_leaves_the_run_cancelled_and_started_once(
    tmp_path, monkeypatch
):
    hold = tmp_path / "hold"
    hold.touch()
    make_sweep(tmp_path, {"r0": {"steps": 1, "hold_file": str(hold)}})
    run_dir = tmp_path / "runs/fake/r0"
    argv = [sys.executable, "-m", "sweepgen", "run", "generated/fake", "--command", FAKE_COMMAND]
    running = subprocess.Popen(
        argv, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + LOADED_S
        while not (run_dir / "metrics.jsonl").exists():  # its one step done: it holds on `hold`
            assert time.monotonic() < deadline and running.poll() is None, "r0 never started"
            time.sleep(0.05)
        cancel = [sys.executable, "-c", _KILLED_AFTER_ASKING, "cancel", "generated/fake"]
        killed = subprocess.run(
            cancel, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=LOADED_S
        )
        assert killed.returncode == -9, killed.stdout + killed.stderr  # killed in the window, as meant
        out, err = running.communicate(timeout=LOADED_S)
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
    # the `run` that started it: its run was cancelled (exit 1), said so
    assert running.returncode == 1 and "Traceback" not in err, out + err
    assert "r0: cancelled" in out, out
    status = read_status(run_dir)
    assert status is not None and status.state is RunState.CANCELLED, status
    assert "sweepgen cancel" in (status.reason or ""), status
    monkeypatch.chdir(tmp_path)  # `status` and the second `cancel` in this process: cheaper
    shown = CliRunner().invoke(main, ["status", "generated/fake", "--format", "json"])
    (row,) = json.loads(shown.stdout)
    assert row["state"] == "CANCELLED" and shown.exit_code == 1, shown.output
    again = CliRunner().invoke(main, ["cancel", "generated/fake"])
    assert again.exit_code == 0 and again.exception is None, again.output
    assert read_status(run_dir) == status  # nothing left to cancel: the end stands as recorded
    plain = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    assert "Traceback" not in plain.stderr and _starts(run_dir) == 1, plain.stdout + plain.stderr
    hold.unlink()
    rerun = _sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--rerun-failed")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert _starts(run_dir) == 2 and read_status(run_dir).state is RunState.FINISHED


def test_a_cancel_of_a_run_whose_sweepgen_run_is_stopped_returns_once_the_end_is_recorded(
    tmp_path, monkeypatch
):
    """The `sweepgen run` that started the run is stopped (Ctrl-Z, SIGSTOP) and holds its copy of
    the run's lock; `cancel` stops the run, whose supervisor records the cancel and exits. `cancel`
    returns then, exit 0, the run cancelled (before: it waited for the lock the stopped `run` held,
    then failed, exit 2, saying the supervisor "has not ended the run", which it had, and recorded);
    the `run`, let go on, reads that end and starts nothing again."""
    hold = tmp_path / "hold"
    hold.touch()
    make_sweep(tmp_path, {"r0": {"steps": 1, "hold_file": str(hold)}})
    run_dir = tmp_path / "runs/fake/r0"
    argv = [sys.executable, "-m", "sweepgen", "run", "generated/fake", "--command", FAKE_COMMAND]
    argv += ["--stop-timeout", "1"]  # (the old `cancel` failed after this and its grace)
    running = subprocess.Popen(
        argv, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + LOADED_S
        while not (run_dir / "metrics.jsonl").exists():
            assert time.monotonic() < deadline and running.poll() is None, "r0 never started"
            time.sleep(0.05)
        running.send_signal(signal.SIGSTOP)
        try:
            cancel = _sweepgen(tmp_path, "cancel", "generated/fake")
        finally:
            running.send_signal(signal.SIGCONT)
        out, err = running.communicate(timeout=LOADED_S)
    finally:
        if running.poll() is None:
            running.kill()
            running.wait()
    assert cancel.returncode == 0 and "has not ended" not in cancel.stderr, cancel.stdout + cancel.stderr
    assert read_status(run_dir).state is RunState.CANCELLED
    assert running.returncode == 1 and "r0: cancelled" in out, out + err
    assert _starts(run_dir) == 1
