"""`sweepgen cancel` at the very start of a `sweepgen run`, and during a start held up past `cancel`'s
patience: `cancel`'s answer is true, and a run it says is dropped is never started.

- A `run` still loading (its process exists; it has not read its clock, nor made its runs folder)
  when `cancel` came heard nothing: `cancel` said "nothing to cancel", then the `run` started every
  run. Now the `run` counts from its process's start, and `cancel` makes the runs folder `run` makes.
- A `run` held up (SIGSTOP) between taking a run's lock and handing it to its supervisor, for longer
  than `cancel` waits for a start to be recorded: `cancel` said the run was dropped, then the `run`
  started it. Now its supervisor reads the request before it records the start (dropped, nothing
  written) and again once `running` is on record, before its trainer exists.

Trainers count their starts (starts.txt); states are waited for, never slept for.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest
from run_support import LOADED_S, WAITER, make_sweep, output_of
from search_support import cli, sweepgen

from sweepgen.run.core import boot_clock
from sweepgen.run.core.base import ExecutorOptions, RunState, read_status
from sweepgen.run.core.plan.tasks import load_sweep, parse_command
from sweepgen.run.core.stopping import queue_cancel
from sweepgen.run.local import executor as local_executor
from sweepgen.run.sweep import watch


def _starts(run: Path) -> int:
    path = run / "starts.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _waiters(root: Path, names: list[str]) -> str:
    """A sweep of ``names``, each a WAITER already released (a run started ends at once); its
    --command."""
    release = root / "release"
    release.touch()
    make_sweep(root, {name: {"release": str(release)} for name in names})
    (root / "waiter.py").write_text(WAITER)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(root / 'waiter.py'))} {{config}}"


def test_a_cancel_while_run_still_loads_is_heard_by_it(tmp_path: Path) -> None:
    command = _waiters(tmp_path, ["r0", "r1"])
    assert not (tmp_path / "runs").exists()  # the first `run` of the sweep makes its runs folder
    started = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)
    # held where it is, a moment after its exec: loading Python and sweepgen, long before any start
    started.send_signal(signal.SIGSTOP)
    try:
        cancel = sweepgen(tmp_path, "cancel", "generated/fake")
    finally:
        started.send_signal(signal.SIGCONT)
    try:
        out, err = started.communicate(timeout=LOADED_S)
    finally:
        output_of(started)
    runs = tmp_path / "runs" / "fake"
    assert [_starts(runs / name) for name in ("r0", "r1")] == [0, 0], cancel.stdout + out + err
    assert cancel.returncode == 0 and "Traceback" not in cancel.stderr, cancel.stdout + cancel.stderr
    assert "nothing to cancel" not in cancel.stdout, cancel.stdout
    assert started.returncode == 1 and "Traceback" not in err, out + err
    shown = json.loads(cli(tmp_path, "status", "generated/fake", "--format", "json").stdout)
    assert sorted(row["state"] for row in shown) == ["NOT STARTED", "NOT STARTED"], shown
    # a `run` started after the cancel is not held by it: each run starts once
    again = sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [_starts(runs / name) for name in ("r0", "r1")] == [1, 1]


@pytest.mark.parametrize("only", [(), ("r0",)])
def test_a_cancel_that_stopped_waiting_for_a_start_is_honoured_before_the_trainer_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, only: tuple[str, ...]
) -> None:
    """The `run` holds r0's lock and has not handed it to a supervisor when `cancel` comes, and goes
    on only after `cancel` stopped waiting for the start to be recorded (its patience shortened
    here; a SIGSTOPped `run` outlasts any). The drop says who asked it: `cancel --only` or a whole
    cancel (before, the supervisor's drop always read as a whole cancel's)."""
    command = _waiters(tmp_path, ["r0"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(watch, "STARTING_WAIT_S", 0.2)
    sweep = load_sweep(Path("generated/fake"), command=parse_command(command))
    options = ExecutorOptions(sweep_dir=sweep.dir, lock=sweep.lock, started_s=boot_clock.now_s())
    ex = local_executor.LocalExecutor(options)
    answers: list[watch.CancelOutcome] = []
    start = local_executor.forked.start

    def held_up(*args, **kwargs):  # type: ignore[no-untyped-def]
        answers.append(watch.cancel(Path("generated/fake"), only))
        return start(*args, **kwargs)

    monkeypatch.setattr(local_executor.forked, "start", held_up)
    ex.start(sweep.tasks)
    deadline = time.monotonic() + LOADED_S
    while not ex.done():
        assert time.monotonic() < deadline, ex.poll()
        ex.poll()
        ex.wait(0.1)
    run = tmp_path / "runs" / "fake" / "r0"
    assert _starts(run) == 0
    (answer,) = answers
    assert answer.held_starting == ["r0"] and answer.exit_code == 0, answer
    # dropped as a queued run is: nothing written, so the next `run` starts it
    assert read_status(run) is None
    shown = ex.poll()["r0"]
    reason = queue_cancel.DROPPED_ALONE if only else queue_cancel.DROPPED
    assert shown.state is RunState.CANCELLED and shown.reason == reason, shown
    assert "r0" in queue_cancel.asked_since(run.parent, options.started_s)


@pytest.mark.parametrize("alone", [False, True])
def test_a_drop_read_once_the_start_is_on_record_says_who_asked_it(tmp_path: Path, alone: bool) -> None:
    """The supervisor's second look (`running` on record, no trainer yet) records the run cancelled
    with words that tell `cancel --only RUN` from a whole cancel, as a queued run's drop does."""
    from sweepgen.run.local import supervise

    runs = tmp_path / "runs"
    (runs / "r0").mkdir(parents=True)
    since = boot_clock.now_s()
    assert supervise._cancelled_while_starting(runs / "r0", since) is None
    queue_cancel.ask(runs, ["r0"], alone=alone)
    asked = supervise._cancelled_while_starting(runs / "r0", since)
    recorded = supervise._RECORDED_DROP[asked] if asked is not None else None
    assert recorded == (supervise.DROPPED_ALONE if alone else supervise.DROPPED), recorded
    assert supervise.DROPPED_ALONE != supervise.DROPPED and "--only" in supervise.DROPPED_ALONE


