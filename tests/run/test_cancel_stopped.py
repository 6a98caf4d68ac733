"""A `sweepgen cancel` stopped (SIGSTOP, Ctrl-Z) between its look at the runs and its stop of them,
while others act (a second `cancel`, a `run --rerun-failed`), then continued: it stops nothing it
did not look at, says what became of each run, and every run is started once per `run` that
started it. The stop is held at a known point (the call that stops the runs), never slept for.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest
from run_support import LOADED_S, WAITER, make_sweep, output_of
from search_support import cli, sweepgen

from sweepgen.run.core.base import read_status
from sweepgen.run.sweep import watch


def _starts(run: Path) -> int:
    path = run / "starts.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _wait_for(what, proc, why: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + LOADED_S
    while not what():
        assert time.monotonic() < deadline and proc.poll() is None, (why, output_of(proc))
        time.sleep(0.05)


def _running(run: Path, attempt: int) -> bool:
    status = read_status(run) if run.is_dir() else None
    return status is not None and status.attempt == attempt and "trainer_pgid" in status.ids


@pytest.mark.parametrize("rerun", [True, False])
def test_a_cancel_continued_after_the_run_was_started_again_leaves_the_new_attempt_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rerun: bool
) -> None:
    """Stopped after its look: a second `cancel` ends attempt 1 and `--rerun-failed` starts attempt 2.
    Continued, it cannot reach attempt 1's supervisor (gone) and said attempt 2 "runs under the
    local executor ... and cannot be stopped from here: run `sweepgen cancel` on its machine", of
    a run on this machine. It says the run was started again after it looked, exit 1. Without the
    rerun it said attempt 1 "ended by itself (cancelled)": it says another stop ended it first."""
    release = tmp_path / "release"
    make_sweep(tmp_path, {"r0": {"release": str(release)}})
    (tmp_path / "waiter.py").write_text(WAITER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'waiter.py'))} {{config}}"
    run = tmp_path / "runs" / "fake" / "r0"
    first = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)
    procs = [first]
    try:
        _wait_for(lambda: _running(run, 1) and _starts(run) == 1, first, "attempt 1's start")
        stop_runs = watch.cancel_runs

        def stopped_here(*args, **kwargs):  # type: ignore[no-untyped-def]
            # while this `cancel` is stopped: another cancels r0, and `--rerun-failed` starts it again
            other = sweepgen(tmp_path, "cancel", "generated/fake")
            assert other.returncode == 0, other.stdout + other.stderr
            first.communicate(timeout=LOADED_S)
            if not rerun:
                return stop_runs(*args, **kwargs)
            again = sweepgen(
                tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed", wait=False
            )
            procs.append(again)
            _wait_for(lambda: _running(run, 2) and _starts(run) == 2, again, "attempt 2's start")
            return stop_runs(*args, **kwargs)

        monkeypatch.setattr(watch, "cancel_runs", stopped_here)
        continued = cli(tmp_path, "cancel", "generated/fake")
        said = " ".join((continued.stdout + continued.stderr).split())
        if not rerun:
            assert continued.returncode == 0 and "cancelled 1 run(s)" not in said, said
            assert "r0: ended before this `cancel` reached it (cancelled: cancelled by" in said, said
            assert _starts(run) == 1
            return
        # attempt 2 was started after this cancel looked: left running, and said so, not "another machine"
        assert continued.returncode == 1 and "on its machine" not in said, said
        assert "r0: started again meanwhile (attempt 2" in said and "not cancelled" in said, said
        assert "cancelled 1 run(s)" not in said, said
        assert _running(run, 2) and procs[-1].poll() is None
        assert _starts(run) == 2  # once per `run` that started it
    finally:
        release.touch()
        for proc in procs:
            output_of(proc)
