"""Benchmark: do `report`'s intervals cover, does its verdict keep its error rate, and how often does
it detect a real effect, at the seed counts people run? Simulated with known ground truth, through
the report's own functions (sweepgen.run.report.stats, bootstrap).

- coverage: the share of 95% intervals (t for a mean, Welch for a difference; the percentile bootstrap
  for both, by name) that contain the true value, at n = 2, 3, 5, 10 seeds per group; each group's
  values are normal, mean 0.5, sd 0.05 (the difference: arm sd 0.05, baseline sd 0.1, so that Welch's
  unequal variances matter);
- family-wise false-positive rate under the null: 8 arms and a baseline with the same mean (sd 0.05
  each, one arm at sd 0.15: a noisier arm), the share of replications where any verdict says
  better/worse, through ``stats.compare`` with Welch and Holm;
- power at 1 sd: one arm 1 sd above the baseline among 8 arms at the null, the share of replications
  in which its verdict is "better";
- `run --until-decided` (sweepgen.run.report.sequential, the function the command uses): a baseline
  and one arm shifted by 0, 0.5, 1 and 2 sd, seeds added in rounds up to 5 (looks at 2, 3, 4, 5) and
  up to 10 (looks at 2, 4, 6, 8, 10), each spending function: the share of replications with a
  verdict (at 0 sd: the error rate, to be <= 0.05), the mean seeds per group spent, and the same
  error rate when each look is the fixed-n report instead (peeking, what the rule avoids); and the
  family-wise error rate with 3 arms at the null.

Usage (from the repo root)::

    python benchmarks/bench_stats.py --reps 2000 [--seed 0] [--only sequential]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sweepgen.run.report import bootstrap, sequential, stats

NS = (2, 3, 5, 10)
MEAN, SD = 0.5, 0.05


def coverage(rng: np.random.Generator, n: int, reps: int) -> dict[str, float]:
    hits = {"t mean": 0, "bootstrap mean": 0, "Welch diff": 0, "bootstrap diff": 0}
    for rep in range(reps):
        x = rng.normal(MEAN, SD, n).tolist()
        arm = rng.normal(MEAN + 0.02, SD, n).tolist()
        base = rng.normal(MEAN, 2 * SD, n).tolist()
        low, high = stats.t_mean(x)
        hits["t mean"] += low <= MEAN <= high
        blow, bhigh = bootstrap.mean_interval(np, x, 0.95, seed=rep)
        hits["bootstrap mean"] += blow <= MEAN <= bhigh
        dlow, dhigh = stats.welch_interval(arm, base, 0.95)
        hits["Welch diff"] += dlow <= 0.02 <= dhigh
        blow, bhigh = bootstrap.diff_interval(np, arm, base, 0.95, seed=rep)
        hits["bootstrap diff"] += blow <= 0.02 <= bhigh
    return {k: v / reps for k, v in hits.items()}


def arms(rng: np.random.Generator, n: int, shift_sd: float) -> list[tuple[str, list[float]]]:
    """A baseline and 8 arms; arm a0 shifted by ``shift_sd`` sds, arm a7 three times as noisy."""
    out = [("base", rng.normal(MEAN, SD, n).tolist())]
    for i in range(8):
        sd = 3 * SD if i == 7 else SD
        out.append((f"a{i}", rng.normal(MEAN + (shift_sd * SD if i == 0 else 0.0), sd, n).tolist()))
    return out


def fwer(rng: np.random.Generator, n: int, reps: int, test: str) -> float:
    wrong = 0
    for _ in range(reps):
        result = stats.compare(
            arms(rng, n, 0.0),
            baseline="base",
            mode="max",
            methods=stats.Methods(test=test),
            seeds_needed=False,
        )
        wrong += any(c.verdict in ("better", "worse") for c in result.comparisons)
    return wrong / reps


def power(rng: np.random.Generator, n: int, reps: int) -> float:
    found = 0
    for _ in range(reps):
        result = stats.compare(arms(rng, n, 1.0), baseline="base", mode="max", seeds_needed=False)
        found += next(c for c in result.comparisons if c.name == "a0").verdict == "better"
    return found / reps


SHIFTS = (0.0, 0.5, 1.0, 2.0)


def until_decided(
    rng: np.random.Generator, schedule: sequential.Schedule, shift_sd: float, reps: int, arms: int = 1
) -> tuple[float, float, float]:
    """(share with any verdict, mean seeds per group spent, share with any verdict when every look is
    the fixed-n report: peeking) for a baseline and ``arms`` arms, the first shifted by ``shift_sd``."""
    decided = peeked = 0
    spent = 0.0
    for _ in range(reps):
        values = {"base": rng.normal(MEAN, SD, schedule.max_seeds).tolist()}
        for i in range(arms):
            values[f"a{i}"] = rng.normal(
                MEAN + (shift_sd * SD if i == 0 else 0.0), SD, schedule.max_seeds
            ).tolist()
        outcome = sequential.simulate(values, "base", schedule)
        decided += any(v != sequential.OPEN for v in outcome.verdicts.values())
        spent += sum(outcome.seeds.values()) / len(outcome.seeds)
        peeked += any(
            c.verdict in ("better", "worse")
            for n in schedule.looks
            for c in stats.compare(
                [(k, v[:n]) for k, v in values.items()], baseline="base", mode="max", seeds_needed=False
            ).comparisons
        )
    return decided / reps, spent / reps, peeked / reps


def print_until_decided(rng: np.random.Generator, reps: int) -> None:
    print(f"\nrun --until-decided: one arm against the baseline, {reps} replications per row")
    print("max  per_round  spending  shift_sd  verdict_rate  mean_seeds  peeking_rate")
    for max_seeds, per_round in ((5, 1), (10, 2)):
        for spending in sequential.SPENDING:
            schedule = sequential.Schedule(per_round, max_seeds, spending=spending)
            for shift in SHIFTS:
                rate, seeds, peek = until_decided(rng, schedule, shift, reps)
                print(
                    f"{max_seeds:<4} {per_round:<10} {spending:<9} {shift:<9} {rate:<13.3f} "
                    f"{seeds:<11.2f} {peek:.3f}"
                )
    print(f"family-wise error rate, 3 arms at the null, {reps} replications")
    for max_seeds, per_round in ((5, 1), (10, 2)):
        schedule = sequential.Schedule(per_round, max_seeds)
        rate, seeds, peek = until_decided(rng, schedule, 0.0, reps, arms=3)
        print(
            f"max {max_seeds}, per round {per_round}, obf: {rate:.3f} (peeking {peek:.3f}), "
            f"mean seeds {seeds:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=["sequential"], default=None, help="only the --until-decided rows")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.only == "sequential":
        print_until_decided(rng, args.reps)
        print(f"\n{time.perf_counter() - start:.1f} s")
        return
    print(f"coverage of 95% intervals ({args.reps} replications per n)")
    print(
        "n   " + "  ".join(f"{k:>15}" for k in ("t mean", "bootstrap mean", "Welch diff", "bootstrap diff"))
    )
    for n in (*NS, 4, 20):
        cov = coverage(rng, n, args.reps)
        print(f"{n:<3} " + "  ".join(f"{v:>15.3f}" for v in cov.values()))
    print(f"\nfamily-wise false-positive rate, 8 arms at the null (one 3x noisier), {args.reps} replications")
    for n in NS:
        print(f"n={n:<3} welch+holm {fwer(rng, n, args.reps, 'welch'):.3f}")
    print(f"\npower at 1 sd (one arm of 8 shifted, Welch + Holm over 8), {args.reps} replications")
    for n in (3, 5, 10):
        print(f"n={n:<3} {power(rng, n, args.reps):.3f}")
    print_until_decided(rng, args.reps)
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
