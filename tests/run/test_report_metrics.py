"""Reading any run's metrics (sweepgen.run.logs.metrics) and scoring them for `report --metric`."""

from __future__ import annotations

import csv
import json
import os
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.errors import UserError
from sweepgen.run.logs import metrics
from sweepgen.run.report.collect import Objective, _score


def write_csv(path: Path, text: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "metrics.csv").write_text(text)
    return path


def test_csv_rows_with_empty_cells_and_non_numbers_are_skipped_per_cell(tmp_path):
    run = write_csv(tmp_path / "r", "step,train_loss,eval_acc,note\n1,0.9,,warmup\n2,0.7,0.6,\n3,nan,0.7,x\n")
    series = metrics.read_csv(run / "metrics.csv")
    assert series == {"train_loss": ((1, 0.9), (2, 0.7)), "eval_acc": ((2, 0.6), (3, 0.7))}


def test_a_csv_without_a_step_column_is_a_user_error(tmp_path):
    run = write_csv(tmp_path / "r", "epoch,acc\n1,0.5\n")
    with pytest.raises(UserError, match="no `step` column"):
        metrics.read_csv(run / "metrics.csv")


def test_jsonl_stops_at_a_cut_line_and_keeps_the_last_value_of_a_repeated_step(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "r": 0.1}\n{"step": 1, "r": 0.2}\n{"step": 2, "r": true}\n{"step": 3, "r"')
    assert metrics.read_jsonl(path) == {"r": ((1, 0.2),)}  # a bool is not a number


def test_sources_are_taken_in_order_and_named(tmp_path):
    run = write_csv(tmp_path / "r", "step,acc\n1,0.5\n")
    (run / "metrics.jsonl").write_text(json.dumps({"step": 1, "acc": 0.9}) + "\n")
    sources, series = metrics.find_in_run(run, "acc")
    assert series == metrics.Series("acc", "metrics.jsonl", ((1, 0.9),))
    assert metrics.names(sources) == ["acc"]


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_tensorboard_events_are_read_with_tensorboards_reader(tmp_path):
    import torch.utils.tensorboard as torch_tb

    writer = torch_tb.SummaryWriter(log_dir=str(tmp_path / "r" / "runs" / "Nov24"))
    for step, value in [(10, 0.25), (20, 0.75), (30, 0.5)]:
        writer.add_scalar("eval/acc", value, global_step=step)
    writer.close()
    sources, series = metrics.find_in_run(tmp_path / "r", "eval/acc")
    assert series is not None and series.source == "tensorboard"
    assert series.points == ((10, 0.25), (20, 0.75), (30, 0.5))
    assert series.best("max") == (20, 0.75) and series.best("min") == (10, 0.25) and series.final == (30, 0.5)


def test_score_takes_final_or_best_and_the_train_eval_gap(tmp_path):
    run = write_csv(tmp_path / "r", "step,train_acc,eval_acc\n1,0.6,0.5\n2,0.9,0.8\n3,0.95,0.7\n")
    sources, series = metrics.find_in_run(run, "eval_acc")
    best = _score(sources, series, Objective("eval_acc", "max", "best"))
    assert (best.value, best.step, best.final_step, best.source) == (0.8, 2, 3, "metrics.csv")
    assert best.gap == pytest.approx(0.1)
    final = _score(sources, series, Objective("eval_acc", "max", "final"))
    assert (final.value, final.step) == (0.7, 3) and final.gap == pytest.approx(0.25)
    low = _score(sources, series, Objective("eval_acc", "min", "best"))
    assert (low.value, low.step) == (0.5, 1)


def test_a_missing_metric_says_why_with_the_closest_name(tmp_path):
    run = write_csv(tmp_path / "r", "step,eval_acc\n1,0.5\n")
    sources, series = metrics.find_in_run(run, "eval_ac")
    assert series is None
    score = _score(sources, series, Objective("eval_ac", "max", "best"))
    assert score.value is None and score.missing == "no `eval_ac` logged (did you mean eval_acc?)"
    empty = _score({}, None, Objective("x"))
    assert empty.missing == "no metrics.jsonl, metrics.csv or TensorBoard events"


@given(st.lists(st.tuples(st.integers(0, 10**6), st.floats(-1e6, 1e6)), min_size=1, max_size=30))
def test_best_and_final_agree_with_a_plain_reading(points):
    by_step = dict(points)  # the last value of a repeated step wins, as in the readers
    series = metrics.Series("m", "metrics.csv", tuple(sorted(by_step.items())))
    assert series.final == max(by_step.items())
    top = max(by_step.values())
    assert series.best("max") == (min(s for s, v in by_step.items() if v == top), top)


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_report_cli_on_runs_that_logged_only_tensorboard_events(cli_cwd):
    import torch.utils.tensorboard as torch_tb

    from sweepgen.run.core.base import RunState, RunStatus, write_status

    configs = {n: {"output_dir": f"runs/tb/{n}", "lr": lr} for n, lr in (("a", 1), ("b", 2))}
    make_config_sweep(cli_cwd, configs, sweep="tb", values={"a": {"lr": 1}, "b": {"lr": 2}})
    for name, values in (("a", [0.2, 0.6, 0.4]), ("b", [0.3, 0.5, 0.7])):
        writer = torch_tb.SummaryWriter(log_dir=f"runs/tb/{name}/runs/Nov24_host")
        for step, value in enumerate(values, start=1):
            writer.add_scalar("eval/acc", value, global_step=step * 10)
        writer.close()
        finished = RunStatus(
            RunState.FINISHED, "local", exit_code=0, done_file=None, sweep_dir="generated/tb"
        )
        write_status(Path(f"runs/tb/{name}"), finished)
    result = CliRunner().invoke(main, ["report", "generated/tb", "--metric", "eval/acc", "--at", "best"])
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/tb/report.csv").read_text().splitlines())}
    assert float(rows["a"]["best_eval/acc"]) == pytest.approx(0.6) and rows["a"]["at_step"] == "20"
    assert float(rows["b"]["best_eval/acc"]) == pytest.approx(0.7) and rows["b"]["final_step"] == "30"
    assert {r["source"] for r in rows.values()} == {"tensorboard"}
    best = "best run by best_eval/acc (max is better: --mode min if a lower value is): "
    assert best + "b = 0.700 at step 30" in result.stdout
    assert Path("runs/tb/report.png").stat().st_size > 0


def test_a_hugging_face_trainer_state_log_history_is_a_source(tmp_path):
    """What `trl grpo` and every HF Trainer leave: trainer_state.json (the run's own, else the latest
    checkpoint's), its log_history rows keyed by `step`."""
    run = tmp_path / "r"
    for step in (5, 10):
        (run / f"checkpoint-{step}").mkdir(parents=True)
        history = [{"step": s, "loss": 1.0 / s, "epoch": s / 10} for s in range(5, step + 1, 5)]
        history.append({"step": step, "eval_reward": step * 0.01})
        state = {"global_step": step, "log_history": history}
        (run / f"checkpoint-{step}" / "trainer_state.json").write_text(json.dumps(state))
    sources = metrics.read_all(run, tensorboard=False)
    assert sources["trainer_state.json"]["loss"] == ((5, 0.2), (10, 0.1))  # from checkpoint-10
    assert metrics.find(sources, "eval_reward") == metrics.Series(
        "eval_reward", "trainer_state.json", ((10, 0.1),)
    )
    (run / "trainer_state.json").write_text(json.dumps({"log_history": [{"step": 12, "loss": 0.05}]}))
    assert metrics.read_all(run, tensorboard=False)["trainer_state.json"] == {"loss": ((12, 0.05),)}
    # the HF Trainer writes a diverged loss as NaN: skipped, and counted like metrics.jsonl's
    (run / "trainer_state.json").write_text(
        '{"log_history": [{"step": 1, "loss": NaN}, {"step": 2, "loss": 0.5}]}'
    )
    sources = metrics.read_all(run, tensorboard=False)
    assert sources["trainer_state.json"] == {"loss": ((2, 0.5),)}
    assert sources.non_finite == {("trainer_state.json", "loss"): 1}
    (run / "trainer_state.json").write_text('{"log_history": [')
    with pytest.raises(UserError, match="trainer_state.json is not valid JSON"):
        metrics.read_all(run, tensorboard=False)


def test_the_step_shown_comes_from_this_attempt_s_checkpoints_not_an_earlier_one_s(tmp_path):
    """`trl` started again in its folder (`--rerun-failed`) starts over: the earlier attempt's
    checkpoint-300 is still there while this attempt has saved checkpoint-100. The step shown was
    300 from this attempt's first second."""
    from sweepgen.cli._run_display import step_text
    from sweepgen.run.core.base import RunState, RunStatus

    run = tmp_path / "r"
    for step, written in ((300, 1_000_000), (100, 2_000_000)):
        (run / f"checkpoint-{step}").mkdir(parents=True)
        state = run / f"checkpoint-{step}" / "trainer_state.json"
        state.write_text(json.dumps({"global_step": step, "log_history": []}))
        os.utime(state, (written, written))

    def attempt(started_s):
        started = datetime.fromtimestamp(started_s, timezone.utc).isoformat()
        return RunStatus(state=RunState.RUNNING, executor="local", started=started, attempt=2)

    config = {"max_steps": 400}
    assert step_text(run, config, attempt(1_500_000)) == "100/400"
    assert step_text(run, config, attempt(3_000_000)) == "-/400"  # nothing saved yet
    assert step_text(run, config) == "300/400"  # no start known: the highest number, as before
    assert metrics.trainer_step(run, since_ns=None) == 300


# verl's TensorBoard logger (verl/utils/tracking.py): events to $TENSORBOARD_DIR, else to
# tensorboard_log/<project>/<experiment> under the working folder
VERL_LIKE = """
import os, sys
import torch.utils.tensorboard as torch_tb
folder = os.environ.get("TENSORBOARD_DIR", "tensorboard_log/p/e")
writer = torch_tb.SummaryWriter(folder)
for step in (1, 2, 3):
    writer.add_scalar("critic/score/mean", float(sys.argv[2]) * step, step)
writer.close()
"""


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_a_verl_style_tensorboard_logger_writes_into_the_run_folder_report_reads(cli_cwd):
    (cli_cwd / "verl_like.py").write_text(VERL_LIKE)
    configs = {f"lr{i}": {"output_dir": f"runs/t/lr{i}", "lr": i} for i in (1, 2)}
    make_config_sweep(cli_cwd, configs, sweep="t", values={n: {"lr": c["lr"]} for n, c in configs.items()})
    command = f"{shlex.quote(sys.executable)} verl_like.py {{config}} 0.5"
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert ran.exit_code == 0, ran.output
    assert not (cli_cwd / "tensorboard_log").exists()  # one folder per run, none shared
    report = CliRunner().invoke(main, ["report", "runs/t", "--metric", "critic/score/mean", "--no-plot"])
    assert report.exit_code == 0, report.output
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/t/report.csv").read_text().splitlines())}
    assert sorted(rows) == ["lr1", "lr2"], rows
    assert {r["source"] for r in rows.values()} == {"tensorboard"}
    assert all(float(r["final_critic/score/mean"]) == 1.5 for r in rows.values()), rows


def test_a_run_whose_final_value_is_nan_has_no_final_value(tmp_path):
    from sweepgen.run.report.collect import _record

    # eval_acc blew up to NaN at its last eval: its "final" value is not the 0.8 logged before
    run = write_csv(tmp_path / "r", "step,eval_acc\n1,0.5\n2,0.8\n3,nan\n")
    final = _record("r", run, {}, Objective("eval_acc", "max", "final")).score
    assert final.value is None and "NaN or infinite at step 3" in (final.missing or "")
    mean = _record("r", run, {}, Objective("eval_acc", "max", "last:2")).score
    assert mean.value is None and "among its last 2 values" in (mean.missing or "")
    # best skips it (warned as a left-out value); a NaN before the end does not touch final
    assert _record("r", run, {}, Objective("eval_acc", "max", "best")).score.value == 0.8
    early = write_csv(tmp_path / "e", "step,eval_acc\n1,nan\n2,0.8\n3,0.7\n")
    record = _record("e", early, {}, Objective("eval_acc", "max", "final"))
    assert record.score.value == 0.7 and any("left out" in p for p in record.problems)


def test_compare_against_a_group_without_values_says_so_not_that_it_does_not_exist():
    from sweepgen.run.report import groups as grp
    from sweepgen.run.report.make import _baseline

    groups = [grp.Group("base", ("base_s1", "base_s2"), {}), grp.Group("arm", ("arm_s1", "arm_s2"), {})]
    # every run of base lacks the metric (or diverged at the end): only arm has values
    for name in ("base", "base_s1"):
        with pytest.raises(UserError) as err:
            _baseline(name, groups, ["arm"])
        assert "no run of group base has a value to compare" in err.value.message
    with pytest.raises(UserError, match="no group or run of that name"):
        _baseline("bse", groups, ["arm"])
    assert _baseline("arm_s2", groups, ["arm"]) == "arm"
