"""A wall clock moved while a local run runs (NTP stepping it, ``date -s``, a VM restored) does not
change how long the run is shown to have run: its supervisor measures that on the boot clock
(run/core/boot_clock.py). Before, ``started`` and ``ended`` (wall-clock times) decided alone: a
clock moved back an hour showed 0:00 (a negative time), one moved forward an hour too much.

The clock is moved for the supervisor alone (its wall-clock stamp patched), never the machine's."""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from run_support import hand_over, start_supervisor

from sweepgen.cli._run_display import elapsed_seconds, step_text
from sweepgen.run.core import boot_clock
from sweepgen.run.core.base import RunState, RunStatus, read_status, this_host
from sweepgen.run.logs import trainer_states

# the supervisor, its wall clock an hour behind the start hand_over records (2026-01-01T00:00)
MOVED_BACK = (
    "import sys; import sweepgen.run.local.supervise as s; "
    "s._utc_now = lambda: '2025-12-31T23:00:00.000+00:00'; sys.exit(s.main(sys.argv[1:]))"
)


def test_a_run_whose_clock_was_moved_back_while_it_ran_shows_its_true_elapsed_time(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r0"
    run.mkdir(parents=True)
    trainer = [sys.executable, "-c", "import time; time.sleep(1.0)"]
    supervisor, job = start_supervisor(tmp_path, run, [sys.executable, "-c", MOVED_BACK], trainer)
    hand_over(job, str(run))
    assert supervisor.wait(timeout=120) == 0
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    assert status.ended is not None and status.started is not None and status.ended < status.started
    elapsed = elapsed_seconds(status, None)
    assert elapsed is not None and 1.0 <= elapsed < 60.0, (elapsed, status)


def test_a_running_run_whose_clock_was_moved_back_shows_how_long_it_has_run(tmp_path: Path) -> None:
    now = boot_clock.now_s()
    assert now is not None
    # started two seconds ago by the boot clock; the wall clock was moved back an hour since
    started = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="milliseconds")
    ids = {"host": this_host(), "boot_id": boot_clock.boot_id(), boot_clock.BOOT_S: now - 2.0}
    status = RunStatus(RunState.RUNNING, "local", started=started, ids=ids)
    elapsed = elapsed_seconds(status, datetime.now(timezone.utc))
    assert elapsed is not None and 2.0 <= elapsed < 60.0, elapsed
    # another boot's (or machine's) clock says nothing here, nor does a wall clock moved back: "-"
    other = RunStatus(RunState.RUNNING, "local", started=started, ids={**ids, "boot_id": "another boot"})
    shown = elapsed_seconds(other, datetime.now(timezone.utc))
    assert shown is None


# a foreign trainer starting over (as `trl` does): its first save, checkpoint-100, then its end
SAVES_CHECKPOINT_100 = (
    "import json, os; os.makedirs('runs/r0/checkpoint-100'); "
    "open('runs/r0/checkpoint-100/trainer_state.json', 'w').write(json.dumps({'global_step': 100}))"
)


def test_a_foreign_trainers_step_is_never_an_earlier_attempts_after_the_clock_moved_back(
    tmp_path: Path,
) -> None:
    """An earlier attempt saved checkpoint-300; the wall clock was then moved back an hour, and the
    run started again (`--rerun-failed`): that state's file time is after this attempt's start.
    The step shown is this attempt's (its supervisor records the states there at its start); before,
    it was the earlier attempt's 300 (file times against the start), and with the clock moved back
    after the start this attempt's own states were not shown ("-")."""
    run = tmp_path / "runs" / "r0"
    (run / "checkpoint-300").mkdir(parents=True)
    earlier = run / "checkpoint-300" / "trainer_state.json"
    earlier.write_text('{"global_step": 300}')
    ahead = time.time() + 3600
    os.utime(earlier, (ahead, ahead))
    trainer = [sys.executable, "-c", SAVES_CHECKPOINT_100]
    program = [sys.executable, "-m", "sweepgen.run.local.supervise"]
    supervisor, job = start_supervisor(tmp_path, run, program, trainer)
    hand_over(job, str(run))
    assert supervisor.wait(timeout=120) == 0
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    assert step_text(run, {"max_steps": 400}, status) == "100/400"
    # this attempt's own state, its time an hour behind the start (the clock moved back meanwhile)
    behind = time.time() - 3600
    os.utime(run / "checkpoint-100" / "trainer_state.json", (behind, behind))
    assert step_text(run, {"max_steps": 400}, status) == "100/400"


def test_the_record_of_the_states_at_the_start_is_data() -> None:
    """A status file's record that is no {path: file time} is not used (the start's time decides)."""
    for value in (None, [], {"a": "1"}, {"a": True}, {"a": 1.5}, "x"):
        assert trainer_states.recorded({trainer_states.BEFORE: value}) is None, value
    assert trainer_states.recorded({trainer_states.BEFORE: {"a": 1}}) == {"a": 1}


