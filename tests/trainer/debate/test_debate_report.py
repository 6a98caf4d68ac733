"""`sweepgen report` on debate runs: the debate summary columns, and seeds aggregated although each
run names its own run_name/output_dir (as every runnable trainer sweep must)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from run_support import make_config_sweep

from sweepgen.run.report import collect as rep


def debate_sweep(root: Path, with_debate: bool = True) -> Path:
    """A 2 strategies x 2 seeds sweep in ``root`` (the working directory: output_dir is relative)."""
    configs, values = {}, {}
    for strategy in ("identity", "coma_advantage"):
        for seed in (0, 1):
            name = f"{strategy}_s{seed}"
            out = f"runs/rsd/{name}"
            configs[name] = {
                "run_name": name,
                "output_dir": out,
                "seed": seed,
                "reward_shaping": {"strategy": strategy},
            }
            values[name] = {
                "run_name": name,
                "output_dir": out,
                "seed": seed,
                "reward_shaping.strategy": strategy,
            }
            run = root / out
            run.mkdir(parents=True)
            summary = {
                "final_reward": 0.1 * seed,
                "best_reward": 0.2,
                "steps": 2,
                "wall_time_s": 1.0,
                "diversity": {"unique_ratio": 1.0, "mean_pairwise_jaccard": 0.1},
                "degenerate": False,
            }
            if with_debate:
                summary["debate"] = {
                    "strategy": strategy,
                    "team_accuracy": 0.25 + seed,
                    "reward_solver": 0.5,
                    "reward_critic": 0.0,
                    "zero_advantage_groups": 0.75,
                    "length_tokens": 18.0,
                }
            (run / "summary.json").write_text(json.dumps(summary))
            (run / "metrics.jsonl").write_text(
                "".join(json.dumps({"step": s, "reward_mean": 0.1 * s + seed}) + "\n" for s in (1, 2))
            )
    return make_config_sweep(root, configs, sweep="rsd", values=values)


def test_debate_summary_columns_are_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = debate_sweep(tmp_path)
    result = rep.collect(folder)
    rows = {r["run"]: r for r in rep.rows(result)}
    assert rows["coma_advantage_s1"]["debate.team_accuracy"] == 1.25
    assert rows["identity_s0"]["debate.zero_advantage_groups"] == 0.75
    assert "debate.reward_critic" in rep.csv_text(result).splitlines()[0]


def test_reports_without_debate_runs_keep_their_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = rep.collect(debate_sweep(tmp_path, with_debate=False))
    assert not any(col.startswith("debate.") for col in rep.rows(result)[0])


def test_seeds_aggregate_despite_per_run_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = rep.curves(rep.collect(debate_sweep(tmp_path)))
    assert sorted(c.label for c in lines) == [
        "reward_shaping.strategy=coma_advantage",
        "reward_shaping.strategy=identity",
    ]
    for curve in lines:
        assert len(curve.runs) == 2
        assert curve.mean == pytest.approx((0.6, 0.7))  # steps 1, 2 over seeds 0 and 1
