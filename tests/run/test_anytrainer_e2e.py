"""Any trainer, end to end through the real CLI: a foreign trainer that writes only metrics.csv (no
summary.json) finishes on exit 0, is reported on --metric, a failing run is shown failed with its
log tail, and --rerun-failed reruns only it."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

TRAINER = Path(__file__).resolve().parents[1] / "fixtures" / "csv_trainer.py"
COMMAND = f"{shlex.quote(sys.executable)} {shlex.quote(str(TRAINER))} {{config}}"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def starts(name: str) -> int:
    return len(Path(f"runs/csv/{name}/starts.txt").read_text().splitlines())


def status(name: str) -> dict:
    return json.loads(Path(f"runs/csv/{name}/sweepgen_status.json").read_text())


def make(root: Path) -> None:
    runs = {
        "lr1": ({"steps": 4}, {"lr": 1}),
        "lr2": ({"steps": 3}, {"lr": 2}),
        "flaky": ({"steps": 3, "fail_attempts": 1}, {"lr": 3}),
        "nometric": ({"steps": 2, "columns": ["loss"]}, {"lr": 4}),
    }
    configs = {
        name: {"output_dir": f"runs/csv/{name}", "lr": values["lr"], "csv": spec}
        for name, (spec, values) in runs.items()
    }
    make_config_sweep(root, configs, sweep="csv", values={n: v for n, (_, v) in runs.items()})


def test_a_foreign_trainer_runs_reports_and_reruns_only_its_failed_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    first = cli("run", "generated/csv", "--command", COMMAND)
    assert first.exit_code == 1, first.output
    assert {n: status(n)["state"] for n in ("lr1", "lr2", "flaky", "nometric")} == {
        "lr1": "finished",
        "lr2": "finished",
        "flaky": "failed",
        "nometric": "finished",
    }
    assert not any(Path("runs/csv").glob("*/summary.json"))  # finished on exit 0 alone
    assert "flaky failed (exit code 3)" in first.stderr
    assert "csv_trainer: failing at step 1 as configured" in first.stderr  # its log tail
    assert (Path("runs/csv/flaky") / "run.log").is_file()  # run.log and the status beside its output

    shown = cli("status", "generated/csv")
    assert shown.exit_code == 1 and "FAILED" in shown.stdout and "FINISHED" in shown.stdout

    report = cli("report", "generated/csv", "--metric", "acc", "--at", "best", "--no-plot")
    assert report.exit_code == 0, report.output
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/csv/report.csv").read_text().splitlines())}
    assert list(rows) == ["lr1", "lr2", "flaky", "nometric"]  # nobody dropped
    # lr1: acc 0.6, 0.7, 0.8, then 0.9 - 0.15 at its last step 4: best 0.8 at step 3
    assert float(rows["lr1"]["best_acc"]) == 0.8 and rows["lr1"]["at_step"] == "3"
    assert rows["lr1"]["final_step"] == "4" and rows["lr1"]["source"] == "metrics.csv"
    assert rows["nometric"]["best_acc"] == "" and "no `acc` logged" in rows["nometric"]["note"]
    assert rows["flaky"]["state"] == "failed"
    best = "best run by best_acc (max is better: --mode min if a lower value is): "
    assert best + "lr1 = 0.800 at step 3" in report.stdout

    plain = cli("report", "generated/csv", "--no-plot")  # no --metric, no summary.json, no reward logged
    assert plain.exit_code == 2, plain.output  # never a table of dashes
    assert "no logged metric is a reward" in plain.stderr and "logged: acc, loss" in plain.stderr
    lone = cli("report", "generated/csv", "--mode", "min", "--no-plot")
    assert lone.exit_code == 2 and "--mode and --at need --metric" in lone.stderr

    final = cli("report", "generated/csv", "--metric", "loss", "--mode", "min", "--at", "final", "--no-plot")
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/csv/report.csv").read_text().splitlines())}
    assert final.exit_code == 0 and float(rows["lr1"]["final_loss"]) == 0.25

    again = cli("run", "generated/csv", "--command", COMMAND, "--rerun-failed")
    assert again.exit_code == 0, again.output
    assert {n: starts(n) for n in ("lr1", "lr2", "flaky", "nometric")} == {
        "lr1": 1,
        "lr2": 1,
        "flaky": 2,
        "nometric": 1,
    }
    assert status("flaky")["state"] == "finished" and status("flaky")["attempt"] == 2
    assert cli("status", "generated/csv").exit_code == 0


def test_a_declared_done_file_is_required_on_top_of_exit_0(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    result = cli("run", "generated/csv", "--only", "lr1", "--command", COMMAND, "--done-file", "model.bin")
    assert result.exit_code == 1
    assert status("lr1")["state"] == "failed" and status("lr1")["reason"] == "exited 0 but wrote no model.bin"
    remembered = cli("run", "generated/csv", "--done-file", "../x")  # the recorded --command is reused
    assert remembered.exit_code == 2 and "inside the run directory" in remembered.stderr
    (tmp_path / "generated/csv/.sweepgen-run.json").unlink()  # a sweep never run: no command to reuse
    bad = cli("run", "generated/csv", "--done-file", "../x")
    assert bad.exit_code == 2 and "--done-file is for a trainer given with --command" in bad.stderr
    outside = cli("run", "generated/csv", "--command", COMMAND, "--done-file", "../x")
    assert outside.exit_code == 2 and "inside the run directory" in outside.stderr


def test_run_help_says_when_a_run_is_finished():
    text = cli("run", "--help").output
    assert "it left --done-file if one is given, else it exited 0" in " ".join(text.split())
    assert "A done file is the proof: a non-zero exit after it" in " ".join(text.split())
    assert "run_dir" in text and "--rerun-failed" in text


def test_a_foreign_run_stopped_by_sweepgen_is_cancelled_even_if_it_exits_0(tmp_path, monkeypatch):
    """Exit 0 proves nothing about a run sweepgen stopped: a trainer may treat SIGTERM as "done"."""
    from sweepgen.run.core.base import ExecutorOptions, RunState
    from sweepgen.run.core.plan.tasks import load_sweep, parse_command
    from sweepgen.run.local.executor import LocalExecutor

    monkeypatch.chdir(tmp_path)
    configs = {
        "slow": {"output_dir": "runs/csv/slow", "csv": {"steps": 50, "sleep": 0.2, "exit_0_on_sigterm": True}}
    }
    make_config_sweep(tmp_path, configs, sweep="csv", values={})
    sweep = load_sweep(Path("generated/csv"), command=parse_command(COMMAND))
    ex = LocalExecutor(ExecutorOptions(sweep_dir=Path("generated/csv"), lock=sweep.lock, stop_timeout_s=10))
    ex.start(sweep.tasks)
    while not Path("runs/csv/slow/metrics.csv").is_file():
        ex.poll()
    ex.cancel()
    final = ex.poll()["slow"]
    assert final.exit_code == 0 and final.state is RunState.CANCELLED
    assert status("slow")["state"] == "cancelled"
    assert cli("status", "generated/csv").exit_code == 1  # and `status` agrees


def test_a_spec_run_dir_template_places_the_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("templates").mkdir()
    Path("templates/t.yaml.j2").write_text("{{ config | to_yaml }}\n")
    Path("specs").mkdir()
    spec = (
        "sweepgen: 1\nname: rd\ntemplate: ../templates/t.yaml.j2\noutput: '{{ variant.name }}.yaml'\n"
        "run_name: 'lr{{ lr }}'\nrun_dir: 'out/{{ sweep.name }}/{{ variant.run_name }}'\n"
        "base: {lr: 1, csv: {steps: 2}}\ngrid: {lr: [1, 2]}\n"
    )
    Path("specs/rd.yaml").write_text(spec)
    assert cli("render", "specs/rd.yaml").exit_code == 0
    lock = json.loads(Path("generated/rd/sweep.lock.json").read_text())
    assert [e["run_dir"] for e in lock["files"]] == ["out/rd/lr1", "out/rd/lr2"]
    # the trainer is told where through {run_dir}; its config has no output_dir at all
    Path("t.py").write_text(
        "import pathlib, sys\n"
        "d = pathlib.Path(sys.argv[1])\n"
        "d.mkdir(parents=True, exist_ok=True)\n"
        "(d / 'metrics.csv').write_text('step,acc\\n1,0.5\\n')\n"
    )
    command = f"{shlex.quote(sys.executable)} t.py {{run_dir}} {{config}}"
    result = cli("run", "generated/rd", "--command", command)
    assert result.exit_code == 0, result.output
    assert json.loads(Path("out/rd/lr2/sweepgen_status.json").read_text())["state"] == "finished"
    assert (Path("out/rd/lr1") / "run.log").is_file()
    report = cli("report", "generated/rd", "--metric", "acc", "--no-plot")
    assert report.exit_code == 0 and Path("out/rd/report.csv").is_file()

    # a config that names another output_dir would send the trainer elsewhere: refused
    Path("specs/rd.yaml").write_text(spec.replace("base: {lr: 1,", "base: {output_dir: elsewhere, lr: 1,"))
    assert cli("render", "specs/rd.yaml").exit_code == 0
    result = cli("run", "generated/rd", "--command", command)
    assert result.exit_code == 2
    assert "the spec's run_dir 'out/rd/lr1' and the config's output_dir 'elsewhere' differ" in result.stderr

    for bad, message in (("'../{{ variant.name }}'", "not a relative path"), ("'out/same'", "same run_dir")):
        Path("specs/rd.yaml").write_text(spec.replace("'out/{{ sweep.name }}/{{ variant.run_name }}'", bad))
        result = cli("render", "specs/rd.yaml")
        assert result.exit_code == 2 and message in result.stderr and "specs/rd.yaml:6:" in result.stderr


def test_a_committed_run_state_never_chooses_the_command(tmp_path, monkeypatch):
    """A pull request that commits its own .sweepgen-run.json would choose what a plain `sweepgen run
    DIR` executes: a recorded command is replayed only from a file git does not track."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("needs git to commit the run-state file")
    monkeypatch.chdir(tmp_path)
    make(tmp_path)
    canary = tmp_path / "canary"
    state = tmp_path / "generated/csv/.sweepgen-run.json"
    hostile = {"version": 1, "options": {"command": f"touch {canary}", "shell": True}}
    state.write_text(json.dumps(hostile))
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "pr"],
    ):
        subprocess.run([git, *args], cwd=tmp_path, check=True, capture_output=True)

    plain = cli("run", "generated/csv", "--only", "lr1")
    assert plain.exit_code == 2, plain.output
    assert "is committed to git" in plain.stderr and "--command" in plain.stderr
    assert not canary.exists() and not Path("runs/csv/lr1").exists()  # nothing ran

    given = cli("run", "generated/csv", "--only", "lr1", "--command", COMMAND)  # the person's own command
    assert given.exit_code == 0, given.output
    assert not canary.exists() and starts("lr1") == 1

    subprocess.run([git, "rm", "-q", "--cached", str(state)], cwd=tmp_path, check=True)
    replayed = cli("run", "generated/csv", "--only", "lr2")  # written by this machine's run: replayed
    assert replayed.exit_code == 0, replayed.output and starts("lr2") == 1
