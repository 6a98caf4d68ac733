"""The README demo with the real trainer: render specs/happy_grpo_cpu.yaml, run its 10 configs (5 seeds x 2
betas) with --jobs 2, report. Every run must finish and learn the happy reward."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sweepgen.cli import main

pytestmark = [pytest.mark.train, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def test_happy_grpo_cpu_renders_runs_and_reports(tiny_cache, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # runs/ is created here, as `sweepgen run` starts runs from cwd
    runner = CliRunner()
    out = tmp_path / "generated"
    result = runner.invoke(main, ["render", str(REPO / "specs" / "happy_grpo_cpu.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # The same files as the committed generated/ ones, apart from the header naming the spec path
    # (relative to where render ran); `sweepgen check` in CI compares the committed bytes.
    rendered = sorted((out / "happy_grpo_cpu").glob("*.yaml"))
    assert len(rendered) == 10
    for path in rendered:
        committed = (REPO / "generated" / "happy_grpo_cpu" / path.name).read_text().splitlines()
        assert path.read_text().splitlines()[1:] == committed[1:]
    result = runner.invoke(main, ["run", str(out / "happy_grpo_cpu"), "--jobs", "2"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "runs" / "happy_grpo_cpu").iterdir())
    assert names == sorted(f"happy_s{s}_b{b}" for s in range(5) for b in ("0.0", "0.02"))
    for name in names:
        summary = json.loads((tmp_path / "runs" / "happy_grpo_cpu" / name / "summary.json").read_text())
        assert summary["steps"] == 60 and summary["final_reward"] > 0.7, (name, summary)
    result = runner.invoke(main, ["report", "runs/happy_grpo_cpu", "--compare", "beta0.0"])
    assert result.exit_code == 0, result.output
    # 5 seeds a side: Welch's test can decide, so the verdict is a verdict, never "cannot decide"
    verdicts = [line for line in result.stdout.splitlines() if line.strip().startswith("beta0.02")]
    assert verdicts, result.stdout + result.stderr
    assert verdicts[0].split()[1] in ("better", "worse", "no")
    report = tmp_path / "runs" / "happy_grpo_cpu"
    with (report / "report.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 10
    assert (report / "report.png").stat().st_size > 0
