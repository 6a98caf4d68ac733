"""`sweepgen run --executor slurm`, `status`, `cancel` and `report` against a real Slurm (started by
the session fixture in slurm_cluster.py): the bundled trainer's tiny model as one job array, and a
sweep of the fake trainer in which one run fails, one is cancelled and one hits its time limit."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from run_support import FAKE_COMMAND, LOADED_S, make_sweep
from slurm_support import cli, status_json, wait_until

from sweepgen.run.core.base import RunState, read_status, write_status
from sweepgen.run.core.plan.tasks import config_fingerprint

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.usefixtures("slurm_cluster")]


@pytest.fixture
def cwd(cli_cwd):
    return cli_cwd


def journal(sweep_root: Path) -> list[dict]:
    return json.loads((sweep_root / ".sweepgen_slurm" / "jobs.json").read_text())["arrays"]


def add_resources(folder: Path, **resources) -> None:
    path = folder / "sweep.lock.json"
    lock = json.loads(path.read_text())
    lock["resources"] = resources
    path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")


TINY_SPEC = """\
sweepgen: 1
name: tiny_slurm
template: ../templates/run.yaml.j2
output: "{{ variant.name }}.yaml"
run_name: "{{ variant.name }}"
schema: sweepgen_trainer.config:RunConfig
base:
  run_name: base
  output_dir: runs/tiny_slurm/base
  seed: 0
  reward: {name: happy_count, params: {cap: 4}}
  grpo: {learning_rate: 5.0e-3, lr_scheduler_type: constant, num_generations: 4, batch_size: 8,
         max_steps: 3, max_completion_length: 8, beta: 0.0}
  logging: {save_steps: 1000}
