"""`kill -9` of `sweepgen run` at random moments, then `status`, `run --rerun-failed` and a second
`run`: every run started exactly once and recorded with its true end, for a foreign trainer held to
exit 0 alone (the case whose end only its starter used to record), the bundled trainer, and a search.

Starts are counted by a marker file each start appends to, so a run started twice is seen, not
guessed. The moments are drawn from a seeded generator: a failure names the seed that found it.
"""

from __future__ import annotations

import json
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import make_config_sweep, make_sweep, output_of
from search_support import COMMAND as SEARCH_COMMAND
from search_support import study, sweepgen, write_search_project

from sweepgen.run.core import runlock
from sweepgen.run.core.base import RunState, read_status

# a foreign trainer: appends one line per start, works a while, exits 0 (no done file)
FOREIGN = """\
import os, sys, time, yaml
config = yaml.safe_load(open(sys.argv[1]))
out = config["output_dir"]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "starts.txt"), "a") as fh:
    fh.write(f"{os.getpid()}\\n")
time.sleep(config["fake"]["sleep"])
"""


def _foreign_command(root: Path) -> str:
    script = root / "foreign.py"
    script.write_text(FOREIGN)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {{config}}"


def _kill_at_random_moments(root: Path, argv: list[str], rng: random.Random, kills: int, span: float) -> None:
    """``kills`` times: start ``sweepgen ARGV`` and SIGKILL it at a random moment; the first one
    once a run has started (so at least one run is always orphaned), the others anywhere in ``span``
    seconds (before anything started, while spawning, while following)."""
    for i in range(kills):
        proc = sweepgen(root, *argv, wait=False)
        if i == 0:
            deadline = time.monotonic() + 120
            while not list(root.glob("runs/*/*/starts.*")):
                assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.5))
        else:
            time.sleep(rng.uniform(0.0, span))
        proc.send_signal(signal.SIGKILL)  # sweepgen only: its supervisors and trainers go on
        proc.communicate()


def _wait_until_no_run_is_held(runs: Path, timeout: float = 120) -> None:
    """The orphaned runs (their `sweepgen run` killed) have all ended: none holds its lock."""
    deadline = time.monotonic() + timeout
    while any(runlock.is_held(run) for run in runs.iterdir() if run.is_dir()):
        assert time.monotonic() < deadline, "an orphaned run never ended"
        time.sleep(0.1)


def _assert_each_started_once_and_finished(runs: list[Path], marker: str) -> None:
    for run in runs:
        starts = (run / marker).read_text().splitlines()
        assert len(starts) == 1, f"{run.name} started {len(starts)} times"
        status = read_status(run)
        assert status is not None and status.state is RunState.FINISHED, (run.name, status)
        assert status.exit_code == 0 and status.ended and status.ids.get("trainer_pgid"), status
        assert not runlock.is_held(run)


