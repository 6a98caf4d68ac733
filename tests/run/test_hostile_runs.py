"""Run folders hold what a foreign trainer wrote: `report` and `run` read them defensively.

Before: `report` and `run` hung on a FIFO named summary.json; `report` exited 70 on a summary or
metrics line nested a million deep, on NaN, and on run files that link to /dev/zero. Now every such
run is listed with the reason (`warning: run NAME: ...`), the others are reported, nothing hangs,
nothing outside the project changes, and the exit code is never 70.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fs_support import ENV, snapshot
from spec_support import write_project

BOUND = 60  # seconds; generous for a loaded machine (a hang is what is tested)
DEEP = "[" * 200_000 + "]" * 200_000


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", *args],
        cwd=cwd,
        env={**ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=BOUND * 2,
        check=False,
    )
    assert time.monotonic() - started < BOUND
    assert "Traceback" not in done.stderr and done.returncode != 70, done.stderr
    return done.returncode, done.stdout, done.stderr


def _runs(tmp_path: Path) -> Path:
    """tmp_path/proj/runs with one good run `a` and one run `b` to spoil; tmp_path/outside untouched."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    runs = tmp_path / "proj" / "runs"
    for name, lr in (("a", 0.1), ("b", 0.2)):
        (runs / name).mkdir(parents=True)
        (runs / name / "config.yaml").write_text(f"lr: {lr}\n")
        (runs / name / "summary.json").write_text('{"final_reward": 0.5}\n')
        (runs / name / "metrics.jsonl").write_text('{"step": 1, "acc": 0.5}\n{"step": 2, "acc": 0.75}\n')
    return runs


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _link_zero(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize(
    "spoil, metric, reason",
    [
        (lambda b: _fifo(b / "summary.json"), None, "summary.json is not a regular file (a FIFO)"),
        (lambda b: _link_zero(b / "summary.json"), None, "summary.json is a symbolic link (never followed)"),
        (
            lambda b: _link_zero(b / "metrics.jsonl"),
            "acc",
            "metrics.jsonl is a symbolic link (never followed)",
        ),
        (lambda b: _fifo(b / "metrics.jsonl"), "acc", "metrics.jsonl is not a regular file (a FIFO)"),
        (lambda b: (b / "summary.json").write_text(DEEP), None, "summary.json is nested too deeply"),
        (
            lambda b: (b / "metrics.jsonl").write_text('{"step": 1, "acc": ' + DEEP + "}\n"),
            "acc",
            "metrics.jsonl line 1 is nested too deeply",
        ),
        (
            lambda b: (b / "summary.json").write_text('{"final_reward": NaN}'),
            None,
            "summary.json holds NaN, which is not a number",
        ),
        (
            lambda b: (b / "summary.json").write_text('{"final_reward": 1e999}'),
            None,
            "summary.json holds a number too large for a float at final_reward",
        ),
        (
            lambda b: (b / "metrics.jsonl").write_text('{"step": 1, "acc": 0.5}\n{"step": 2, "acc": NaN}\n'),
            "acc",
            "1 NaN or infinite value(s) of `acc` left out",
        ),
        (lambda b: (b / "summary.json").write_bytes(b"\x00garbage{"), None, "summary.json is not valid JSON"),
        (
            lambda b: _fifo(b / "sweepgen_status.json"),
            None,
            "sweepgen_status.json is not a regular file (a FIFO)",
        ),
        (
            lambda b: (b / "sweepgen_status.json").write_bytes(b"\x00garbage{"),
            None,
            "sweepgen_status.json run status is not valid JSON",
        ),
        (
            lambda b: (b / "trainer_state.json").write_text('{"log_history": [{"step": 3, "acc": 1'),
            None,
            "trainer_state.json is not valid JSON",
        ),
        (
            lambda b: _fifo(b / "trainer_state.json"),
            None,
            "trainer_state.json is not a regular file (a FIFO)",
        ),
    ],
    ids=[
        "fifo-summary",
        "dev-zero-summary",
        "dev-zero-metrics",
        "fifo-metrics",
        "deep-summary",
        "deep-metrics-line",
        "nan-summary",
        "inf-summary",
        "nan-metric",
        "garbage-summary",
        "fifo-status",
        "garbage-status",
        "garbage-trainer-state",
        "fifo-trainer-state",
    ],
)
def test_report_lists_a_spoiled_run_with_the_reason(tmp_path, spoil, metric, reason):
    runs = _runs(tmp_path)
    spoil(runs / "b")
    before = snapshot(tmp_path, runs)
    args = ["report", "runs", "--no-plot"] + (["--metric", metric] if metric else [])
    code, out, err = _cli(runs.parent, *args)
    assert code == 0, err
    assert f"warning: run b: {reason}" in err, err
    assert "warning: run a" not in err
    code, out, err = _cli(runs.parent, *args, "--format", "json")  # listed with machine output too
    assert code == 0 and f"warning: run b: {reason}" in err and out.lstrip().startswith("["), err
    assert snapshot(tmp_path, runs) == before


@pytest.mark.parametrize("where", ["trainer_state.json", "checkpoint-5/trainer_state.json"])
@pytest.mark.parametrize("metric", [[], ["--metric", "not_logged"]])
def test_a_spoiled_trainer_state_among_foreign_runs_is_listed_with_its_run(tmp_path, where, metric):
    """TRL's runs leave no summary.json: `report` picks the reward from the metric names every run
    logged (or lists them for a metric none logged). One run's garbage trainer_state.json ended the
    report with exit 2 naming it; it is that run's problem, and the others are reported."""
    runs = _runs(tmp_path)
    for name, reward in (("a", 0.5), ("b", 0.7), ("c", 0.9)):
        (runs / name).mkdir(exist_ok=True)
        (runs / name / "summary.json").unlink(missing_ok=True)
        (runs / name / "metrics.jsonl").unlink(missing_ok=True)
        done = {"state": "finished", "executor": "local", "exit_code": 0, "done_file": None, "version": 1}
        (runs / name / "sweepgen_status.json").write_text(json.dumps(done))  # a foreign trainer's end
        (runs / name / "config.yaml").write_text(f"lr: {reward}\n")
        state = {"global_step": 2, "log_history": [{"step": 2, "reward": reward}]}
        (runs / name / "trainer_state.json").write_text(json.dumps(state))
    (runs / "b" / "trainer_state.json").unlink()
    (runs / "b" / where).parent.mkdir(exist_ok=True)
    (runs / "b" / where).write_bytes(b'{"log_history": [{"step": 3, "reward": 1')
    code, out, err = _cli(runs.parent, "report", "runs", "--no-plot", *metric)
    if metric:  # still a metric no run logged: exit 2 listing what the readable runs logged
        assert code == 2 and "logged: reward" in err, err
        return
    assert code == 0, err
    assert "warning: run b: trainer_state.json is not valid JSON" in err, err
    assert "0.9" in out, out


def test_run_does_not_hang_on_a_fifo_summary(tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "victim.txt").write_text("keep me\n")
    proj = tmp_path / "proj"
    (proj / "specs").mkdir(parents=True)
    (proj / "templates").mkdir()
    (proj / "templates" / "t.yaml.j2").write_text("output_dir: {{ output_dir }}\nlr: {{ lr }}\n")
    (proj / "specs" / "fifo.yaml").write_text(
        "sweepgen: 1\nname: fifo\ntemplate: ../templates/t.yaml.j2\noutput: 'lr{{ lr }}.yaml'\n"
        "base: {lr: 1, output_dir: x}\ngrid: {lr: [1]}\n"
        "derived: {output_dir: 'runs/{{ sweep.name }}/{{ variant.name }}'}\n"
    )
    (proj / "trainer.py").write_text(
        "import os, pathlib, sys\n"
        "d = pathlib.Path(sys.argv[1])\n"
        "d.mkdir(parents=True, exist_ok=True)\n"
        "(d / 'metrics.jsonl').write_text('{\"step\": 1, \"acc\": 0.5}\\n')\n"
        "os.mkfifo(d / 'summary.json')\n"
    )
    assert _cli(proj, "render", "specs/fifo.yaml")[0] == 0
    before = snapshot(tmp_path, proj)
    command = f"{shlex.quote(sys.executable)} trainer.py {{run_dir}} {{config}}"
    code, out, err = _cli(proj, "run", "generated/fifo", "--command", command)
    # a foreign trainer finishes on exit 0; its summary.json, a FIFO, is shown with the reason
    assert code == 0, out + err
    assert "summary.json is not a regular file (a FIFO)" in out + err, out + err
    assert snapshot(tmp_path, proj) == before


@pytest.mark.parametrize("name", ["../../secret", "/abs/secret", "..", ".", "", "a\0b", 7, ["x"], None])
def test_a_journal_controller_name_that_is_a_path_is_never_opened(tmp_path, monkeypatch, name):
    """The study journal names each running trial's controller; a name that is a path or not text
    names no controller (the trial is taken over), and no file anywhere is opened for it."""
    from sweepgen.fs import runfs
    from sweepgen.run.search.owner import Owner

    monkeypatch.chdir(tmp_path)
    owner = Owner(Path(".search"))
    opened: list[object] = []
    real_open_file = runfs.open_file

    def open_file(path, *args, **kwargs):
        opened.append(path)
        return real_open_file(path, *args, **kwargs)

    monkeypatch.setattr(runfs, "open_file", open_file)
    if isinstance(name, str) and name.startswith("/"):
        name = str(tmp_path / "secret")
    (tmp_path / "secret").write_text("x")
    try:
        assert owner.is_alive(name) is False
        assert opened == []
        assert owner.is_alive(owner.name) is True
    finally:
        owner.close()


def test_a_log_spoiled_between_two_reads_is_that_runs_problem(tmp_path, monkeypatch):
    """A run whose final value is NaN is read again to see it diverged; a shared runs folder's writer
    who spoils the log in between ended the whole report with exit 2 naming it. It is that run's
    reason for having no value, and the others are reported."""
    from sweepgen.run.logs import metrics
    from sweepgen.run.report import collect

    runs = _runs(tmp_path)
    (runs / "b" / "metrics.jsonl").write_text('{"step": 1, "acc": 0.5}\n{"step": 2, "acc": NaN}\n')
    first_read = metrics.find_in_run

    def then_spoiled(run_dir: Path, name: str, **kwargs: object):
        found = first_read(run_dir, name, **kwargs)  # type: ignore[arg-type]
        if run_dir.name == "b":
            _fifo(run_dir / "metrics.jsonl")
        return found

    monkeypatch.setattr(metrics, "find_in_run", then_spoiled)
    report = collect.collect(runs, collect.Objective("acc", "max", "final"))
    by_name = {r.name: r for r in report.runs}
    assert by_name["a"].score.value == 0.75
    assert by_name["b"].score.value is None
    assert "metrics.jsonl is not a regular file" in str(by_name["b"].score.missing)


def test_a_metric_in_refused_files_only_is_not_called_unlogged(tmp_path):
    """Every run's log is a link (a shared runs folder's, or a copy made with links): `report
    --metric acc` said no run logged `acc` and that the runs wrote no metrics file, sending the
    person to their trainer's config. It names the refused files now."""
    runs = _runs(tmp_path)
    for run in ("a", "b"):
        _link_zero(runs / run / "metrics.jsonl")
    code, _, err = _cli(runs.parent, "report", "runs", "--no-plot", "--metric", "acc")
    assert code == 2
    assert (
        "no finished run logged `acc` that sweepgen could read (run a: metrics.jsonl is a symbolic link"
        in err
    )
    assert "and 1 more" in err and "put the file itself where a refused one is" in err, err


SEARCH_SPEC = """\
sweepgen: 1
name: s
template: ../templates/t.yaml.j2
output: "{{ variant.name }}.yaml"
base: {seed: 0, lr: 0.1, output_dir: null}
derived: {output_dir: "runs/{{ sweep.name }}/{{ variant.name }}"}
search: {n: 2, parallel: 1, seed: 0, sampler: random, metric: acc, mode: max,
         axes: {lr: {log_uniform: [1.0e-6, 1.0e-4]}}}
"""


@pytest.mark.parametrize("steps, code", [(3_000, 2), (300, 0)])
def test_a_journal_optuna_replays_in_quadratic_time_is_refused(tmp_path, steps, code):
    """Optuna's replay copies a trial's whole dict of intermediate values for each one it adds: a
    4 MB journal of one trial's values held `status` 49 s, 100 MB for hours. Past the ceiling (here
    lowered in the environment, which may raise it) the journal is refused, naming the line."""
    project = tmp_path / "proj"
    project.mkdir()
    template = "seed: {{ seed }}\nlr: {{ lr }}\noutput_dir: {{ output_dir }}\n"
    write_project(project, head="", base="", body=SEARCH_SPEC, template=template, name="s.yaml")
    assert _cli(project, "render", "specs/s.yaml")[0] == 0
    ops = [
        {"op_code": 0, "worker_id": "w", "study_name": "sweepgen", "directions": [2]},
        {"op_code": 4, "worker_id": "w", "study_id": 0, "datetime_start": "2026-01-01T00:00:00+00:00"},
        *(
            {"op_code": 7, "worker_id": "w", "trial_id": 0, "step": i, "intermediate_value": 0.5}
            for i in range(steps)
        ),
    ]
    journal = project / "generated" / "s" / ".search" / "study.journal"
    journal.parent.mkdir()
    journal.write_text("".join(json.dumps(op) + "\n" for op in ops))
    got, out, err = _cli(project, "status", "generated/s", env={"SWEEPGEN_MAX_REPLAY_COPIES": "100000"})
    assert got == code, out + err
    if code:
        assert (
            "line 450: trial 0 holds 448 intermediate values" in err and "SWEEPGEN_MAX_REPLAY_COPIES" in err
        )
