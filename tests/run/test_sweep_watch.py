"""`status` and `cancel` as functions (sweepgen.run.sweep.watch): the runs found wherever `run` was
started, followed until none is live, the exit code decided below the CLI; cancel with no live run
cancels nothing and says so, and a live run of the local executor is left to its terminal."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from run_support import make_sweep

from sweepgen.errors import UserError
from sweepgen.run.core.base import RunState, RunStatus, this_host, write_status
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
