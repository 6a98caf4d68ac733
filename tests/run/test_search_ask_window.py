"""`sweepgen run` of a search SIGKILLed between Optuna's ask and the trial's record: right after
`study.ask` returned (the trial in the journal, RUNNING, no controller claimed it yet), and after
the trial was rendered into the sweep folder (before the study was synced and any run
started). The next `run` takes the trial over at the point it was asked, reaches exactly `n`
complete trials, and starts each trial's run once.

The kill lands at a known point: the `sweepgen run` is started through a wrapper that replaces the
one function at the window by itself and then a SIGKILL of its own process (never a sleep).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import LOADED_S
from search_support import REPO, RUN_ARGS, cli, study, sweepgen, write_search_project

# each wrapper does the real thing once, then SIGKILLs the `sweepgen run` it runs in
_PATCH = {
    "asked": ("optuna.study", "Study", "ask"),
    "rendered": ("sweepgen.run.search.trials", "TrialRenderer", "render"),
}


def _killed_at(cwd: Path, window: str) -> None:
    module, cls, name = _PATCH[window]
    code = (
        "import importlib, os, signal, sys\n"
        f"owner = getattr(importlib.import_module({module!r}), {cls!r})\n"
        f"real = getattr(owner, {name!r})\n"
        "def patched(*args, **kwargs):\n"
        "    out = real(*args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return out\n"
        f"setattr(owner, {name!r}, patched)\n"
        "from sweepgen.cli import main\n"
        "main(sys.argv[1:], prog_name='sweepgen')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", code, "run", "generated/fake_search", *RUN_ARGS]
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stdout + proc.stderr  # killed in the window, as meant


@pytest.mark.parametrize("window", list(_PATCH))
def test_a_search_killed_between_ask_and_record_takes_the_trial_over_and_runs_each_once(tmp_path, window):
    n = 1  # the trial killed: the next `run` finishes it, and asks no other
    write_search_project(tmp_path, {"n": n, "parallel": 1})
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    _killed_at(tmp_path, window)
    (asked,) = study(tmp_path).get_trials()
    assert asked.state.name == "RUNNING" and not (tmp_path / "runs/fake_search/t0000/starts.jsonl").exists()
    done = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, timeout=180)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "t0000: taken over from a stopped controller" in done.stdout, done.stdout
    trials = study(tmp_path).get_trials()
    # exactly n trials, none asked twice: the killed one's number and point kept
    assert [(t.number, t.state.name) for t in trials] == [(i, "COMPLETE") for i in range(n)], trials
    assert trials[0].params == asked.params
    for trial in trials:
        starts = tmp_path / "runs/fake_search" / f"t{trial.number:04d}" / "starts.jsonl"
        assert len(starts.read_text().splitlines()) == 1, trial.number


# where `sweepgen cancel` lands: while the trial renders (before the controller reads the stop request
# again), and after that read said "go on", before the executor takes the run's lock to start it
_CANCEL_AT = {
    "rendering": ("sweepgen.run.search.trials", "TrialRenderer", "render"),
    "after-the-stop-check": ("sweepgen.run.search.controller", "SearchController", "_cancelled_before_start"),
}


@pytest.mark.parametrize(
    ("window", "withdrawn"), [*((w, False) for w in _CANCEL_AT), ("after-the-stop-check", True)]
)
def test_a_cancel_while_a_trial_starts_starts_none_of_its_runs(tmp_path, window, withdrawn):
    """`sweepgen cancel` landing after a trial was asked, while it renders or just after the
    controller's last look at the stop request (before any of its runs starts): the trial's runs
    never start (its trial stays open), the `run` exits 1 saying the search was cancelled, and the
    recorded command line goes on to exactly n, starting each run once.

    ``withdrawn``: a second `sweepgen run` of the search starts right after the cancel and
    withdraws its stop request (the one call its controller makes at its start): the run dropped
    from the queue says a whole-search cancel dropped it (not `--only`), so the trial still stays
    open (before: both drops had one reason, and the trial was told failed)."""
    cancelled_as_a_trial_starts(tmp_path, window, withdrawn)


def cancelled_as_a_trial_starts(
    tmp_path: Path, window: str, withdrawn: bool, *extra: str, **spec: object
) -> None:
    """The case above, the `run`s given ``extra`` and the spec ``spec`` (`--executor slurm` and its
    resources: tests/run/test_search_slurm.py)."""
    write_search_project(tmp_path, {"n": 2, "parallel": 1}, **spec)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    module, cls, name = _CANCEL_AT[window]
    withdraw = (
        "        from sweepgen.run.search import stop, study\n"
        "        stop.withdraw(study.state_dir(__import__('pathlib').Path('generated/fake_search')))\n"
        if withdrawn
        else ""
    )
    code = (
        "import importlib, subprocess, sys\n"
        f"owner = getattr(importlib.import_module({module!r}), {cls!r})\n"
        f"real = getattr(owner, {name!r})\n"
        "def patched(*args, **kwargs):\n"
        "    out = real(*args, **kwargs)\n"
        "    if not getattr(patched, 'done', False):\n"
        "        patched.done = True\n"
        "        cancel = [sys.executable, '-m', 'sweepgen', 'cancel', 'generated/fake_search']\n"
        "        said = subprocess.run(cancel, capture_output=True, text=True, timeout=120)\n"
        "        assert 'the search was asked to stop' in said.stdout, said.stdout + said.stderr\n"
        f"{withdraw}"
        "    return out\n"
        f"setattr(owner, {name!r}, patched)\n"
        "from sweepgen.cli import main\n"
        "main(sys.argv[1:], prog_name='sweepgen')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", code, "run", "generated/fake_search", *extra, *RUN_ARGS]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "the search was cancelled" in proc.stderr, proc.stdout + proc.stderr
    (asked,) = study(tmp_path).get_trials()
    assert asked.state.name == "RUNNING" and not (tmp_path / "runs/fake_search/t0000/starts.jsonl").exists()
    done = sweepgen(tmp_path, "run", "generated/fake_search", timeout=600)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert [t.state.name for t in trials] == ["COMPLETE", "COMPLETE"]
    for name in ("t0000", "t0001"):
        assert len((tmp_path / "runs/fake_search" / name / "starts.jsonl").read_text().splitlines()) == 1


def test_a_cancel_whose_request_a_second_run_withdrew_still_leaves_the_trial_open(tmp_path):
    """`sweepgen cancel` of a search stops its trial's run; before the controller reads the stop
    request, a second `sweepgen run` of the search starts and withdraws it (its start goes on with
    a cancelled search). The first controller still reads the cancel from the run's own end (a
    whole-search cancel's reason, written after the request): the trial stays open for the search
    to resume, and nothing more is asked (before: the cancelled trial was told failed, counted
    among n, and a new one asked, undoing the cancel).

    The controller is held (SIGSTOP) while the cancel and the withdrawal land, so the order is
    known; the withdrawal is the one call a second `run`'s controller makes at its start."""
    from sweepgen.run.search import stop as search_stop
    from sweepgen.run.search.study import state_dir

    write_search_project(tmp_path, {"n": 2, "parallel": 1}, base=_LONG)
    assert cli(tmp_path, "render", "specs/s.yaml").returncode == 0
    first = sweepgen(tmp_path, "run", "generated/fake_search", *RUN_ARGS, wait=False)
    try:
        metrics = tmp_path / "runs/fake_search/t0000/metrics.jsonl"
        deadline = time.monotonic() + LOADED_S
        while not (metrics.exists() and metrics.read_text()):
            assert time.monotonic() < deadline and first.poll() is None, "t0000 never trained"
            time.sleep(0.05)
        first.send_signal(signal.SIGSTOP)
        try:
            said = sweepgen(tmp_path, "cancel", "generated/fake_search")
            assert "the search was asked to stop" in said.stdout, said.stdout + said.stderr
            search_stop.withdraw(state_dir(tmp_path / "generated/fake_search"))
        finally:
            first.send_signal(signal.SIGCONT)
        out, err = first.communicate(timeout=LOADED_S)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 1 and "Traceback" not in err, out + err
    (trial,) = study(tmp_path).get_trials()  # nothing more asked
    assert trial.state.name == "RUNNING", (trial, out, err)  # left open to resume, not told failed


# a trial that trains until the cancel lands (about 15 s unstopped; stopped within a second)
_LONG = {"x": 0.5, "y": 0.5, "steps": 300, "step_s": 0.05, "seed": 0, "noise": 0.01, "output_dir": None}