def test_a_run_called_in_a_longer_lived_process_is_not_held_by_a_cancel_made_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`run` called in a process started for something else (CliRunner here, a notebook): its start
    is the call's, not the process's, so a `cancel` made before the call does not drop its runs."""
    from click.testing import CliRunner

    from sweepgen.cli import main

    command = _waiters(tmp_path, ["r0"])
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "fake").mkdir(parents=True)
    queue_cancel.ask(tmp_path / "runs" / "fake", ["r0"])  # after this process started
    result = CliRunner().invoke(main, ["run", "generated/fake", "--command", command])
    assert result.exit_code == 0, result.output
    assert _starts(tmp_path / "runs" / "fake" / "r0") == 1


def test_a_drop_says_whether_cancel_only_or_a_whole_cancel_asked_it(tmp_path: Path) -> None:
    """`cancel --only RUN`'s drop has words of its own: a search's controller reads a whole
    cancel's drop as the search cancelled (its trial left open) even once a second `run` withdrew
    the search's stop request, and an `--only` drop as that run's alone. A whole cancel's ask
    outweighs an `--only` one, before or after it."""
    folder = tmp_path / "runs"
    folder.mkdir()
    queue_cancel.ask(folder, ["a", "b"], alone=True)
    queue_cancel.ask(folder, ["b", "c"])
    queue_cancel.ask(folder, ["c"], alone=True)
    asked = queue_cancel.asked_since(folder, 0.0)
    whole, alone = queue_cancel.DROPPED, queue_cancel.DROPPED_ALONE
    assert asked == {"a": alone, "b": whole, "c": whole}, asked
    assert alone != whole and alone in queue_cancel.DROPPED_REASONS
