"""A seed group that lost runs (failed, diverged, pruned) is compared on its survivors: the report
says so per group, beside the verdict it may bias, in the terminal, statistics.csv/json and the page."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from report_support import compare_shaping, make_shaping

from sweepgen.cli import main

FAILED = "coma_seed2_lr1e-05"
ARGS = ["report", "generated/shaping", "--metric", "eval_acc", "--compare", "identity_lr1e-05"]


def _diverge(run_dir) -> None:
    """The run finished, but its metric is NaN at its last step (a divergence)."""
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["eval_acc"] = float("nan")
    (run_dir / "metrics.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")


def test_a_group_that_lost_runs_says_so_beside_its_verdict(cli_cwd):
    make_shaping(cli_cwd, failed=FAILED)
    _diverge(cli_cwd / "runs/shaping/coma_seed5_lr1e-05")
    said, rows = compare_shaping(cli_cwd)
    assert (
        "coma_lr1e-05: the statistics use 4 of its 6 runs; 2 have no value (coma_seed2_lr1e-05 (failed), "
        "coma_seed5_lr1e-05 (`eval_acc` is NaN or infinite at step 40"
    ) in said
    assert "can read better than the configuration is" in said
    assert (rows["coma_lr1e-05"]["n"], rows["coma_lr1e-05"]["runs_lost"]) == ("4", "2")
    assert rows["coma_lr1e-05"]["lost"].startswith("coma_seed2_lr1e-05 (failed); coma_seed5_lr1e-05 (")
    assert (rows["identity_lr1e-05"]["runs_lost"], rows["identity_lr1e-05"]["lost"]) == ("0", "")
    groups = json.loads((cli_cwd / "runs/shaping/statistics.json").read_text())["groups"]
    assert {g["group"]: g["runs_lost"] for g in groups}["coma_lr1e-05"] == 2


@pytest.mark.plot
def test_the_page_says_which_runs_a_group_lost(cli_cwd):
    make_shaping(cli_cwd, failed=FAILED)
    result = CliRunner().invoke(main, [*ARGS, "--html"])
    assert result.exit_code == 0, result.output
    page = (cli_cwd / "runs/shaping/report.html").read_text(encoding="utf-8")
    said = "coma_lr1e-05: the statistics use 5 of its 6 runs; 1 has no value (coma_seed2_lr1e-05 (failed))"
    assert said in page


def test_held_out_seeds_count_only_their_own_lost_runs(cli_cwd):
    make_shaping(cli_cwd, failed=FAILED)  # seed 2 is a tune seed
    result = CliRunner().invoke(main, [*ARGS, "--seeds", "test", "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = {r["group"]: r for r in csv.DictReader(result.stdout.splitlines())}
    assert {g: r["runs_lost"] for g, r in rows.items()} == dict.fromkeys(rows, "0")


def test_runs_not_started_or_still_running_are_not_losses(cli_cwd):
    # `run --until-decided` never starts a decided group's later seeds; a run still going has no
    # outcome yet: neither is a run the configuration lost
    make_shaping(cli_cwd)
    never = cli_cwd / "runs/shaping/coma_seed6_lr1e-05"
    for f in never.iterdir():
        f.unlink()
    going = cli_cwd / "runs/shaping/coma_seed5_lr1e-05"
    (going / "summary.json").unlink()
    (going / "sweepgen_status.json").write_text(json.dumps({"state": "running", "executor": "local"}))
    said, rows = compare_shaping(cli_cwd)
    assert (rows["coma_lr1e-05"]["n"], rows["coma_lr1e-05"]["runs_lost"]) == ("4", "0")
    assert "the statistics use" not in said


def test_a_configuration_that_lost_every_run_is_said_to_be_missing(cli_cwd):
    make_shaping(cli_cwd)
    for seed in range(1, 7):  # every seed of noisy at lr 1e-3 failed (or its pruner stopped it)
        run = cli_cwd / f"runs/shaping/noisy_seed{seed}_lr0.001"
        (run / "summary.json").unlink()
        (run / "sweepgen_status.json").write_text(
            json.dumps({"state": "failed", "executor": "local", "exit_code": 1, "reason": "exit 1"})
        )
    said, rows = compare_shaping(cli_cwd)
    assert (
        "6 runs belong to configurations none of whose runs has a value, so those configurations are "
        "not in the statistics (noisy_seed1_lr0.001 (failed), noisy_seed2_lr0.001 (failed)"
    ) in said
    assert "noisy_lr0.001" not in rows and "" not in rows
