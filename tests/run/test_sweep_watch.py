"""`status` and `cancel` as functions (sweepgen.run.sweep.watch): the runs found wherever `run` was
started, followed until none is live (woken as a local run's process ends, as `run` following runs
another `run` holds is), the exit code decided below the CLI; cancel with no live run
cancels nothing and says so, and a live run of the local executor is left to its terminal."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from run_support import make_sweep

from sweepgen.errors import UserError
from sweepgen.run.core import registry
from sweepgen.run.core.base import Decision, RunState, RunStatus, this_host, write_status
from sweepgen.run.local import liveness
from sweepgen.run.sweep import grid
from sweepgen.run.sweep import watch as sweep_watch


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    make_sweep(tmp_path, {"a": {}, "b": {}})
    return tmp_path


def _state(project: Path, name: str, status: RunStatus) -> None:
    run_dir = project / "runs" / "fake" / name
    run_dir.mkdir(parents=True, exist_ok=True)
    write_status(run_dir, status)
    if status.state is RunState.FINISHED:  # the bundled trainer's proof of a finished run
        (run_dir / "summary.json").write_text("{}")


def test_status_views_every_run_and_decides_the_exit_code(project):
    _state(project, "a", RunStatus(RunState.FINISHED, "local", exit_code=0))
    outcome = sweep_watch.status(Path("generated/fake"))
    assert [v.task.name for v in outcome.views] == ["a", "b"]
    assert outcome.under is None and outcome.exit_code == 0  # b never started: not a problem
    _state(project, "b", RunStatus(RunState.FAILED, "local", exit_code=3, reason="exit code 3"))
    assert sweep_watch.status(Path("generated/fake"), ["b"]).exit_code == 1


def test_status_wait_shows_each_collection_until_no_run_is_live(project, monkeypatch):
    _state(project, "a", RunStatus(RunState.RUNNING, "local", ids={"pid": 2**22 + 7, "host": "elsewhere"}))
    shown: list[list[str]] = []

    def finish(_seconds: float) -> None:  # the run ends while `status` waits
        _state(project, "a", RunStatus(RunState.FINISHED, "local", exit_code=0))

    # only `status`'s own wait ends the run: patching `time.sleep` itself let any sleep of the first
    # collection (a lock retried under load) end it before that collection was shown
    monkeypatch.setattr(sweep_watch, "time", SimpleNamespace(sleep=finish, monotonic=time.monotonic))
    outcome = sweep_watch.status(
        Path("generated/fake"), wait=True, show=lambda views: shown.append([v.label for v in views])
    )
    assert shown == [["RUNNING", "NOT STARTED"], ["FINISHED", "NOT STARTED"]]
    assert outcome.exit_code == 0


def test_runs_are_found_under_a_folder_above_the_sweep_or_it_says_why(project, monkeypatch):
    _state(project, "a", RunStatus(RunState.FINISHED, "local", exit_code=0))
    inside = project / "generated"
    monkeypatch.chdir(inside)  # run directories are relative to the project root, not here
    located = sweep_watch.locate(Path("fake"), ())
    assert located.under == project
    assert located.tasks[0].run_dir == project / "runs" / "fake" / "a"
    (project / "runs").rename(project / "moved")
    elsewhere = project.parent / (project.name + "_other")
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # outside the project: nowhere to look, an error saying why
    with pytest.raises(UserError, match="none of the 2 run directories"):
        sweep_watch.locate(project / "generated" / "fake", ())


def test_cancel_with_nothing_live_cancels_nothing(project):
    _state(project, "a", RunStatus(RunState.FINISHED, "local", exit_code=0))
    outcome = sweep_watch.cancel(Path("generated/fake"))
    assert outcome.nothing_live and outcome.cancelled == 0 and outcome.resume is None
    assert outcome.exit_code == 0


def test_cancel_signals_no_process_it_cannot_prove_is_the_runs_supervisor(project):
    # alive: this very process, on this host, but no supervisor that records its run (no trainer
    # group in its status: e.g. a run started by an older sweepgen); it must never get SIGTERM
    import os
    import signal

    got = []
    previous = signal.signal(signal.SIGTERM, lambda *_: got.append(1))
    try:
        ids = {"pid": os.getpid(), "host": this_host()}
        _state(project, "a", RunStatus(RunState.RUNNING, "local", ids=ids))
        outcome = sweep_watch.cancel(Path("generated/fake"))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert not got
    assert [v.task.name for v in outcome.elsewhere] == ["a"]
    assert outcome.cancelled == 0 and not outcome.nothing_live and outcome.exit_code == 1


def test_status_wait_looks_again_as_a_local_runs_process_ends_not_after_its_interval(project, monkeypatch):
    # the process a local `running` status names (no supervisor marks: an older sweepgen's run)
    proc = subprocess.Popen(["sleep", "600"])
    try:
        ids = {"pid": proc.pid, "host": this_host(), "proc_start": liveness.proc_start_ticks(proc.pid)}
        _state(project, "a", RunStatus(RunState.RUNNING, "local", ids=ids))
        shown: list[list[str]] = []

        def slept(_seconds: float) -> None:
            raise AssertionError("`status --wait` slept its interval out instead of waking at the run's end")

        monkeypatch.setattr(sweep_watch, "time", SimpleNamespace(sleep=slept, monotonic=time.monotonic))
        threading.Timer(0.2, proc.kill).start()  # the run ends while `status` waits
        outcome = sweep_watch.status(
            Path("generated/fake"), wait=True, poll_s=60.0, show=lambda v: shown.append([x.label for x in v])
        )
    finally:
        proc.kill()
        proc.wait()
    assert shown[0] == ["RUNNING", "NOT STARTED"] and len(shown) == 2 and shown[1][0] != "RUNNING", shown
    assert outcome.exit_code == 1  # its process ended with no end recorded: lost


class _Quiet:
    def say(self, line: str) -> None: ...
    def update(self, live: object) -> None: ...

    @contextlib.contextmanager
    def following(self, decisions: object) -> Iterator[_Quiet]:
        yield self


def test_run_following_a_run_held_elsewhere_looks_again_as_its_process_ends(project, monkeypatch):
    # `run` follows a run another `run` started (grid._follow_elsewhere) until it has ended
    proc = subprocess.Popen(["sleep", "600"])
    try:
        ids = {"pid": proc.pid, "host": this_host(), "proc_start": liveness.proc_start_ticks(proc.pid)}
        _state(project, "a", RunStatus(RunState.RUNNING, "local", ids=ids))
        task = sweep_watch.locate(Path("generated/fake"), ["a"]).tasks[0]
        held = Decision(task, start=False, state=RunState.SKIPPED, reason="running elsewhere")

        def slept(_seconds: float) -> None:
            raise AssertionError("`run` slept its interval out instead of waking at the run's end")

        monkeypatch.setattr(grid, "time", SimpleNamespace(sleep=slept, monotonic=time.monotonic))
        monkeypatch.setattr(grid, "ELSEWHERE_POLL_S", 60.0)
        threading.Timer(0.2, proc.kill).start()  # the run ends while `run` follows it
        out = grid._follow_elsewhere([held], _Quiet(), registry.status_is_alive)
    finally:
        proc.kill()
        proc.wait()
    assert out["a"].state is RunState.FAILED, out  # its process ended with no end recorded: lost
