"""Benchmark: do `report`'s intervals cover, does its verdict keep its error rate, and how often does
it detect a real effect, at the seed counts people run? Simulated with known ground truth, through
the report's own functions (sweepgen.run.report.stats.verdicts, bootstrap).

- coverage: the share of 95% intervals (t for a mean, Welch for a difference; the percentile bootstrap
  for both, by name) that contain the true value, at n = 2, 3, 5, 10 seeds per group; each group's
  values are normal, mean 0.5, sd 0.05 (the difference: arm sd 0.05, baseline sd 0.1, so that Welch's
  unequal variances matter);
- family-wise false-positive rate under the null: 8 arms and a baseline with the same mean (sd 0.05
  each, one arm at sd 0.15: a noisier arm), the share of replications where any verdict says
  better/worse, through ``stats.compare`` with Welch and Holm;
- power at 1 sd: one arm 1 sd above the baseline among 8 arms at the null, the share of replications
  in which its verdict is "better";
- `run --until-decided` (sweepgen.run.report.stats.sequential, the function the command uses): a baseline
  and one arm shifted by 0, 0.5, 1 and 2 sd, seeds added in rounds up to 5 (looks at 2, 3, 4, 5) and
  up to 10 (looks at 2, 4, 6, 8, 10), each spending function: the share of replications with a
  verdict (at 0 sd: the error rate, to be <= 0.05), the mean seeds per group spent, and the same
  error rate when each look is the fixed-n report instead (peeking, what the rule avoids); and the
  family-wise error rate with 3 arms at the null;
- ``--only sequential-spread``: that error rate where the spreads differ 10:1 (the arms or the
  baseline noisier; 1 or 3 arms), with the looks' test now and with plain Welch as before, on the
  same draws.

Usage (from the repo root)::

    python benchmarks/bench_stats.py --reps 2000 [--seed 0] [--only sequential|sequential-spread]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from sweepgen.run.report.stats import bootstrap, sequential
from sweepgen.run.report.stats import verdicts as stats

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


def _schedules() -> list[sequential.Schedule]:
    """Up to 5 seeds a look at a time, and up to 10 two at a time, with each spending function."""
    return [
        sequential.Schedule(per_round, max_seeds, spending=spending)
        for max_seeds, per_round in ((5, 1), (10, 2))
        for spending in sequential.SPENDING
    ]


def _schedule_cells(schedule: sequential.Schedule) -> str:
    return f"{schedule.max_seeds:<4} {schedule.per_round:<10} {schedule.spending:<9}"


def print_until_decided(rng: np.random.Generator, reps: int) -> None:
    print(f"\nrun --until-decided: one arm against the baseline, {reps} replications per row")
    print("max  per_round  spending  shift_sd  verdict_rate  mean_seeds  peeking_rate")
    for schedule in _schedules():
        for shift in SHIFTS:
            rate, seeds, peek = until_decided(rng, schedule, shift, reps)
            print(f"{_schedule_cells(schedule)} {shift:<9} {rate:<13.3f} {seeds:<11.2f} {peek:.3f}")
    print(f"family-wise error rate, 3 arms at the null, {reps} replications")
    for max_seeds, per_round in ((5, 1), (10, 2)):
        schedule = sequential.Schedule(per_round, max_seeds)
        rate, seeds, peek = until_decided(rng, schedule, 0.0, reps, arms=3)
        print(
            f"max {max_seeds}, per round {per_round}, obf: {rate:.3f} (peeking {peek:.3f}), "
            f"mean seeds {seeds:.2f}"
        )


SPREAD_CASES = ((1, 10.0, 1.0), (1, 1.0, 10.0), (3, 10.0, 1.0), (3, 1.0, 10.0))  # arms, arm sd, base sd


def _plain_welch(arm: list[float], base: list[float], test: str = "welch") -> tuple[str | None, float | None]:
    """What each look tested before round four: Welch's own p (Hsu's df, 1, at two seeds against
    more), the error rate it keeps only at equal spreads."""
    from scipy import stats as sps

    if len(arm) < 2 or len(base) < 2 or stats.no_spread(arm, base):
        return None, None
    diff, se, df = stats.welch(arm, base)
    if min(len(arm), len(base)) == 2 and len(arm) != len(base):
        df = 1.0
    return "welch", float(2 * sps.t.sf(abs(diff / se), df))


def null_rate_spread(
    rng: np.random.Generator, schedule: sequential.Schedule, case: tuple[int, float, float], reps: int
) -> float:
    """The share of replications in which `run --until-decided` called any null arm (every group at
    one mean; ``case``: how many arms, the arms' sd and the baseline's, in units of SD)."""
    arms, arm_sd, base_sd = case
    wrong = 0
    for _ in range(reps):
        values = {"base": rng.normal(MEAN, base_sd * SD, schedule.max_seeds).tolist()}
        for i in range(arms):
            values[f"a{i}"] = rng.normal(MEAN, arm_sd * SD, schedule.max_seeds).tolist()
        outcome = sequential.simulate(values, "base", schedule)
        wrong += any(v != sequential.OPEN for v in outcome.verdicts.values())
    return wrong / reps


def print_sequential_spread(seed: int, reps: int) -> None:
    """The family-wise error rate of the looks where the spreads differ 10:1, with the test the
    looks use now (the calibrated level) and with plain Welch (before), on the same draws."""
    from unittest import mock

    print(f"\nrun --until-decided under the null, spreads 10:1, {reps} replications per cell")
    print("max  per_round  spending  arms  arm_sd  base_sd  plain_welch  calibrated")
    for schedule in _schedules():
        for case in SPREAD_CASES:
            with mock.patch.object(sequential.stats, "difference_test", _plain_welch):
                before = null_rate_spread(np.random.default_rng(seed), schedule, case, reps)
            now = null_rate_spread(np.random.default_rng(seed), schedule, case, reps)
            cells = f"{case[0]:<5} {case[1]:<7} {case[2]:<8} {before:<12.4f} {now:.4f}"
            print(f"{_schedule_cells(schedule)} {cells}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only",
        choices=["sequential", "sequential-spread"],
        default=None,
        help="only the --until-decided rows (sequential-spread: its error rate at spreads 10:1)",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    if args.only == "sequential-spread":
        print_sequential_spread(args.seed, args.reps)
        print(f"\n{time.perf_counter() - start:.1f} s")
        return
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