variants:
%s
allow: [seed, run_name, output_dir]
resources: {time: 10, cpus_per_run: 1}
"""


def test_tiny_model_sweep_runs_as_one_array_and_report_reads_it(cwd, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SWEEPGEN_CACHE", str(tmp_path_factory.getbasetemp() / "sweepgen-cache"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    variants = "\n".join(
        f"  s{i}: {{seed: {i}, run_name: s{i}, output_dir: runs/tiny_slurm/s{i}}}" for i in range(4)
    )
    (cwd / "specs").mkdir()
    (cwd / "templates").mkdir()
    (cwd / "specs" / "tiny.yaml").write_text(TINY_SPEC % variants)
    (cwd / "templates" / "run.yaml.j2").write_text("{{ config | to_yaml }}\n")
    assert cli("render", "specs/tiny.yaml").exit_code == 0

    result = cli("run", "generated/tiny_slurm", "--executor", "slurm")
    assert result.exit_code == 0, result.output
    # run returns once the array is submitted, not when its runs end: a state, not a duration (a
    # loaded machine slows run and the jobs alike), and four trainings on two CPUs cannot all be done
    summaries = [cwd / f"runs/tiny_slurm/s{i}/summary.json" for i in range(4)]
    assert not all(path.exists() for path in summaries), "run waited for the runs to end"
    assert "submitted 4 run(s)" in result.output
    (array,) = journal(cwd / "runs/tiny_slurm")
    assert sorted(array["runs"].values()) == ["s0", "s1", "s2", "s3"]
    assert {job_id.split("_")[0] for job_id in array["runs"]} == {array["array_job_id"]}  # one array

    rows = wait_until(
        "generated/tiny_slurm",
        lambda r: all(x["state"] not in ("PENDING", "RUNNING") for x in r.values()),
        300,
        "the tiny sweep",
    )
    assert {name: row["state"] for name, row in rows.items()} == dict.fromkeys(
        ["s0", "s1", "s2", "s3"], "FINISHED"
    )
    assert {row["job_id"] for row in rows.values()} == set(array["runs"])
    for i in range(4):
        summary = json.loads((cwd / f"runs/tiny_slurm/s{i}/summary.json").read_text())
        assert summary["steps"] == 3
        # the stale-config check covers Slurm runs too: each status records what its config says
        config = cwd / f"generated/tiny_slurm/s{i}.yaml"
        status = json.loads((cwd / f"runs/tiny_slurm/s{i}/sweepgen_status.json").read_text())
        assert status["config_fingerprint"] == config_fingerprint(config, config.read_bytes())
    report = cli("report", "generated/tiny_slurm")
    assert report.exit_code == 0, report.output
    for name in ("s0", "s1", "s2", "s3"):
        assert name in report.output
    # finished runs are never submitted again, even when asked to rerun failures
    again = cli("run", "generated/tiny_slurm", "--executor", "slurm", "--rerun-failed")
    assert again.exit_code == 0, again.output
    assert len(journal(cwd / "runs/tiny_slurm")) == 1


def test_failed_cancelled_and_timed_out_runs_are_reported_and_only_they_rerun(cwd):
    # the time-limit sweep first: its run holds one of the two CPUs while the other sweep goes on
    limit = make_sweep(cwd, {"limit": {"steps": 1000, "sleep": 0.2}}, sweep="limit")
    add_resources(limit, time=1)
    faulty = make_sweep(
        cwd,
        {
            "ok": {"steps": 2},
            "bad": {"fail_at": 1, "fail_attempts": 1},
            "slow": {"steps": 1000, "sleep": 0.2},
        },
        sweep="faulty",
    )
    add_resources(faulty, time=10)
    for folder in ("generated/limit", "generated/faulty"):
        result = cli("run", folder, "--executor", "slurm", "--command", FAKE_COMMAND)
        assert result.exit_code == 0, result.output

    wait_until("generated/faulty", lambda r: r["slow"]["state"] == "RUNNING", 60, "slow to start")
    t0 = time.monotonic()
    result = cli("cancel", "generated/faulty", "--only", "slow")
    assert result.exit_code == 0, result.output
    # the slow run would go on for 200 s (1000 steps of 0.2 s); 150 s leaves a loaded machine room
    assert time.monotonic() - t0 < 150, "cancel must return once Slurm has ended the job"
    rows = wait_until(
        "generated/faulty",
        lambda r: r["ok"]["state"] == "FINISHED" and r["bad"]["state"] == "FAILED",
        60,
        "ok and bad to end",
    )
    assert rows["slow"]["state"] == "CANCELLED"

    # a node that died before recording the end (killed, out of memory): only Slurm knows it ended.
    # `status` shows Slurm's word and writes nothing (it reads runs folders others share); `run`
    # records it (SECURITY.md: reading commands write nothing)
    slow_status = cwd / "runs/faulty/slow/sweepgen_status.json"
    recorded = read_status(slow_status.parent)
    write_status(slow_status.parent, replace(recorded, state=RunState.RUNNING, ended=None, exit_code=None))
    unrecorded, stat_before = slow_status.read_bytes(), slow_status.stat()
    assert status_json("generated/faulty")["slow"]["state"] == "CANCELLED"
    assert slow_status.read_bytes() == unrecorded
    assert (slow_status.stat().st_ino, slow_status.stat().st_mtime_ns) == (
        stat_before.st_ino,
        stat_before.st_mtime_ns,
    )

    shown = cli("status", "generated/faulty")
    assert shown.exit_code == 1
    assert "── bad FAILED (exit code 3); last lines of runs/faulty/bad/run.log:" in shown.stderr
    assert "fake_trainer: failing at step 1 as configured" in shown.stderr
    assert "── slow CANCELLED" in shown.stderr
    first_ids = {name: row["job_id"] for name, row in rows.items()}

    result = cli(
        "run", "generated/faulty", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed"
    )
    assert result.exit_code == 0, result.output
    arrays = journal(cwd / "runs/faulty")
    assert sorted(arrays[-1]["runs"].values()) == ["bad", "slow"]  # never the finished one
    # one CPU may still be held by the time-limit run, and `slow` may get the other first
    rows = wait_until(
        "generated/faulty", lambda r: r["bad"]["state"] == "FINISHED", 150, "bad's second attempt"
    )
    assert rows["ok"]["job_id"] == first_ids["ok"] and rows["ok"]["attempt"] == 1
    assert rows["bad"]["attempt"] == 2 and rows["bad"]["job_id"] != first_ids["bad"]
    assert rows["slow"]["attempt"] == 2
    assert cli("cancel", "generated/faulty").exit_code == 0  # the slow one again, so it frees the CPU
    assert status_json("generated/faulty")["slow"]["state"] == "CANCELLED"

    rows = wait_until(
        "generated/limit", lambda r: r["limit"]["state"] not in ("PENDING", "RUNNING"), 150, "the time limit"
    )
    assert rows["limit"]["state"] == "TIMEOUT"
    assert "time limit" in rows["limit"]["reason"]
    assert rows["limit"]["log_tail"][-1].startswith("fake_trainer: step")  # it ran until it was stopped
    assert (cwd / "runs/limit/limit/checkpoints/state.json").exists()  # and can resume with --rerun-failed


def test_wait_follows_the_array_to_the_end(cwd):
    make_sweep(cwd, {"a": {"steps": 2}, "b": {"fail_at": 1}}, sweep="w")
    add_resources(Path("generated/w"), time=5)
    result = cli("run", "generated/w", "--executor", "slurm", "--command", FAKE_COMMAND, "--wait")
    assert result.exit_code == 1  # b failed
    assert "b: failed (exit code 3)" in result.output
    rows = status_json("generated/w")
    assert rows["a"]["state"] == "FINISHED" and rows["b"]["state"] == "FAILED"
    # sacct says who submitted an ended job and from where, what proves it the run's (ownership.py)
    import pwd

    from sweepgen.run.slurm import query as slurm_query

    job = rows["b"]["job_id"]
    deadline = time.monotonic() + LOADED_S  # slurmdbd records an ended job a moment after it ends
    while job not in (answered := slurm_query.sacct([job])):
        assert time.monotonic() < deadline, f"sacct never listed job {job}"
        time.sleep(0.5)
    ended = answered[job]
    assert ended.user == pwd.getpwuid(os.getuid()).pw_name, ended
    assert Path(ended.workdir).resolve() == cwd.resolve(), ended


def test_a_bad_partition_is_refused_at_submission_and_nothing_is_recorded(cwd):
    make_sweep(cwd, {"a": {}}, sweep="p")
    add_resources(Path("generated/p"), time=5, partition="no_such_partition")
    result = cli("run", "generated/p", "--executor", "slurm", "--command", FAKE_COMMAND)
    assert result.exit_code == 2
    # refused before submission (sbatch --test-only), with Slurm's own words
    assert "Slurm refuses the job array" in result.output and "partition" in result.output.lower()
    assert not (cwd / "runs/p/a/sweepgen_status.json").exists()


def test_status_wait_follows_from_another_shell_until_the_runs_end(cwd):
    import subprocess
    import sys

    make_sweep(cwd, {"a": {"steps": 3, "sleep": 0.5}}, sweep="sw")
    add_resources(Path("generated/sw"), time=5)
    assert cli("run", "generated/sw", "--executor", "slurm", "--command", FAKE_COMMAND).exit_code == 0
    # a second `run` while the job is queued or running leaves it alone (one squeue tells it is alive)
    # and, not waiting, does not call the sweep done: exit 1, "still running elsewhere"
    again = cli("run", "generated/sw", "--executor", "slurm", "--command", FAKE_COMMAND, "--rerun-failed")
    assert again.exit_code == 1, again.output
    assert "still running (job_id" in again.output and "still running elsewhere" in again.output
    assert len(journal(cwd / "runs/sw")) == 1
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen", "status", "generated/sw", "--wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    # `run --wait` follows the job another `run` submitted to its end (the recorded command line)
    waited = cli("run", "generated/sw", "--wait")
    assert waited.exit_code == 0, waited.output
    assert "a: finished" in waited.output and len(journal(cwd / "runs/sw")) == 1
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert "FINISHED" in proc.stdout
    assert (cwd / "runs/sw/a/summary.json").exists()
