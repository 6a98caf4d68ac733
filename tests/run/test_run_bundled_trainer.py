"""`sweepgen run` and `sweepgen report` with the REAL bundled trainer: a 3-run CPU sweep of the tiny
model, two at a time (the third waits for a slot); one run SIGKILLed midway is the only one re-run,
and it resumes from its last checkpoint instead of step 0, to metrics equal to an uninterrupted
run's. Ctrl-C stops real runs at a checkpoint (the local executor's cancel: SIGTERM to each run),
and --rerun-failed resumes them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_support import make_config_sweep, output_of
from trainer_support import read_jsonl, subprocess_env, tiny_dict, without_timing

from sweepgen_trainer.rundir.outputs import RunDir

pytestmark = [pytest.mark.slow, pytest.mark.train]

# the Ctrl-C test waits for 3 steps of both runs, so one run started late may leave the other far
# ahead: its 24 steps keep both mid-run; the kill test needs only a checkpoint (step 4) and steps
# after it, for the resumed half to equal the uninterrupted run on: 8 steps give one checkpoint
# before the kill (polled every 0.1 s, 4 training steps before the next one) and 4 resumed steps
STEPS, SAVE = 24, 4
KILL_STEPS = 2 * SAVE
# three runs, two at a time: the victim, one beside it and one queued behind them (a fourth would only
# add another trainer process, about 10 CPU-seconds of imports, testing nothing more)
NAMES = [f"s{seed}" for seed in range(3)]


def sweepgen(*args: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sweepgen", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def run_straight(config: dict, output_dir: Path) -> list[dict]:
    """``config`` trained in this process, uninterrupted, into ``output_dir``: its metrics rows."""
    from sweepgen_trainer.config import RunConfig  # torch and trl: only where a test trains
    from sweepgen_trainer.run import run

    run(RunConfig.model_validate({**config, "output_dir": str(output_dir)}))
    return read_jsonl(output_dir / "metrics.jsonl")


def _checkpoint_steps(run_dir: Path) -> list[int]:
    ckpts = run_dir / "checkpoints"
    if not ckpts.is_dir():
        return []
    return sorted(
        int(p.name.split("-")[1]) for p in ckpts.glob("checkpoint-*") if (p / "trainer_state.json").is_file()
    )


def test_three_run_sweep_jobs_2_then_kill_one_and_resume_only_it(tmp_path, monkeypatch, tiny_cache):
    monkeypatch.chdir(tmp_path)
    env = {**subprocess_env(tiny_cache), "COLUMNS": "200"}
    configs = {}
    for seed, name in enumerate(NAMES):
        configs[name] = tiny_dict(
            # beta > 0: the resumed half must also rebuild the reference model the KL is taken to
            f"runs/tiny4/{name}",
            grpo={"max_steps": KILL_STEPS, "beta": 0.02},
            logging={"save_steps": SAVE},
        )
        configs[name].update(run_name=name, seed=seed)
    make_config_sweep(tmp_path, configs, sweep="tiny4", values={n: {"seed": i} for i, n in enumerate(NAMES)})
    victim = tmp_path / "runs/tiny4/s0"

    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "run", "generated/tiny4", "--jobs", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    # kill s0 once it has a checkpoint past step 0 and is still training
    while not (_checkpoint_steps(victim) and not (victim / "summary.json").exists()):
        assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
        time.sleep(0.1)
    # the trainer, as the OOM killer would (the pid status shows is its supervisor's)
    pid = json.loads((victim / "sweepgen_status.json").read_text())["ids"]["trainer_pgid"]
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err  # one run failed
    status = json.loads((victim / "sweepgen_status.json").read_text())
    assert status["state"] == "failed" and status["reason"] == "killed by SIGKILL (out of memory?)"
    for name in NAMES[1:]:
        assert (tmp_path / f"runs/tiny4/{name}/summary.json").is_file(), name
    assert "s0 failed (killed by SIGKILL (out of memory?))" in err
    table = out[out.index("results") :]
    assert table.count("finished") == len(NAMES) - 1 and f"{KILL_STEPS}/{KILL_STEPS}" in table
    # the checkpoint the trainer resumes from: the newest complete one (the kill may cut a save after
    # its trainer_state.json was written; the trainer then skips that checkpoint)
    resumable = RunDir(victim).last_checkpoint(warn=lambda _why: None)
    assert resumable is not None
    killed_at = int(resumable.name.split("-")[1])
    assert 0 < killed_at < KILL_STEPS

    plain = sweepgen("run", "generated/tiny4", env=env)  # a failure is not retried unasked
    assert plain.returncode == 1 and "--rerun-failed" in plain.stderr

    again = sweepgen("run", "generated/tiny4", "--jobs", "2", "--rerun-failed", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    for name in NAMES[1:]:  # skipped: one attempt each, untouched
        run_dir = tmp_path / f"runs/tiny4/{name}"
        assert json.loads((run_dir / "sweepgen_status.json").read_text())["attempt"] == 1
        assert "attempt 2" not in (run_dir / "run.log").read_text()
    summary = json.loads((victim / "summary.json").read_text())
    assert summary["resumed_from"] == f"checkpoint-{killed_at}"  # not from step 0
    assert "# resuming from" in (victim / "run.log").read_text().split("attempt 2")[1]
    resumed = read_jsonl(victim / "metrics.jsonl")
    assert [row["step"] for row in resumed] == list(range(1, KILL_STEPS + 1))  # none lost, none doubled
    # the resumed run continues exactly where the uninterrupted one would have been
    assert without_timing(resumed) == without_timing(run_straight(configs["s0"], tmp_path / "straight"))

    report = sweepgen("report", "generated/tiny4", env=env)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "runs/tiny4/report.csv").read_text().count("\n") == 1 + len(NAMES)
    assert (tmp_path / "runs/tiny4/report.png").stat().st_size > 10_000


def test_ctrl_c_stops_real_runs_at_a_checkpoint_and_rerun_failed_resumes_them(
    tmp_path, monkeypatch, tiny_cache
):
    monkeypatch.chdir(tmp_path)
    env = {**subprocess_env(tiny_cache), "COLUMNS": "200"}
    names = ["a", "b"]
    configs = {}
    for seed, name in enumerate(names):
        # no periodic checkpoint: the only one is what the trainer saves when it is asked to stop;
        # beta > 0: the resumed half must also rebuild the reference model the KL is taken to
        configs[name] = tiny_dict(
            f"runs/stop/{name}", grpo={"max_steps": STEPS, "beta": 0.02}, logging={"save_steps": 1000}
        )
        configs[name].update(run_name=name, seed=seed)
    make_config_sweep(tmp_path, configs, sweep="stop", values={n: {"seed": i} for i, n in enumerate(names)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "run", "generated/stop", "--jobs", "2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    metrics = [tmp_path / f"runs/stop/{n}/metrics.jsonl" for n in names]
    while not all(m.is_file() and len(read_jsonl(m)) >= 3 for m in metrics):
        assert time.monotonic() < deadline and proc.poll() is None, output_of(proc)
        time.sleep(0.1)
    pids = [
        json.loads((tmp_path / f"runs/stop/{n}/sweepgen_status.json").read_text())["ids"]["pid"]
        for n in names
    ]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert not [p for p in pids if Path(f"/proc/{p}").exists()]
    stopped_at = {}
    for name in names:
        run_dir = tmp_path / f"runs/stop/{name}"
        status = json.loads((run_dir / "sweepgen_status.json").read_text())
        assert status["state"] == "cancelled" and status["exit_code"] == 128 + signal.SIGTERM, status
        assert not (run_dir / "summary.json").exists()
        # the one checkpoint (save_steps is far away), saved on the way out at the step the run
        # stopped on, complete: not killed
        assert len(list((run_dir / "checkpoints").glob("checkpoint-*"))) == 1
        stop = stopped_at[name] = _checkpoint_steps(run_dir)[-1]
        assert 0 < stop < STEPS
        assert [r["step"] for r in read_jsonl(run_dir / "metrics.jsonl")] == list(range(1, stop + 1))
        log = (run_dir / "run.log").read_text()  # the trainer's stdout and stderr
        assert "received SIGTERM: stopping at the end of the current step" in log, log[-3000:]
        assert f"# SIGTERM: stopping after step {stop}/{STEPS}" in log, log[-3000:]
        assert f"stopped by SIGTERM after step {stop} of {STEPS}" in log and "Traceback" not in log

    again = sweepgen("run", "generated/stop", "--jobs", "2", "--rerun-failed", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    for name in names:
        summary = json.loads((tmp_path / f"runs/stop/{name}/summary.json").read_text())
        assert summary["resumed_from"] == f"checkpoint-{stopped_at[name]}"
        resumed = read_jsonl(tmp_path / f"runs/stop/{name}/metrics.jsonl")
        assert [row["step"] for row in resumed] == list(range(1, STEPS + 1))
        # the stopped and resumed run equals an uninterrupted one: same per-step rewards, losses, ...
        straight = run_straight(configs[name], tmp_path / "straight" / name)
        assert without_timing(resumed) == without_timing(straight)
