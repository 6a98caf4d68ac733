"""`report --metric NAME` without `--mode`: a loss is lowered (the best run is the lowest loss, the
verdicts follow), and the line naming the best run says how the direction was chosen."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_support import make_shaping

from sweepgen.cli import main


@pytest.fixture
def shaping(cli_cwd):
    """The shaping sweep, each run's loss falling to 1 - its final eval_acc (a better arm: a lower loss)."""
    make_shaping(cli_cwd)
    for run in (cli_cwd / "runs/shaping").iterdir():
        path = run / "metrics.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({**r, "loss": 1.0 - r["eval_acc"]}) + "\n" for r in rows))
    return cli_cwd


def report(*args: str):
    return CliRunner().invoke(main, ["report", "generated/shaping", "--no-plot", "--format", "json", *args])


def best_named(*args: str) -> tuple[str, str, dict[str, float]]:
    """The best-run line's direction words, and the named run's final loss against every run's."""
    result = CliRunner().invoke(main, ["report", "generated/shaping", "--no-plot", "--metric", "loss", *args])
    assert result.exit_code == 0, result.output
    said = re.search(r"best run by final_loss \((.*?)\): (\S+) =", " ".join(result.stdout.split()))
    assert said, result.stdout
    rows = csv.DictReader(io.StringIO(Path("runs/shaping/report.csv").read_text()))
    return said[1], said[2], {r["run"]: float(r["final_loss"]) for r in rows}


def test_a_loss_without_mode_is_lowered_and_says_so(shaping):
    words, best, losses = best_named()
    assert words == "min is better: `loss` names something lowered; --mode max if it is not"
    assert losses[best] == min(losses.values())
    body = json.loads((shaping / "runs/shaping/statistics.json").read_text())
    assert body["direction"] == "min is better"
    # the same comparison as --mode min; --mode max is obeyed and names a highest loss best
    assert report("--metric", "loss", "--mode", "min").stdout == report("--metric", "loss").stdout
    words, best, losses = best_named("--mode", "max")
    assert words == "max is better" and losses[best] == max(losses.values())


def test_a_name_without_a_lowered_word_stays_raised_and_says_how_to_turn_it(shaping):
    text = CliRunner().invoke(main, ["report", "generated/shaping", "--no-plot", "--metric", "eval_acc"])
    assert text.exit_code == 0, text.output
    assert "(max is better: --mode min if a lower value is)" in " ".join(text.stdout.split())
