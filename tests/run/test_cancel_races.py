"""`sweepgen cancel` racing a run that ends by itself: the run finished between the moment `cancel`
saw it running and the moment it asked its supervisor to stop it (the supervisor gone by then).
The run keeps its end, `cancel` exits 0 and says nothing of a run it "cannot stop from here";
before, it named that finished run as one running on another machine and exited 1.

The race is made certain, not waited for: `cancel`'s request to the supervisor first lets the
trainer exit and waits until its end is recorded."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from run_support import LOADED_S, make_sweep, output_of
from search_support import cli, sweepgen

from sweepgen.cli import main
from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, RunStatus, read_status
from sweepgen.run.local import liveness

# a trainer held to exit 0 alone: counts its start, waits for ``release`` beside the project, then
# exits with the code that file holds (none: 0)
TRAINER = """\
import os, sys, time
out, root = sys.argv[1], sys.argv[2]
with open(os.path.join(out, "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
release = os.path.join(root, "release")
while not os.path.exists(release):
    time.sleep(0.02)
sys.exit(int(open(release).read() or 0))
"""


def _until(what: str, done) -> None:
    deadline = time.monotonic() + LOADED_S
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _state(run: Path) -> RunStatus | None:
    return read_status(run) if (run / "sweepgen_status.json").exists() else None


def _cancel_racing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, race, ends: RunState = RunState.FINISHED
) -> tuple[Result, Path]:
    """`sweepgen cancel` of r0 while it runs, its request to the supervisor going through ``race``
    (given the real request, then the request's arguments); its result once `sweepgen run` (which
    must end as the run ``ends``, by itself) is done, and the run's folder."""
    make_sweep(tmp_path, {"r0": {}})
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    trainer = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    command = f"{trainer} {{run_dir}} {shlex.quote(str(tmp_path))} {{config}}"
    run = tmp_path / "runs" / "fake" / "r0"
    started = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)
    asked = liveness.request_stop
    try:
        _until("the run's start", lambda: (s := _state(run)) is not None and "trainer_pgid" in s.ids)
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(liveness, "request_stop", lambda *args: race(asked, *args))
        cancel = CliRunner().invoke(main, ["cancel", "generated/fake"])
        out, err = started.communicate(timeout=LOADED_S)
    finally:
        output_of(started)
    code = 0 if ends is RunState.FINISHED else 1
    assert started.returncode == code and "Traceback" not in err, out + err
    status = read_status(run)
    assert status is not None and status.state is ends, status
    assert len((run / "starts.txt").read_text().splitlines()) == 1
    return cancel, run


def test_cancel_of_a_run_that_finished_meanwhile_keeps_its_end_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def finished_first(asked, run_dir: Path, status: RunStatus, reason: str) -> bool:
        (tmp_path / "release").touch()  # the trainer exits 0 now, before the stop is asked
        _until("the run's end", lambda: not runlock.is_held(run_dir))
        return asked(run_dir, status, reason)

    cancel, _ = _cancel_racing(tmp_path, monkeypatch, finished_first)
    assert "cannot be stopped from here" not in cancel.output, cancel.output
    assert cancel.exit_code == 0, cancel.output
    assert "r0: ended by itself (finished) before it could be cancelled" in cancel.output, cancel.output
    shown = json.loads(cli(tmp_path, "status", "generated/fake", "--format", "json").stdout)
    assert [row["state"] for row in shown] == ["FINISHED"], shown


@pytest.mark.parametrize("code, ends", [(0, RunState.FINISHED), (3, RunState.FAILED)], ids=["exit0", "exit3"])
def test_cancel_asked_as_the_trainer_exits_counts_nothing_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, ends: RunState
) -> None:
    """The other side of the race: the trainer exits by itself the moment `cancel` asks its
    supervisor (which still lives: it records the end), so the stop comes too late: the run ended
    as its trainer did. Before, `cancel` said "cancelled 1 run(s)" beside its FINISHED or FAILED."""

    def as_it_exits(asked, run_dir: Path, status: RunStatus, reason: str) -> bool:
        # the supervisor held (SIGSTOP) while its trainer exits 0, and asked then: it gets the stop
        # with its trainer's exit already there, as when the two cross
        supervisor, trainer = int(status.ids["pid"]), int(status.ids["trainer_pgid"])
        os.kill(supervisor, signal.SIGSTOP)
        try:
            (tmp_path / "release").write_text(str(code))
            _until("the trainer's exit", lambda: _exited(trainer))
            return asked(run_dir, status, reason)
        finally:
            os.kill(supervisor, signal.SIGCONT)

    cancel, _ = _cancel_racing(tmp_path, monkeypatch, as_it_exits, ends)
    assert cancel.exit_code == 0 and "cancelled 1 run" not in cancel.output, cancel.output
    said = f"r0: ended by itself ({ends.value}) before it could be cancelled"
    assert said in cancel.output, cancel.output
