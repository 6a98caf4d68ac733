"""On the real Slurm (tests/slurm_cluster.py): `sweepgen cancel` landing while a `sweepgen run
--executor slurm --rerun-failed` is between its plan and its submission. The `cancel` finds nothing
running (the failed run's status is an end) and says that a live `run` holding runs of it queued
drops them; before, the Slurm `run` never read that request and submitted the rerun all the same,
so a run the user had just cancelled started. Now the submission re-reads the request under its
lock and drops the run (never submitted, its failed end kept), and the next `--rerun-failed`
starts it once.

The window is made certain, not waited for: an `scontrol` earlier on PATH runs the `cancel` at the
`run`'s `scontrol ping` after its plan (its check that the controller answers, just before it
takes the submission lock; asked at each call, its timeout lengthened for this), then does the real
thing. Starts are counted by the fake trainer's starts.jsonl.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, make_sweep
from slurm_support import cli, wait_until

from sweepgen.fs import filenames

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm_cluster")]

# `sweepgen` whose `scontrol ping` waits out the `cancel` the wrapper runs within it
PATIENT_RUN = (
    "import sys; from sweepgen.run.slurm import query; "
    "query.PING_TIMEOUT_S = 300; query.CONTROLLER_OK_S = 0; "
    "from sweepgen.cli import main; main(prog_name='sweepgen')"
)


def _cancelling_at_ping(tmp: Path, sweep: str) -> dict[str, str]:
    """PATH with an ``scontrol`` that, at the first ``ping`` after the `run` recorded its command
    line (its plan made) while nobody holds the submission lock, runs `sweepgen cancel` of ``sweep``
    (on the real PATH), keeping its output in ``tmp``/cancel.out and its exit code in cancel.rc."""
    bindir = tmp / "cancel-at-ping"
    bindir.mkdir()
    (tmp / "before").touch()
    real = shutil.which("scontrol")
    planned = f"generated/{sweep}/{filenames.RUN_STATE}"
    lock = f"runs/{sweep}/.sweepgen_slurm/submit.lock"
    cancel = f"{shlex.quote(sys.executable)} -m sweepgen cancel generated/{sweep}"
    body = (
        f'if [ "$1" = ping ] && [ {planned} -nt {shlex.quote(str(tmp / "before"))} ] '
        f"&& flock -n {lock} true && mkdir {shlex.quote(str(tmp / 'pinged'))} 2>/dev/null; then\n"
        f"  PATH={shlex.quote(os.environ['PATH'])} {cancel} >{shlex.quote(str(tmp / 'cancel.out'))} 2>&1\n"
        f"  echo $? >{shlex.quote(str(tmp / 'cancel.rc'))}\n"
        "fi\n"
        f'exec {shlex.quote(str(real))} "$@"\n'
    )
    (bindir / "scontrol").write_text("#!/bin/bash\n" + body)
    (bindir / "scontrol").chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}


def _starts(run_dir: Path) -> int:
    path = run_dir / "starts.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _arrays(runs: Path) -> int:
    path = runs / ".sweepgen_slurm" / "jobs.json"
    return len(json.loads(path.read_text())["arrays"]) if path.exists() else 0


def test_a_cancel_between_a_reruns_plan_and_its_submission_drops_it(cli_cwd: Path, tmp_path: Path) -> None:
    make_sweep(cli_cwd, {"a": {"steps": 1, "fail_at": 1, "fail_attempts": 1}}, sweep="cr")
    lock = cli_cwd / "generated" / "cr" / "sweep.lock.json"
    lock.write_text(json.dumps({**json.loads(lock.read_text()), "resources": {"time": 5}}))
    argv = ("run", "generated/cr", "--executor", "slurm", "--command", FAKE_COMMAND)
    first = cli(*argv)
    assert first.exit_code == 0, first.output
    wait_until("generated/cr", lambda r: r["a"]["state"] in ("FAILED", "FINISHED"), LOADED_S, "a ended")
    assert _starts(cli_cwd / "runs" / "cr" / "a") == 1
    rerun = subprocess.run(
        [sys.executable, "-c", PATIENT_RUN, *argv, "--rerun-failed"],
        cwd=cli_cwd,
        env=_cancelling_at_ping(tmp_path, "cr"),
        capture_output=True,
        text=True,
        timeout=LOADED_S,
    )
    assert (tmp_path / "cancel.rc").exists(), rerun.stdout + rerun.stderr
    said = (tmp_path / "cancel.out").read_text()
    assert (tmp_path / "cancel.rc").read_text().strip() == "0", said
    assert "drops them, never starting them" in said, said  # what `cancel` promised
    assert rerun.returncode == 1 and "Traceback" not in rerun.stderr, rerun.stdout + rerun.stderr
    assert "a: not submitted: not started: cancelled by `sweepgen cancel`" in rerun.stdout, rerun.stdout
    assert "submitted 1" not in rerun.stdout, rerun.stdout
    runs = cli_cwd / "runs" / "cr"
    assert _arrays(runs) == 1 and _starts(runs / "a") == 1, rerun.stdout + rerun.stderr  # never submitted
    shown = cli("status", "generated/cr", "--format", "json")
    (row,) = json.loads(shown.stdout)
    assert (row["state"], row["attempt"]) == ("FAILED", 1), row  # its end kept, as before the rerun
    # the cancel holds no later `run`: the next --rerun-failed starts it once
    assert cli(*argv, "--rerun-failed").exit_code == 0
    rows = wait_until("generated/cr", lambda r: r["a"]["state"] == "FINISHED", LOADED_S, "a finished")
    assert rows["a"]["attempt"] == 2 and _starts(runs / "a") == 2, rows


def test_a_cancel_continued_after_the_run_was_submitted_again_leaves_the_new_attempt(
    cli_cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `cancel` held up (stopped) between its look and its stop: meanwhile another `cancel` ends
    attempt 1 and `--rerun-failed` submits attempt 2. Continued, it stops only what it looked at, as
    the local executor does: attempt 2 is left queued or running and said so (exit 1). Before, it
    re-read the status files and scancelled attempt 2, a job it never looked at."""
    from sweepgen.run.sweep import watch

    make_sweep(cli_cwd, {"a": {"steps": 400, "sleep": 0.5}}, sweep="cs")
    lock = cli_cwd / "generated" / "cs" / "sweep.lock.json"
    lock.write_text(json.dumps({**json.loads(lock.read_text()), "resources": {"time": 5}}))
    argv = ("run", "generated/cs", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert cli(*argv).exit_code == 0
    wait_until("generated/cs", lambda r: r["a"]["state"] == "RUNNING", LOADED_S, "attempt 1 running")
    stop_runs, held = watch.cancel_runs, [True]

    def stopped_here(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not held:  # the first call only: this `cancel`, held up
            return stop_runs(*args, **kwargs)
        held.pop()
        other = subprocess.run(
            [sys.executable, "-m", "sweepgen", "cancel", "generated/cs"], capture_output=True, text=True
        )
        assert other.returncode == 0, other.stdout + other.stderr
        again = subprocess.run(
            [sys.executable, "-m", "sweepgen", *argv, "--rerun-failed"], capture_output=True, text=True
        )
        assert again.returncode == 0, again.stdout + again.stderr
        return stop_runs(*args, **kwargs)

    monkeypatch.setattr(watch, "cancel_runs", stopped_here)
    continued = cli("cancel", "generated/cs")
    said = " ".join(continued.output.split())
    assert continued.exit_code == 1, said
    assert "a: started again meanwhile (attempt 2" in said and "not cancelled" in said, said
    (row,) = json.loads(cli("status", "generated/cs", "--format", "json").stdout)
    assert row["attempt"] == 2 and row["state"] in ("PENDING", "RUNNING"), row  # attempt 2 left alone
    assert cli("cancel", "generated/cs").exit_code == 0  # and stopped by the next cancel


def test_a_run_stopped_while_its_run_was_cancelled_and_submitted_again_lets_the_new_attempt_be(
    cli_cwd: Path,
) -> None:
    """`run --wait` stopped (SIGSTOP) while a `cancel` ends its job and `--rerun-failed` submits
    attempt 2; continued, it does not take attempt 2 for its own: it records its attempt's end
    (cancelled, "submitted again meanwhile") and exits, attempt 2 left to run. Before, it followed
    attempt 2 to its end as its own, and a Ctrl-C of it scancelled attempt 2."""
    make_sweep(cli_cwd, {"a": {"steps": 400, "sleep": 0.5}}, sweep="cw")
    lock = cli_cwd / "generated" / "cw" / "sweep.lock.json"
    lock.write_text(json.dumps({**json.loads(lock.read_text()), "resources": {"time": 5}}))
    argv = ("run", "generated/cw", "--executor", "slurm", "--command", FAKE_COMMAND)
    first = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", *argv, "--wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until("generated/cw", lambda r: r["a"]["state"] == "RUNNING", LOADED_S, "attempt 1 running")
        first.send_signal(signal.SIGSTOP)
        assert cli("cancel", "generated/cw").exit_code == 0
        assert cli(*argv, "--rerun-failed").exit_code == 0
    finally:
        first.send_signal(signal.SIGCONT)
    try:
        out, err = first.communicate(timeout=LOADED_S)
    finally:
        first.kill()  # (still following attempt 2 as its own: the old fault)
    assert first.returncode == 1 and "Traceback" not in err, out + err
    assert "submitted again meanwhile by another `sweepgen run` (attempt 2" in out + err, out + err
    (row,) = json.loads(cli("status", "generated/cw", "--format", "json").stdout)
    assert row["attempt"] == 2 and row["state"] in ("PENDING", "RUNNING"), row  # attempt 2 left alone
    assert cli("cancel", "generated/cw").exit_code == 0
