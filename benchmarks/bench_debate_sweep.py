"""The reward-shaping debate sweep (specs/reward_shaping_debate.yaml): 5 strategies x 3 seeds, tiny model.

Run from the repository root (the spec's data path and output_dir are relative to it):

    OMP_NUM_THREADS=1 python benchmarks/bench_debate_sweep.py --jobs 1        # render, run, report, summarize
    python benchmarks/bench_debate_sweep.py --summarize-only   # table of an existing runs/ folder

It renders the spec, runs it with `sweepgen run` (finished runs are skipped, so it resumes), writes
`sweepgen report` (runs/reward_shaping_debate/report.csv, report.png) and prints one Markdown row per
strategy: final team accuracy (mean of the last summary_window steps) as mean ± std over seeds, the
per-role individual rewards, the fraction of groups with zero advantage, the debate length, and the
wall time per run and per step. It also times the shaping itself (pure Python) on one batch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

SPEC = "specs/reward_shaping_debate.yaml"
SWEEP = Path("generated/reward_shaping_debate")
RUNS = Path("runs/reward_shaping_debate")
STRATEGIES = ["identity", "difference_rewards", "potential_based", "coma", "reward_mixing"]


def sweepgen(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "sweepgen", *args], check=True)


def summarize() -> str:
    lines = [
        "| strategy | team accuracy (final) | best reward | I solver | I critic | zero-adv groups "
        "| tokens/debate | wall s/run | s/step |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        summaries = [json.loads(p.read_text()) for p in sorted(RUNS.glob(f"{strategy}_s*/summary.json"))]
        if not summaries:
            lines.append(f"| {strategy} | (no finished run) |")
            continue
        acc = [s["debate"]["team_accuracy"] for s in summaries]
        best = [s["best_reward"] for s in summaries]
        wall = [s["wall_time_s"] for s in summaries]
        steps = [s["steps"] for s in summaries]

        def mean(key: str, summaries: list[dict] = summaries) -> float:
            return statistics.fmean(s["debate"][key] for s in summaries)

        spread = f" ± {statistics.stdev(acc):.3f}" if len(acc) > 1 else ""
        lines.append(
            f"| {strategy} (n={len(summaries)}) | {statistics.fmean(acc):.3f}{spread} "
            f"| {statistics.fmean(best):.3f} | {mean('reward_solver'):.3f} | {mean('reward_critic'):.3f} "
            f"| {mean('zero_advantage_groups'):.2f} "
            f"| {mean('length_tokens'):.1f} | {statistics.fmean(wall):.0f} | {sum(wall) / sum(steps):.2f} |"
        )
    return "\n".join(lines) + "\n\n" + advantage_table()


def advantage_table() -> str:
    """Per-role advantage statistics from metrics.jsonl over every step of every seed: what each role
    was trained on (mean and std of the applied advantage, and the share of steps where it was all 0)."""
    lines = [
        "| strategy | A mean solver | A mean critic | A std solver | A std critic "
        "| steps with A=0 solver | steps with A=0 critic |",
        "|---|---|---|---|---|---|---|",
    ]
    for strategy in STRATEGIES:
        rows = []
        for path in sorted(RUNS.glob(f"{strategy}_s*/metrics.jsonl")):
            rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        rows = [r for r in rows if "debate/advantage_std/solver" in r]
        if not rows:
            lines.append(f"| {strategy} | (no metrics) |")
            continue

        def avg(key: str, rows: list[dict] = rows) -> float:
            return statistics.fmean(r[key] for r in rows)

        def zero(role: str, rows: list[dict] = rows) -> float:
            return statistics.fmean(float(r[f"debate/advantage_std/{role}"] == 0.0) for r in rows)

        lines.append(
            f"| {strategy} ({len(rows)} steps) | {avg('debate/advantage_mean/solver'):+.4f} "
            f"| {avg('debate/advantage_mean/critic'):+.4f} | {avg('debate/advantage_std/solver'):.4f} "
            f"| {avg('debate/advantage_std/critic'):.4f} | {zero('solver'):.2f} | {zero('critic'):.2f} |"
        )
    return "\n".join(lines)


def shaping_cost(repeats: int = 200) -> str:
    """Wall time of shaping one step's batch (2 groups x 8 debates of 3 turns), per strategy."""
    from trainer.debate.group import Group, Turn
    from trainer.debate.shaping import advantages

    def final(turns):
        return turns[-1].correct if turns else 0.0

    roles = ("solver", "critic", "solver")
    groups = [
        Group(
            tuple(
                tuple(Turn(r, "", 6, float((i + t + g) % 3 == 0)) for t, r in enumerate(roles))
                for i in range(8)
            ),
            final,
        )
        for g in range(2)
    ]
    params = {
        "identity": {},
        "difference_rewards": {},
        "reward_mixing": {"alpha": 0.5},
        "potential_based": {"gamma": 0.99, "potential_type": "debate_length"},
        "coma": {},
    }
    out = []
    for name in STRATEGIES:
        start = time.perf_counter()
        for _ in range(repeats):
            advantages(groups, name, params[name], "group")
        out.append(f"{name} {1e6 * (time.perf_counter() - start) / repeats:.0f} µs")
    return "shaping one batch of 16 debates: " + ", ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1", help="runs at once (the machine has 2 cores)")
    parser.add_argument("--summarize-only", action="store_true")
    args = parser.parse_args()
    if not args.summarize_only:
        start = time.monotonic()
        sweepgen("render", SPEC)
        sweepgen("run", str(SWEEP), "--jobs", args.jobs)
        print(f"sweep wall time: {time.monotonic() - start:.0f} s")
    sweepgen("report", str(SWEEP))
    print(summarize())
    print(shaping_cost())


if __name__ == "__main__":
    main()