# the supervisor, its first look at its trainer made just before the trainer exits (seen only after)
LATE_LOOK = (
    "import os, subprocess, sys; import sweepgen.run.local.supervise as s\n"
    "poll = subprocess.Popen.poll\n"
    "def late(self):\n"
    "    if not getattr(self, 'looked', False):\n"
    "        self.looked = True\n"
    "        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)\n"
    "        return None\n"
    "    return poll(self)\n"
    "subprocess.Popen.poll = late\n"
    "sys.exit(s.main(sys.argv[1:]))"
)


def test_a_trainer_that_exits_as_its_time_limit_passes_finished_by_itself(tmp_path: Path) -> None:
    """The trainer (held to exit 0 alone) exits 0 by itself in the instant its time limit passes:
    finished, not "timed out" (before, the supervisor saw the limit before the exit and recorded a
    failed run, which `--rerun-failed` ran a second time)."""
    run = tmp_path / "runs" / "r0"
    run.mkdir(parents=True)
    trainer = [sys.executable, "-c", "pass"]
    supervisor, job = start_supervisor(tmp_path, run, [sys.executable, "-c", LATE_LOOK], trainer)
    hand_over(job, str(run), time_limit_s=0.001)
    assert supervisor.wait(timeout=120) == 0
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED and status.exit_code == 0, status


def test_the_states_at_the_start_are_never_listed_from_a_folder_of_too_many_entries(
    tmp_path, monkeypatch
) -> None:
    """A run folder of a million entries was listed whole at each attempt's start (its checkpoints
    counted after): now at most MAX_LISTED names are read; past it nothing is recorded (None, as
    for too many checkpoints: the start's time decides)."""
    monkeypatch.setattr(trainer_states, "MAX_LISTED", 3, raising=False)  # absent before: listed whole
    (tmp_path / "checkpoint-1").mkdir()
    (tmp_path / "checkpoint-1" / "trainer_state.json").write_text("{}")
    (tmp_path / "a").write_text("")
    assert set(trainer_states.present(tmp_path) or ()) == {"checkpoint-1/trainer_state.json"}
    (tmp_path / "b").write_text("")
    (tmp_path / "c").write_text("")
    assert trainer_states.present(tmp_path) is None


def test_the_run_log_says_when_the_states_at_the_start_are_not_recorded(
    tmp_path, monkeypatch, capsys
) -> None:
    """Past MAX_LISTED entries (or MAX_RECORDED checkpoints) nothing was recorded and nothing said:
    the step shown is then told from the start's time, which a wall clock moved back makes an
    earlier attempt's. The supervisor says so in run.log (its stdout) as it starts."""
    from sweepgen.run.local import supervise

    monkeypatch.setattr(trainer_states, "MAX_LISTED", 3)
    for name in ("a", "b"):
        (tmp_path / name).write_text("")
    supervise._starting({"ids": {}}, supervise._Stops(tmp_path, 1.0, None))
    assert "more than" not in capsys.readouterr().out  # listed: recorded, nothing to say
    for name in ("c", "d"):
        (tmp_path / name).write_text("")
    status = supervise._starting({"ids": {}}, supervise._Stops(tmp_path, 1.0, None))
    assert status["ids"][trainer_states.BEFORE] is None
    said = capsys.readouterr().out
    assert "the run folder holds more than 3 entries or 1,000 checkpoints" in said, said


def test_a_linked_checkpoint_folder_is_never_looked_into(tmp_path) -> None:
    """A `checkpoint-N` that is a link (a pull request's, or a shared runs folder's, to a folder
    anywhere) was looked into: the states at an attempt's start recorded the file behind it, and the
    latest state was taken through it (the live table showed its step). Now neither follows it."""
    from sweepgen.run.core.runfiles import RunFileError
    from sweepgen.run.logs import metrics

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "trainer_state.json").write_text(
        '{"global_step": 900, "log_history": [{"step": 900, "acc": 1}]}'
    )
    run = tmp_path / "run"
    (run / "checkpoint-1").mkdir(parents=True)
    (run / "checkpoint-1" / "trainer_state.json").write_text('{"global_step": 1, "log_history": []}')
    (run / "checkpoint-9").symlink_to(elsewhere, target_is_directory=True)
    assert set(trainer_states.present(run) or ()) == {"checkpoint-1/trainer_state.json"}
    assert metrics.trainer_step(run) is None  # refused: the table shows "-", `report` says why
    assert metrics.trainer_step(run, before={}) is None
    try:
        metrics.read_all(run, tensorboard=False)
    except RunFileError as err:
        assert "checkpoint-9 is a link" in str(err)
    else:
        raise AssertionError("a linked checkpoint folder was read")
