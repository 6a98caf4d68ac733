"""A search project on the fast fake trainer (tests/fixtures/search_trainer.py), and the sweepgen CLI
as a real process, for the search tests and the search benchmark."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.run.core.base import RunState, read_status

REPO = Path(__file__).resolve().parent.parent
TRAINER = REPO / "tests" / "fixtures" / "search_trainer.py"
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(TRAINER))} {{config}}"
RUN_ARGS = ("--command", COMMAND, "--done-file", "summary.json")


def write_search_project(
    root: Path, search: dict[str, Any], *, base: dict[str, Any] | None = None, **extra: Any
) -> Path:
    """specs/s.yaml searching x and y of the fake trainer; returns the spec path."""
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates" / "fake.yaml.j2").write_text("{{ config | to_yaml }}\n")
    spec = {
        "sweepgen": 1,
        "name": "fake_search",
        "template": "../templates/fake.yaml.j2",
        "output": "{{ variant.name }}.yaml",
        "derived": {"output_dir": "runs/{{ sweep.name }}/{{ variant.name }}"},
        "base": base
        or {"x": 0.5, "y": 0.5, "steps": 6, "step_s": 0.03, "seed": 0, "noise": 0.01, "output_dir": None},
        "search": {
            "n": 6,
            "parallel": 2,
            "seed": 0,
            "sampler": "tpe",
            "metric": "score",
            "mode": "max",
            "axes": {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}},
            **search,
        },
        **extra,
    }
    path = root / "specs" / "s.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def sweepgen(cwd: Path, *args: str, wait: bool = True, timeout: float = 120) -> Any:
    """``python -m sweepgen ARGS`` from this checkout; a CompletedProcess, or the Popen with wait=False."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "sweepgen", *args]
    if not wait:
        return subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sweepgen ARGS`` from ``cwd`` in this process (click's CliRunner), for the commands whose
    process is not what a test is about (render, check, status): a CompletedProcess as ``sweepgen``
    gives, without a Python start-up and its imports each time. An exception that escaped the CLI is
    raised here (as a process, it would have been a traceback on stderr)."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["sweepgen", *args], result.exit_code, result.stdout, result.stderr)


def study(root: Path) -> Any:
    """The search's study, opened with Optuna's own API (as optuna-dashboard would)."""
    import optuna
    from optuna.storages.journal import JournalFileBackend

    path = root / "generated" / "fake_search" / ".search" / "study.journal"
    storage = optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    return optuna.load_study(study_name="sweepgen", storage=storage)


def logged_steps(run_dir: Path) -> list[int]:
    """The steps the fake trainer logged in ``run_dir`` (empty before its first step)."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line)["step"] for line in path.read_text().splitlines() if line.endswith("}")]


def kill_run_once_trial_trains(root: Path, trial: str, *args: str, timeout: float = 120) -> list[int]:
    """Start ``sweepgen run`` on the fake search with ``args``, SIGKILL it (the controller only: its
    trials go on, as after a crash) once ``trial`` has logged a step; the steps logged by then."""
    proc = sweepgen(root, "run", "generated/fake_search", *args, wait=False)
    run_dir = root / "runs" / "fake_search" / trial
    deadline = time.monotonic() + timeout
    while not logged_steps(run_dir):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{trial} never logged a step:\n{out}\n{err}")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    return logged_steps(run_dir)


def objective_of(trial: Any) -> float:
    """The fake trainer's objective at a trial's point (its curve tends to it, noise 0)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("search_trainer", TRAINER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return float(module.objective(trial.params["x"], trial.params["y"]))


# seed 5 of the random sampler draws t1 far below t0 (objective 0.62 vs 0.92): ASHA at step 10 promotes
# t0 (alone at its rung) and prunes t1 at whichever step >= 10 it is read (its whole curve lies below
# t0's from step 10 on). One trial at a time fixes the order, so the pruned trial is known. (A third
# trial is left out: ASHA compares values at the step each trial was read, so on a rising curve a
# close call depends on poll timing.)
PRUNED_SEARCH = {
    "n": 2,
    "parallel": 1,
    "seed": 5,
    "sampler": "random",
    "prune": {"method": "asha", "min_steps": 10, "reduction": 3},
}
PRUNED_BASE = {"x": 0.5, "y": 0.5, "steps": 40, "step_s": 0.15, "seed": 0, "noise": 0.0, "output_dir": None}


def assert_t1_pruned_and_stopped(root: Path, out: str, *, steps_all: int = 40) -> None:
    """t0 complete, t1 pruned: its run stopped early by SIGTERM (checkpoint at its last step), never
    restarted, recorded as cancelled with the pruning reason; exactly two trials, numbered 0 and 1."""
    trials = study(root).get_trials()
    assert sorted(t.number for t in trials) == [0, 1]
    assert objective_of(trials[1]) < objective_of(trials[0]) - 0.1, "the premise: t1's curve is below t0's"
    assert [t.state.name for t in trials] == ["COMPLETE", "PRUNED"], out
    assert trials[1].user_attrs["sweepgen_reason"].startswith("pruned at step")
    run = root / "runs" / "fake_search" / "t0001"
    status = read_status(run)
    assert status is not None and status.state is RunState.CANCELLED
    assert status.reason is not None and status.reason.startswith("pruned at step"), status.reason
    steps = logged_steps(run)
    assert 10 <= steps[-1] < steps_all and not (run / "summary.json").exists()  # stopped early
    assert json.loads((run / "checkpoint.json").read_text())["step"] == steps[-1]  # SIGTERM: saved
    assert len((run / "starts.jsonl").read_text().splitlines()) == 1  # stopped, never restarted
    assert logged_steps(root / "runs" / "fake_search" / "t0000")[-1] == steps_all
