"""`sweepgen run` remembers how a sweep was started (.sweepgen-run.json): `--rerun-failed` and every
printed hint reuse `--command`/`--done-file`; `--shell` runs shell syntax; a trainer that leaves a
process behind neither keeps its failed run "running" nor outlives it (the supervisor ends the
group); and `check` does not call the run-state file an orphan."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from run_support import FAKE_COMMAND, LOADED_S, make_sweep

from sweepgen.compile.output.lockfile.lock import RUN_STATE_NAME
from sweepgen.run.core.base import RunState, read_status
from sweepgen.run.core.runlock import is_held

REPO = Path(__file__).resolve().parents[2]


def sweepgen(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_rerun_failed_reuses_the_recorded_command_and_the_hint_spells_it_out(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 2, "fail_at": 1, "fail_attempts": 1}, "b": {"steps": 1}})
    first = sweepgen(
        tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND, "--done-file", "summary.json"
    )
    assert first.returncode == 1, first.stdout + first.stderr
    state = json.loads((tmp_path / "generated" / "fake" / RUN_STATE_NAME).read_text())
    assert state["options"]["command"] == FAKE_COMMAND and state["options"]["done_file"] == "summary.json"
    # a plain `run` says how to retry: the whole command line, so a copied hint runs the same trainer
    again = sweepgen(tmp_path, "run", "generated/fake")
    assert again.returncode == 1
    hint = f"retry with `sweepgen run generated/fake --command {shlex.quote(FAKE_COMMAND)}"
    assert hint in again.stderr, again.stderr
    # --rerun-failed alone: the recorded foreign command, not the bundled trainer
    retried = sweepgen(tmp_path, "run", "generated/fake", "--rerun-failed")
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert "using the command line this sweep was started with" in retried.stderr
    status = read_status(tmp_path / "runs" / "fake" / "a")
    assert status is not None and status.state is RunState.FINISHED and status.attempt == 2
    assert "fake_trainer.py" in " ".join(status.command)


def test_shell_syntax_needs_shell_and_runs_with_it(tmp_path):
    make_sweep(tmp_path, {"a": {"steps": 1}})
    command = FAKE_COMMAND + " && echo after > {run_dir}/after.txt"
    refused = sweepgen(tmp_path, "run", "generated/fake", "--command", command)
    assert refused.returncode == 2
    assert "shell syntax (&& >)" in refused.stderr and "--shell" in refused.stderr
    assert not (tmp_path / "generated" / "fake" / RUN_STATE_NAME).exists()  # nothing recorded
    ran = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--shell")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (tmp_path / "runs" / "fake" / "a" / "after.txt").read_text() == "after\n"


def test_a_failed_trainer_that_leaves_a_child_frees_its_run(tmp_path):
    """The trainer forks a long-lived process and fails: the run is failed (not "running"), its lock
    is free, the left-over process is gone, and a second `run` exits 1 with the retry hint."""
    make_sweep(tmp_path, {"a": {"steps": 2, "fail_at": 1, "spawn_child": True}})
    first = sweepgen(tmp_path, "run", "generated/fake", "--command", FAKE_COMMAND)
    assert first.returncode == 1, first.stdout + first.stderr
    run_dir = tmp_path / "runs" / "fake" / "a"
    child = int((run_dir / "child.pid").read_text())
    deadline = time.monotonic() + LOADED_S  # a loaded machine reaps slowly: wait for the state
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the trainer's left-over process outlived its run"
    assert not is_held(run_dir)
    status = read_status(run_dir)
    assert status is not None and status.state is RunState.FAILED
    again = sweepgen(tmp_path, "run", "generated/fake")
    assert again.returncode == 1 and "failed or were cancelled before" in again.stderr
    shown = sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    assert json.loads(shown.stdout)[0]["state"] == "FAILED"


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_every_run_gets_tracker_names_for_wandb_and_tensorboard(tmp_path):
    make_sweep(tmp_path, {"lr1": {}, "lr2": {}}, values={"lr1": {"lr": 0.1}, "lr2": {"lr": 0.2}})
    command = "test -f {config} && printenv > {run_dir}/env.txt"
    ran = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--shell")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    env = dict(
        line.split("=", 1)
        for line in (tmp_path / "runs/fake/lr2/env.txt").read_text().splitlines()
        if "=" in line
    )
    assert env["WANDB_RUN_GROUP"] == "fake" and env["WANDB_NAME"] == "lr2"
    assert env["WANDB_TAGS"] == "lr=0.2"
    assert env["TENSORBOARD_RUN_NAME"] == "fake/lr2" and env["SWEEPGEN_RUN_DIR"] == "runs/fake/lr2"
    assert env["TENSORBOARD_DIR"] == str(tmp_path.resolve() / "runs/fake/lr2/tensorboard")
