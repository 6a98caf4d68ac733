"""`sweepgen report` on a routed-vs-baseline sweep: the routing eval (summary.json's `routing`) as columns."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from run_support import make_config_sweep

from sweepgen.cli import main
from sweepgen.run.report import collect as rep

METRICS = ("task_reward", "hack_rate", "unique_ratio", "mean_pairwise_jaccard")


def routing_sweep(root: Path, with_routing: bool = True) -> Path:
    """routed/baseline x seeds 0, 1; summary.json as the trainer writes it (see routing/trainer.py)."""
    configs, values = {}, {}
    for mode in ("classic", "baseline"):
        for seed in (0, 1):
            name = f"{'routed' if mode == 'classic' else 'baseline'}_s{seed}"
            out = f"runs/rvb/{name}"
            configs[name] = {"run_name": name, "output_dir": out, "seed": seed, "routing": {"mode": mode}}
            values[name] = {"run_name": name, "output_dir": out, "seed": seed, "routing.mode": mode}
            run = root / out
            run.mkdir(parents=True)
            summary = {
                "final_reward": 1.0 + seed,
                "best_reward": 2.0,
                "steps": 40,
                "wall_time_s": 9.0,
                "diversity": {"unique_ratio": 1.0, "mean_pairwise_jaccard": 0.1},
                "degenerate": False,
            }
            if with_routing:
                # distinct values per mode and metric, so a column picking the wrong one is caught
                modes = ("both", "retain_only", "forget_only") if mode == "classic" else ("both",)
                summary["routing"] = {
                    "mode": mode,
                    "step": 40,
                    **{
                        m: {
                            metric: round(0.1 * i + 0.01 * j + 0.001 * seed, 6)
                            for j, metric in enumerate(METRICS)
                        }
                        for i, m in enumerate(modes)
                    },
                }
            (run / "summary.json").write_text(json.dumps(summary))
            (run / "metrics.jsonl").write_text(json.dumps({"step": 1, "reward_mean": 0.5}) + "\n")
    return make_config_sweep(root, configs, sweep="rvb", values=values)


def test_routing_eval_columns_per_mode_and_metric(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = rep.collect(routing_sweep(tmp_path))
    rows = {r["run"]: r for r in rep.rows(result)}
    routed = rows["routed_s1"]
    assert routed["routing.both.task_reward"] == 0.001
    assert routed["routing.retain_only.hack_rate"] == 0.111
    assert routed["routing.forget_only.hack_rate"] == 0.211
    assert routed["routing.forget_only.mean_pairwise_jaccard"] == 0.231
    # a baseline has one adapter and only the `both` eval: the other modes are empty, not zero
    baseline = rows["baseline_s0"]
    assert baseline["routing.both.hack_rate"] == 0.01
    assert (
        baseline["routing.retain_only.hack_rate"] is None
        and baseline["routing.forget_only.task_reward"] is None
    )
    header = rep.csv_text(result).splitlines()[0].split(",")
    assert [c for c in header if c.startswith("routing.") and c != "routing.mode"] == [
        f"routing.{m}.{metric}" for m in ("both", "retain_only", "forget_only") for metric in METRICS
    ]
    assert "routing.mode" in header  # the varying config path stays a column of its own


def test_reports_without_routing_runs_have_no_routing_eval_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = rep.collect(routing_sweep(tmp_path, with_routing=False))
    assert not any(col.startswith("routing.") and col != "routing.mode" for col in rep.rows(result)[0])


def test_cli_table_shows_the_routing_eval(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    routing_sweep(tmp_path)
    result = CliRunner().invoke(main, ["report", "generated/rvb", "--no-plot"], terminal_width=400)
    assert result.exit_code == 0, result.output
    for header in ("both_hack", "ret_hack", "fgt_hack", "ret_task", "fgt_uniq"):
        assert header in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.lstrip().startswith("routed_s1"))
    assert "0.211" in line and "0.111" in line  # forget_only and retain_only hack rates, rounded
    csv = (tmp_path / "runs/rvb/report.csv").read_text()
    assert "routing.forget_only.hack_rate" in csv.splitlines()[0]
