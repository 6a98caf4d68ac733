"""`report` without --metric on a foreign trainer's runs: TRL's `reward` is reported (with a note);
with no reward logged, exit 2 listing every metric the runs logged."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main

# a stand-in for `trl grpo`: TRL's trainer_state.json, its log_history holding `reward` among others
WRITER = """
import json, os, sys
run_dir, reward = sys.argv[2], float(sys.argv[3])  # argv[1]: the config
os.makedirs(run_dir, exist_ok=True)
rows = [{"step": s, "loss": 1.0 / s, "reward": reward * s, "kl": 0.01, "completions/mean_length": 9.0}
        for s in (1, 2, 3)]
with open(os.path.join(run_dir, "trainer_state.json"), "w") as fh:
    json.dump({"log_history": rows, "global_step": 3}, fh)
"""


def _sweep(root: Path, key: str = "reward") -> str:
    (root / "writer.py").write_text(WRITER.replace('"reward": reward', f'"{key}": reward'))
    configs = {f"beta{b}": {"output_dir": f"runs/t/beta{b}", "beta": b, "max_steps": 3} for b in (1, 2)}
    make_config_sweep(root, configs, sweep="t", values={n: {"beta": c["beta"]} for n, c in configs.items()})
    return f"{shlex.quote(sys.executable)} writer.py {{config}} {{run_dir}} {{name}}"


def test_trl_s_reward_is_reported_without_metric(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("{name}", "0.5")
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert ran.exit_code == 0, ran.output
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    assert "reporting `reward`" in report.stderr
    rows = Path("runs/t/report.csv").read_text()
    assert "1.5" in rows  # the final reward, 0.5 x step 3, not a dash


def test_a_metric_chosen_without_metric_is_rounded_as_a_measurement(tmp_path, monkeypatch):
    """With --metric its column was rounded (0.300); chosen without it (TRL's `reward`, W&B's
    `train/reward`) it was printed as a config value is, every digit: 0.30000000000000004."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path, key="train/reward").replace("{name}", "0.1")
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    rows = [line.split() for line in report.stdout.splitlines() if line.lstrip().startswith("beta")]
    assert rows[0][:3] == ["beta1", "1", "0.300"], report.stdout  # 0.1 x step 3
    assert "0.30000000000000004" not in report.stdout


@pytest.mark.parametrize(("clipped", "warned"), [(0.9, True), (0.2, False)])
def test_trl_runs_scored_on_cut_completions_are_warned_as_the_bundled_trainer_s(
    tmp_path, monkeypatch, clipped, warned
):
    """TRL logs the share of each step's completions cut at max_completion_length
    (`completions/clipped_ratio`); only the bundled trainer's summary was read for the warning."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("{name}", "0.5")
    writer = Path("writer.py")
    writer.write_text(
        writer.read_text().replace('"kl": 0.01', f'"kl": 0.01, "completions/clipped_ratio": {clipped}')
    )
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    assert ("of their completions cut at max_completion_length" in report.stderr) is warned, report.stderr
    # the key to raise as a TRL config spells it, not only the bundled trainer's section
    assert ("raise max_completion_length (a TRL config's top-level key" in report.stderr) is warned


def test_the_run_table_shows_the_step_trl_s_state_reached(tmp_path, monkeypatch):
    """No metrics.jsonl: the end table's step is the trainer state's global_step, not a dash."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("{name}", "0.5")
    ran = CliRunner().invoke(main, ["run", "generated/t", "--command", command])
    assert ran.exit_code == 0, ran.output
    table = ran.stdout.split("results")[-1].splitlines()
    rows = [line.split() for line in table if line.lstrip().startswith("beta")]
    assert [row[:3] for row in rows] == [[f"beta{b}", "finished", "3/3"] for b in (1, 2)], ran.stdout


def test_no_reward_logged_exits_2_listing_every_metric(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path, key="score").replace("{name}", "0.5")
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 2, report.output
    for name in ("completions/mean_length", "kl", "loss", "score"):
        assert name in report.stderr
    assert not Path("runs/t/report.csv").exists()  # nothing written
    assert json.loads(Path("runs/t/beta1/sweepgen_status.json").read_text())["state"] == "finished"


@pytest.mark.parametrize("metric", [[], ["--metric", "reward"]])
def test_runs_that_logged_to_no_file_are_told_how_trl_writes_one(tmp_path, monkeypatch, metric):
    """`trl grpo` with `save_strategy: "no"` and TRL's default `report_to: none` prints its metrics
    and writes none; the hint was "--metric NAME" (or "give a metric the runs logged"), which no
    name can satisfy."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("{name}", "0.5")
    Path("writer.py").write_text(
        "import os, sys\nos.makedirs(sys.argv[2], exist_ok=True)\nprint({'reward': 1})\n"
    )
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot", *metric])
    assert report.exit_code == 2, report.output
    assert "report_to: tensorboard" in report.stderr and 'save_strategy: "no"' in report.stderr


# `trl grpo` with `report_to: tensorboard` and no checkpoint saved (save_strategy: "no"): no
# trainer_state.json, only the HF Trainer's events, its names rewritten to `train/<name>`
TB_WRITER = """
import os, sys
from torch.utils.tensorboard import SummaryWriter
writer = SummaryWriter(log_dir=os.path.join(sys.argv[2], "runs", "Nov29_05-00-00_host"))
for step in (1, 2, 3):
    writer.add_scalar("train/reward", float(sys.argv[3]) * step, global_step=step)
writer.close()
"""


@pytest.mark.train  # events written with torch's SummaryWriter; read with the track extra's tensorboard
def test_trl_s_reward_logged_only_to_tensorboard_is_reported_without_metric(tmp_path, monkeypatch):
    """Before, `report` looked for a reward in the metric files only and said "logged: nothing (no
    ... TensorBoard events)" of runs that had them."""
    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("writer.py", "tb_writer.py").replace("{name}", "0.5")
    (tmp_path / "tb_writer.py").write_text(TB_WRITER)
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    assert "reporting `train/reward`" in report.stderr
    assert "beta1 = 1.500 at step 3" in report.stdout


def test_event_files_that_cannot_be_read_leave_the_choice_to_the_metric_files(tmp_path, monkeypatch):
    """Choosing the metric reads every source now; a run's event files that cannot be read there
    (tensorboard not installed, a file over the limit) never end a report that needs only its
    trainer_state.json."""
    from sweepgen.errors import UserError
    from sweepgen.run.logs import metrics

    monkeypatch.chdir(tmp_path)
    command = _sweep(tmp_path).replace("{name}", "0.5")
    assert CliRunner().invoke(main, ["run", "generated/t", "--command", command]).exit_code == 0

    def not_installed(run_dir):
        raise UserError(f"{run_dir} has TensorBoard event files but tensorboard is not installed")

    monkeypatch.setattr(metrics, "read_tensorboard", not_installed)
    report = CliRunner().invoke(main, ["report", "generated/t", "--no-plot"])
    assert report.exit_code == 0, report.output
    assert "reporting `reward`" in report.stderr