@pytest.mark.parametrize("seed", [1, 2])
def test_kill9_of_sweepgen_run_with_a_foreign_trainer_starts_each_run_once(tmp_path, seed):
    rng = random.Random(seed)
    names = [f"r{i}" for i in range(6)]
    make_sweep(tmp_path, {n: {"sleep": rng.uniform(0.5, 2.0)} for n in names})
    command = _foreign_command(tmp_path)
    argv = ["run", "generated/fake", "--jobs", "2", "--command", command]
    _kill_at_random_moments(tmp_path, argv, rng, 3, 4.0)
    if (tmp_path / "runs/fake").is_dir():
        _wait_until_no_run_is_held(tmp_path / "runs/fake")
    # nobody followed the orphaned runs to their end: their supervisors recorded it, none is "lost"
    shown = sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    rows = json.loads(shown.stdout)
    assert {r["state"] for r in rows} <= {"FINISHED", "NOT STARTED"}, rows
    # --rerun-failed: nothing failed, so it only waits for the orphans and starts what never started
    # (the command line given again: a kill before `run` recorded it leaves nothing to reuse)
    again = sweepgen(tmp_path, "run", "generated/fake", "--command", command, "--rerun-failed", timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    second = sweepgen(tmp_path, "run", "generated/fake", "--command", command, timeout=180)
    assert second.returncode == 0, second.stdout + second.stderr
    _assert_each_started_once_and_finished([tmp_path / "runs/fake" / n for n in names], "starts.txt")
    shown = sweepgen(tmp_path, "status", "generated/fake", "--format", "json")
    assert shown.returncode == 0 and {r["state"] for r in json.loads(shown.stdout)} == {"FINISHED"}


def test_kill9_of_a_search_with_a_trainer_held_to_exit_0_reaches_exactly_n_and_reruns_nothing(tmp_path):
    # without --done-file the run's exit is its only proof: before, a killed controller's finished
    # trials were "lost" and the next controller ran them again
    n = 6
    write_search_project(tmp_path, {"n": n, "parallel": 2})
    assert sweepgen(tmp_path, "render", "specs/s.yaml").returncode == 0
    rng = random.Random(33)
    argv = ["run", "generated/fake_search", "--command", SEARCH_COMMAND]
    _kill_at_random_moments(tmp_path, argv, rng, 4, 3.0)
    if (tmp_path / "runs/fake_search").is_dir():
        _wait_until_no_run_is_held(tmp_path / "runs/fake_search")
    done = sweepgen(tmp_path, *argv, timeout=180)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    trials = study(tmp_path).get_trials()
    assert sum(t.state.name == "COMPLETE" for t in trials) == n, [t.state.name for t in trials]
    assert all(t.state.name in ("COMPLETE", "FAIL", "PRUNED") for t in trials)
    runs = [tmp_path / "runs/fake_search" / f"t{t.number:04d}" for t in trials if t.state.name == "COMPLETE"]
    _assert_each_started_once_and_finished(runs, "starts.jsonl")


@pytest.mark.slow
@pytest.mark.train
def test_kill9_of_sweepgen_run_with_the_bundled_trainer_records_its_end_and_starts_it_once(
    tmp_path, tiny_cache
):
    """The bundled trainer on the built-in tiny model: `sweepgen run` killed while the runs train;
    their supervisors record the ends (summary.json), and nothing starts a run again."""
    from trainer_support import subprocess_env, tiny_dict

    names = ["s0", "s1"]
    configs = {}
    for seed, name in enumerate(names):
        configs[name] = tiny_dict(f"runs/tiny2/{name}", grpo={"max_steps": 8}, logging={"save_steps": 4})
        configs[name].update(run_name=name, seed=seed)
    make_config_sweep(tmp_path, configs, sweep="tiny2", values={n: {"seed": i} for i, n in enumerate(names)})
    env = {**subprocess_env(tiny_cache), "COLUMNS": "200"}
    marker = "starts.txt"
    # the bundled trainer behind a shell line that counts its starts (exec: the trainer is the run)
    trainer = f"{shlex.quote(sys.executable)} -P -m sweepgen_trainer {{config}}"
    command = f"echo start >> {{run_dir}}/{marker} && exec {trainer}"
    head = [sys.executable, "-m", "sweepgen", "run", "generated/tiny2"]
    argv = [*head, "--jobs", "2", "--shell", "--command", command, "--done-file", "summary.json"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not all((tmp_path / "runs/tiny2" / n / "metrics.jsonl").exists() for n in names):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    for extra in (["--rerun-failed"], []):
        again = subprocess.run(
            [*head, *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        assert again.returncode == 0, again.stdout + again.stderr
    # summary.json ends a waiting `run`; the trainer's process may take a moment more to exit, and
    # its supervisor records the end after that
    _wait_until_no_run_is_held(tmp_path / "runs/tiny2")
    _assert_each_started_once_and_finished([tmp_path / "runs/tiny2" / n for n in names], marker)
