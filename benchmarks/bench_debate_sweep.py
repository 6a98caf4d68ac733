"""The reward-shaping debate sweep (specs/reward_shaping_debate.yaml): 5 strategies x 10 seeds, tiny model.

Run from the repository root (the spec's data path and output_dir are relative to it):

    OMP_NUM_THREADS=1 python benchmarks/bench_debate_sweep.py --jobs 2     # render, run, report, verdicts
    python benchmarks/bench_debate_sweep.py --summarize-only               # verdicts of an existing runs/
    python benchmarks/bench_debate_sweep.py --summarize-only --csv benchmarks/results/debate_sweep.csv
    OMP_NUM_THREADS=1 python benchmarks/bench_debate_sweep.py --cost       # K = 1, 2, 4 generation cost

The sweep renders the spec, runs it with `sweepgen run` seed by seed (every arm of a seed before the
next; `--seeds N` runs seeds 0..N-1; finished runs are skipped, so it resumes), and with `--csv` writes
one row per run of every whole seed (issue 38: start and final team accuracy, collapsed, truncation,
with the commit, the prior's sha256, torch version and CPU capability as header comments) and prints
the table benchmarks/debate_table.py computes from it, the one in RESULTS.md §7. It then
writes `sweepgen report`, and prints per strategy: the final team accuracy (summary.json's
debate.team_accuracy: the mean of the last summary_window steps) over seeds as mean with a seeded
bootstrap 95% interval, its difference from identity with a bootstrap 95% interval, Welch's t-test
p-value, Holm-corrected across the four comparisons, and the verdict (better / worse / no evidence at
the 5% level). `sweepgen report --compare` (issue 22) was not on main when this was written, so the
statistics are computed here with scipy; `sweepgen report --compare identity` (now on main) prints
the same statistics, and the sweep run prints both as a cross-check. It also prints what each role
was trained on (per-role advantage statistics from metrics.jsonl).

--cost runs the identity config (plain GRPO), coma with K = 1, 2, 4 counterfactuals per turn and
difference_rewards (one default-action branch per turn) for the same steps, interleaved over rounds,
and reports the steady-state steps/s (metrics.jsonl elapsed_s from step 2 on) and each one's ratio to
plain GRPO, with the generated tokens per step.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml
from debate_table import holm  # beside this script: one Holm step-down for both debate tables

SPEC = "specs/reward_shaping_debate.yaml"
SWEEP = Path("generated/reward_shaping_debate")
RUNS = Path("runs/reward_shaping_debate")
STRATEGIES = ["identity", "difference_rewards", "potential_based", "coma", "reward_mixing"]
BOOTSTRAP_SEED = 0


def sweepgen(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "sweepgen", *args], check=True)


def final_accuracy(strategy: str) -> dict[int, float]:
    """seed -> final team accuracy of each finished run of the strategy."""
    out = {}
    for path in sorted(RUNS.glob(f"{strategy}_s*/summary.json")):
        summary = json.loads(path.read_text())
        out[int(path.parent.name.rsplit("_s", 1)[1])] = summary["debate"]["team_accuracy"]
    return out


def bootstrap_mean(values: list[float]) -> tuple[float, float]:
    from scipy.stats import bootstrap

    if len(set(values)) == 1:
        return values[0], values[0]
    res = bootstrap(
        (values,), statistics.fmean, confidence_level=0.95, rng=BOOTSTRAP_SEED, method="percentile"
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def bootstrap_difference(a: list[float], b: list[float]) -> tuple[float, float]:
    from scipy.stats import bootstrap

    def diff(x, y, axis=-1):
        return x.mean(axis=axis) - y.mean(axis=axis)

    res = bootstrap(
        (a, b), diff, confidence_level=0.95, rng=BOOTSTRAP_SEED, method="percentile", vectorized=True
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def verdicts() -> str:
    from scipy.stats import ttest_ind

    acc = {s: final_accuracy(s) for s in STRATEGIES}
    base = list(acc["identity"].values())
    raw_p = {}
    for s in STRATEGIES[1:]:
        values = list(acc[s].values())
        if len(values) > 1 and len(base) > 1 and (statistics.pstdev(values) or statistics.pstdev(base)):
            raw_p[s] = float(ttest_ind(values, base, equal_var=False).pvalue)
        else:
            raw_p[s] = 1.0
    adjusted = holm(raw_p)
    lines = [
        "| strategy | n seeds | final team accuracy, mean [95% CI] | − identity [95% CI] "
        "| Welch p | Holm p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in STRATEGIES:
        values = list(acc[s].values())
        if not values:
            lines.append(f"| {s} | 0 | (no finished run) | | | | |")
            continue
        low, high = bootstrap_mean(values)
        row = f"| {s} | {len(values)} | {statistics.fmean(values):.3f} [{low:.3f}, {high:.3f}]"
        if s == "identity":
            lines.append(row + " | (baseline) | | | |")
            continue
        d_low, d_high = bootstrap_difference(values, base)
        delta = statistics.fmean(values) - statistics.fmean(base)
        verdict = "no evidence"
        if adjusted[s] < 0.05 and (d_low > 0 or d_high < 0):
            verdict = "better" if delta > 0 else "worse"
        lines.append(
            row
            + f" | {delta:+.3f} [{d_low:+.3f}, {d_high:+.3f}] | {raw_p[s]:.3f} | {adjusted[s]:.3f} "
            + f"| {verdict} |"
        )
    return "\n".join(lines)


def advantage_table() -> str:
    """Per-role advantage statistics from metrics.jsonl over every step of every seed: what each role
    was trained on (mean std of the applied advantage, share of steps where it was all 0), and the
    counterfactual generation per step."""
    lines = [
        "| strategy | A std solver | A std critic | steps with A=0 solver | steps with A=0 critic "
        "| counterfactual tokens/step | s/step |",
        "|---|---|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        rows: list[dict[str, Any]] = []
        for path in sorted(RUNS.glob(f"{strategy}_s*/metrics.jsonl")):
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        rows = [r for r in rows if "debate/advantage_std/solver" in r]
        if not rows:
            lines.append(f"| {strategy} | (no metrics) |")
            continue

        def avg(key: str, rows: list[dict] = rows) -> float:
            return statistics.fmean(r.get(key, 0.0) for r in rows)

        def zero(role: str, rows: list[dict] = rows) -> float:
            return statistics.fmean(float(r[f"debate/advantage_std/{role}"] == 0.0) for r in rows)

        lines.append(
            f"| {strategy} ({len(rows)} steps) | {avg('debate/advantage_std/solver'):.4f} "
            f"| {avg('debate/advantage_std/critic'):.4f} | {zero('solver'):.2f} | {zero('critic'):.2f} "
            f"| {avg('debate/counterfactual_tokens'):.0f} | {avg('step_time'):.2f} |"
        )
    return "\n".join(lines)


# ---- the per-run CSV (benchmarks/results/debate_sweep.csv) ------------------------------------------

CSV_FIELDS = [
    "arm",
    "seed",
    "start_accuracy",
    "final_accuracy",
    "collapsed",
    "final_truncated_fraction",
    "steps",
    "wall_time_s",
]


def run_row(strategy: str, run_dir: Path) -> dict[str, Any]:
    """One finished run as a CSV row (definitions: benchmarks/debate_table.py)."""
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    accuracy = [r["debate/team_accuracy"] for r in rows if "debate/team_accuracy" in r]
    window = accuracy[-summary["summary_window"] :]
    return {
        "arm": strategy,
        "seed": int(run_dir.name.rsplit("_s", 1)[1]),
        "start_accuracy": accuracy[0],
        "final_accuracy": summary["debate"]["team_accuracy"],
        "collapsed": all(a == 0 for a in window),
        "final_truncated_fraction": summary["truncated_fraction"],
        "steps": summary["steps"],
        "wall_time_s": round(summary["wall_time_s"], 1),
    }


def provenance() -> dict[str, str]:
    """What the CSV's numbers depend on besides the spec: commit, the prior's bytes, torch, CPU path."""
    import hashlib
    import os

    import torch

    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.models import tiny_model_dir

    cfg = RunConfig.model_validate(yaml.safe_load((SWEEP / "identity_seed0.yaml").read_text()))
    assert cfg.model.tiny is not None
    weights = tiny_model_dir(cfg.model.tiny) / "model.safetensors"
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    dirty = subprocess.run(
        [
            "git",
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "trainer",
            "specs",
            "generated/reward_shaping_debate",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return {
        "commit": commit.stdout.strip() + (" (with uncommitted changes)" if dirty else ""),
        "spec": SPEC,
        "prior": f"{cfg.model.tiny.prior}, model.safetensors sha256 "
        + hashlib.sha256(weights.read_bytes()).hexdigest(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "written": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def write_csv(path: Path) -> int:
    """Every finished run of every whole seed (all five arms finished), seed-major; returns the count.
    A seed an interrupted sweep left unfinished in some arm is left out whole and said so on stdout,
    so every arm has the same seeds; a run that did not finish is never a row."""
    import csv
    import io

    rows = [
        run_row(s, d)
        for s in STRATEGIES
        for d in sorted(RUNS.glob(f"{s}_s*"))
        if (d / "summary.json").is_file()
    ]
    seeds = {r["seed"] for r in rows}
    whole = {seed for seed in seeds if sum(r["seed"] == seed for r in rows) == len(STRATEGIES)}
    if seeds - whole:
        print(f"seeds {sorted(seeds - whole)} left out: not every arm finished them")
    rows = [r for r in rows if r["seed"] in whole]
    rows.sort(key=lambda r: (r["seed"], STRATEGIES.index(r["arm"])))
    out = io.StringIO()
    for key, value in provenance().items():
        out.write(f"# {key}: {value}\n")
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(out.getvalue())
    tmp.replace(path)
    return len(rows)


# ---- --cost: K counterfactuals per turn against plain GRPO ---------------------------------------


def cost_configs(steps: int, out: Path) -> dict[str, Path]:
    base = yaml.safe_load((SWEEP / "identity_seed0.yaml").read_text())
    base["grpo"]["max_steps"] = steps
    arms: dict[str, dict[str, Any]] = {"plain GRPO (identity)": {"strategy": "identity", "params": {}}}
    for k in (1, 2, 4):
        arms[f"coma K={k}"] = {"strategy": "coma", "params": {"counterfactuals": k}}
    arms["difference_rewards"] = {"strategy": "difference_rewards", "params": {}}
    paths = {}
    for name, shaping in arms.items():
        cfg = dict(base, reward_shaping=shaping, run_name=f"cost{len(paths)}")
        paths[name] = out / f"{len(paths)}.yaml"
        cfg["output_dir"] = str(out / f"run{len(paths)}")
        paths[name].write_text(yaml.safe_dump(cfg, sort_keys=False))
    return paths


def steady_rate(run_dir: Path) -> tuple[float, float, float]:
    """(steps/s from step 2 on, generated debate tokens/step, counterfactual tokens/step)."""
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "elapsed_s" in r]
    rate = (len(rows) - 1) / (rows[-1]["elapsed_s"] - rows[0]["elapsed_s"])
    tokens = statistics.fmean(r["debate/length_tokens"] * 16 for r in rows)  # 16 debates per step
    cf = statistics.fmean(r["debate/counterfactual_tokens"] for r in rows)
    return rate, tokens, cf


def cost(steps: int, rounds: int) -> str:
    import shutil

    out = Path("benchmarks/out/debate_cost")
    results: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(rounds):  # interleaved, so a change in machine load hits every arm alike
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for name, path in cost_configs(steps, out).items():
            subprocess.run(
                [sys.executable, "-m", "sweepgen_trainer", str(path)], check=True, capture_output=True
            )
            run_dir = Path(yaml.safe_load(path.read_text())["output_dir"])
            results.setdefault(name, []).append(steady_rate(run_dir))
    plain = statistics.fmean(r[0] for r in results["plain GRPO (identity)"])
    lines = [
        f"| arm | steps/s (mean of {rounds} rounds, steps 2-{steps}) | ratio to plain GRPO "
        "| debate tokens/step "
        "| counterfactual tokens/step |",
        "|---|---|---|---|---|",
    ]
    for name, rs in results.items():
        rate = statistics.fmean(r[0] for r in rs)
        lines.append(
            f"| {name} | {rate:.2f} | {rate / plain:.2f} | {statistics.fmean(r[1] for r in rs):.0f} "
            f"| {statistics.fmean(r[2] for r in rs):.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", default="1", help="runs at once (the machine has 2 cores)")
    parser.add_argument("--summarize-only", action="store_true")
    parser.add_argument(
        "--csv",
        default="",
        help="write one row per finished run here, e.g. "
        "benchmarks/results/debate_sweep.csv (RESULTS.md §7's table is computed from it)",
    )
    parser.add_argument("--seeds", type=int, default=10, help="run seeds 0..N-1 (the spec has 10)")
    parser.add_argument("--cost", action="store_true", help="measure K = 1, 2, 4 against plain GRPO")
    parser.add_argument("--cost-steps", type=int, default=10)
    parser.add_argument("--cost-rounds", type=int, default=2)
    args = parser.parse_args()
    if args.cost:
        print(cost(args.cost_steps, args.cost_rounds))
        return
    if not args.summarize_only:
        start = time.monotonic()
        sweepgen("render", SPEC)
        # Seed by seed, every arm of a seed before the next seed: a sweep stopped early (the CPU
        # budget) leaves whole seeds, each with all five arms, never an arm with more seeds than another.
        for seed in range(args.seeds):
            only = ",".join(f"{s}_seed{seed}" for s in STRATEGIES)
            sweepgen("run", str(SWEEP), "--jobs", args.jobs, "--only", only)
            print(f"seed {seed} done at {time.monotonic() - start:.0f} s", flush=True)
        print(f"sweep wall time: {time.monotonic() - start:.0f} s")
        sweepgen("report", str(SWEEP), "--compare", "identity")
    if args.csv:
        print(
            f"{write_csv(Path(args.csv))} runs written to {args.csv}; its table (benchmarks/debate_table.py):"
        )
        sys.path.insert(0, str(Path(__file__).parent))
        import debate_table

        print(debate_table.table(debate_table.read(Path(args.csv))[1]))
    print(verdicts())
    print()
    print(advantage_table())


if __name__ == "__main__":
    main()
