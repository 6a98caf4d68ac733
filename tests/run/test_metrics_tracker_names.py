"""A TRL (Hugging Face Trainer) run that saved no checkpoint has its metrics only in TensorBoard or
W&B files, under the names the Trainer's callbacks give them (`train/loss`, `eval/loss`): `report
--metric loss`, as TRL's docs and the terminal name it, found none and exited 2."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.logs import metrics

POINTS = ((1, 2.0), (2, 1.5))


@pytest.mark.parametrize(
    ("asked", "held"),
    [
        ("loss", "train/loss"),
        ("reward", "train/reward"),
        ("eval_loss", "eval/loss"),
        ("test_acc", "test/acc"),
    ],
)
def test_a_trainer_s_key_is_found_under_its_tracker_name(asked, held):
    for source in ("tensorboard", "wandb"):
        series = metrics.find({source: {held: POINTS}}, asked)
        assert series is not None and series.name == held and series.points == POINTS


def test_only_tracker_files_are_read_under_another_name_and_the_name_itself_comes_first():
    # a metrics file's `train/loss` is its own metric, never the `loss` asked for
    assert metrics.find({"metrics.jsonl": {"train/loss": POINTS}}, "loss") is None
    both = metrics.find({"tensorboard": {"loss": ((1, 9.0),), "train/loss": POINTS}}, "loss")
    assert both is not None and both.name == "loss" and both.points == ((1, 9.0),)
    state_first = metrics.find(
        {"trainer_state.json": {"loss": ((1, 9.0),)}, "tensorboard": {"train/loss": POINTS}}, "loss"
    )
    assert state_first is not None and state_first.source == "trainer_state.json"


@pytest.mark.train  # transformers is the oracle: the names its TensorBoard and W&B callbacks write
@settings(deadline=None, max_examples=200)
@given(st.from_regex(r"(eval_|test_|train_|)[a-z/_]{1,12}", fullmatch=True))
def test_tracker_names_are_transformers_own(key):
    from transformers.integrations.integration_utils import rewrite_logs

    assert rewrite_logs({key: 1.0}) == {metrics.tracker_name(key): 1.0}


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_report_metric_loss_reads_a_trl_run_s_tensorboard_train_loss_and_says_so(cli_cwd):
    import torch.utils.tensorboard as torch_tb

    from sweepgen.run.core.base import RunState, RunStatus, write_status

    configs = {n: {"output_dir": f"runs/tb/{n}", "lr": lr} for n, lr in (("a", 1), ("b", 2))}
    make_config_sweep(cli_cwd, configs, sweep="tb", values={"a": {"lr": 1}, "b": {"lr": 2}})
    for name, values in (("a", [0.9, 0.6]), ("b", [0.8, 0.4])):
        writer = torch_tb.SummaryWriter(log_dir=f"runs/tb/{name}/runs/Nov24_host")
        for step, value in enumerate(values, start=1):
            writer.add_scalar("train/loss", value, global_step=step)
        writer.close()
        finished = RunStatus(
            RunState.FINISHED, "local", exit_code=0, done_file=None, sweep_dir="generated/tb"
        )
        write_status(Path(f"runs/tb/{name}"), finished)
    result = CliRunner().invoke(main, ["report", "generated/tb", "--metric", "loss", "--no-plot"])
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/tb/report.csv").read_text().splitlines())}
    assert float(rows["a"]["final_loss"]) == pytest.approx(0.6)
    assert float(rows["b"]["final_loss"]) == pytest.approx(0.4)
    assert "`loss` read as `train/loss` from TensorBoard or W&B files" in result.stderr
