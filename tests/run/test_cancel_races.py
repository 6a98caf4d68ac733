"""`sweepgen cancel` racing a run that ends by itself: the run finished between the moment `cancel`
saw it running and the moment it asked its supervisor to stop it (the supervisor gone by then).
The run keeps its end, `cancel` exits 0 and says nothing of a run it "cannot stop from here";
before, it named that finished run as one running on another machine and exited 1.

The race is made certain, not waited for: `cancel`'s request to the supervisor first lets the
trainer exit and waits until its end is recorded."""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import LOADED_S, make_sweep, output_of
from search_support import sweepgen

from sweepgen.cli import main
from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, RunStatus, read_status
from sweepgen.run.local import liveness

# a trainer held to exit 0 alone: counts its start, then waits for ``release`` beside the project
TRAINER = """\
import os, sys, time
out, root = sys.argv[1], sys.argv[2]
with open(os.path.join(out, "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
while not os.path.exists(os.path.join(root, "release")):
    time.sleep(0.02)
"""


def _until(what: str, done) -> None:
    deadline = time.monotonic() + LOADED_S
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _state(run: Path) -> RunStatus | None:
    return read_status(run) if (run / "sweepgen_status.json").exists() else None


def test_cancel_of_a_run_that_finished_meanwhile_keeps_its_end_and_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_sweep(tmp_path, {"r0": {}})
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    trainer = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    command = f"{trainer} {{run_dir}} {shlex.quote(str(tmp_path))} {{config}}"
    run = tmp_path / "runs" / "fake" / "r0"
    started = sweepgen(tmp_path, "run", "generated/fake", "--command", command, wait=False)
    asked = liveness.request_stop

    def finished_first(run_dir: Path, status: RunStatus, reason: str) -> bool:
        (tmp_path / "release").touch()  # the trainer exits 0 now, before the stop is asked
        _until("the run's end", lambda: not runlock.is_held(run_dir))
        return asked(run_dir, status, reason)

    try:
        _until("the run's start", lambda: (s := _state(run)) is not None and "trainer_pgid" in s.ids)
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(liveness, "request_stop", finished_first)
        cancel = CliRunner().invoke(main, ["cancel", "generated/fake"])
        out, err = started.communicate(timeout=LOADED_S)
    finally:
        output_of(started)
    assert "cannot be stopped from here" not in cancel.output, cancel.output
    assert cancel.exit_code == 0, cancel.output
    assert "r0: ended by itself (finished) before it could be cancelled" in cancel.output, cancel.output
    assert started.returncode == 0 and "Traceback" not in err, out + err
    status = read_status(run)
    assert status is not None and status.state is RunState.FINISHED, status
    assert len((run / "starts.txt").read_text().splitlines()) == 1
    shown = json.loads(sweepgen(tmp_path, "status", "generated/fake", "--format", "json").stdout)
    assert [row["state"] for row in shown] == ["FINISHED"], shown
