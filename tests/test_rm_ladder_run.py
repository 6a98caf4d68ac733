"""The reward-model ablation ladder (specs/rm_ablation.yaml) end to end with the stand-in trainer in
examples/rm: rendered sbatch scripts run unchanged through examples/rm/run_sbatch.sh, locally (on
the test Slurm: test_anytrainer_slurm.py), and `report --metric eval_acc --mode max` gives best
eval accuracy, the train-eval gap and the final step per arm. Also: the stand-in honours the flags
the ladder changes."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main
from sweepgen.compile.output.lockfile import lock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from rm import train as rm_train  # noqa: E402

ARMS = ["A1_none", "A2_scheduler", "A3_label_smooth", "A4_early_stop", "A5_lora_r8", "A6_lora_r16"]
COMMAND = "bash examples/rm/run_sbatch.sh {config}"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def ladder(cli_cwd, monkeypatch):
    for rel in ("specs/rm_ablation.yaml", "templates/rm_ablation.sbatch.j2"):
        (cli_cwd / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, cli_cwd / rel)
    shutil.copytree(ROOT / "examples", cli_cwd / "examples")
    monkeypatch.setenv("RM_PYTHON", sys.executable)
    assert cli("render", "specs/rm_ablation.yaml").exit_code == 0
    return cli_cwd


def expected(run_dir: Path) -> tuple[float, int, float, int]:
    """best eval_acc, its step, train_acc - eval_acc there, last step: straight from metrics.csv."""
    rows = list(csv.DictReader((run_dir / "metrics.csv").read_text().splitlines()))
    best = max(rows, key=lambda r: float(r["eval_acc"]))  # max keeps the first of equal values
    return (
        float(best["eval_acc"]),
        int(best["step"]),
        float(best["train_acc"]) - float(best["eval_acc"]),
        int(rows[-1]["step"]),
    )


def check_report() -> str:
    result = cli("report", "generated/rm_ablation", "--metric", "eval_acc", "--mode", "max", "--at", "best")
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in csv.DictReader(Path("runs/rm_ablation/report.csv").read_text().splitlines())}
    assert list(rows) == [f"rm_{a}" for a in ARMS]
    for row in rows.values():
        run_dir = _run_dirs()[row["run"]]
        best, step, gap, last = expected(run_dir)
        assert float(row["best_eval_acc"]) == best and int(row["at_step"]) == step
        assert float(row["train_eval_gap"]) == pytest.approx(gap) and int(row["final_step"]) == last
        assert row["state"] == "finished" and row["source"] == "metrics.csv"
    assert Path("runs/rm_ablation/report.png").stat().st_size > 0
    for header in ("best_eval_acc", "train-eval", "final_step"):
        assert header in result.stdout
    return result.stdout


def _run_dirs() -> dict[str, Path]:
    recorded = lock.parse(Path("generated/rm_ablation/sweep.lock.json").read_bytes(), "lock")
    return {f.run_name: Path(recorded.config(f)["output_dir"]) for f in recorded.files}


@pytest.mark.train  # the report's PNG needs matplotlib, from the [train] extra
def test_the_ladder_runs_locally_and_reports_eval_accuracy(ladder):
    result = cli("run", "generated/rm_ablation", "--jobs", "2", "--command", COMMAND)
    assert result.exit_code == 0, result.output
    table = check_report()
    print(table)  # the table, for the record (pytest -s)
    # the scripts ran as rendered: the stand-in got every flag, including --output_dir
    log = next(Path("runs/rm_ablation").glob("cosine-wu50_ls0.05_es5_lora-r8-a16")) / "run.log"
    assert "lora fine-tuning" in log.read_text()


# -- the stand-in honours the flags the ladder changes ---------------------------------------------

ARGS = [
    "--model", "m", "--dataset", "d", "--limit", "300", "--eval_split", "test", "--eval_limit", "100",
    "--eval_every", "5", "--steps", "40", "--batch_size", "8", "--lr", "5e-6", "--weight_decay", "0.0",
    "--seed", "1", "--scheduler", "constant", "--warmup_steps", "0", "--label_smoothing", "0.0",
    "--early_stopping_patience", "0", "--finetune", "full",
]  # fmt: skip


def args(**changes: str) -> list[str]:
    out = list(ARGS)
    for key, value in changes.items():
        flag = f"--{key}"
        if flag in out:
            out[out.index(flag) + 1] = value
        else:
            out += [flag, value]
    return out


def test_cosine_schedule_with_warmup():
    ns = rm_train.parse(args(scheduler="cosine", warmup_steps="10", **{"output_dir": "x"}))
    base = ns.lr * rm_train.LR_SCALE
    assert rm_train.lr_at(0, ns) == pytest.approx(base / 10)
    assert rm_train.lr_at(9, ns) == pytest.approx(base)
    assert rm_train.lr_at(10, ns) == pytest.approx(base)  # cosine starts at the peak
    assert rm_train.lr_at(25, ns) == pytest.approx(base * 0.5)  # halfway through the decay
    assert rm_train.lr_at(39, ns) < base * 0.01
    constant = rm_train.parse(args(output_dir="x"))
    assert {rm_train.lr_at(s, constant) for s in (0, 20, 39)} == {base}


def test_label_smoothing_changes_the_loss():
    assert rm_train.loss_of(3.0, 0.0) < rm_train.loss_of(3.0, 0.1)
    assert rm_train.loss_of(0.0, 0.0) == pytest.approx(rm_train.loss_of(0.0, 0.1))  # log 2 either way
    # the smoothed loss is smallest at a finite margin, log((1-e)/e), not at infinity
    e = 0.1
    best = min((d / 10 for d in range(0, 100)), key=lambda d: rm_train.loss_of(d, e))
    assert best == pytest.approx(__import__("math").log((1 - e) / e), abs=0.1)


def test_early_stopping_patience_stops_training(tmp_path):
    # a learning rate far too large: eval loss stops improving at once
    out = tmp_path / "es"
    assert rm_train.main(args(lr="1e-2", early_stopping_patience="2", output_dir=str(out))) == 0
    rows = list(csv.DictReader((out / "metrics.csv").read_text().splitlines()))
    assert int(rows[-1]["step"]) < 40
    off = tmp_path / "off"
    assert rm_train.main(args(lr="1e-2", output_dir=str(off))) == 0
    rows_off = list(csv.DictReader((off / "metrics.csv").read_text().splitlines()))
    assert int(rows_off[-1]["step"]) == 40
    assert list(rows_off[0]) == ["step", "train_loss", "train_acc", "eval_loss", "eval_acc"]


def test_a_rerun_resumes_and_a_finished_run_is_not_trained_again(tmp_path, capsys):
    out = tmp_path / "r"
    assert rm_train.main(args(output_dir=str(out))) == 0
    first = (out / "metrics.csv").read_text()
    assert rm_train.main(args(output_dir=str(out))) == 0
    assert "already finished" in capsys.readouterr().out and (out / "metrics.csv").read_text() == first
