"""`report --compare`'s power analysis against ground truth (benchmarks/RESULTS.md §24): the seeds
it prints as needed for 80% power, and the difference it prints as detectable, checked by simulating
``stats.compare`` itself on normal runs with the true difference and spreads known.

Parts (``--part``):
- ``seeds``: per case (standardised difference d, Holm alpha, the arm's share of the variance), the
  seeds ``stats.compare`` prints for data showing exactly that difference and those variances, the
  old equal-variance t formula's, and the share of simulated sweeps it decides at N and N - 1;
- ``detectable``: per seed count and spread ratio, the detectable difference printed, and the share
  of simulated sweeps decided at that true difference (and at the old formula's);
- ``permutation``: with ``--test permutation``, the seeds printed and the share of simulated sweeps
  that test decides there (it can reach Holm's level only from some n on: 6 + 6 at 0.005);
- ``levels``: the calibrated level at n + n rises with n from 3 (what ``power._bounds`` relies on),
  and the power lost by taking the level at 32 seeds beyond;
- ``cost``: ``stats.compare`` of 200 groups x 5 seeds (40 null, 159 shifted by 3 sd), CPU seconds.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_power.py --part seeds --reps 2000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats as st

from sweepgen.run.report.stats import calibrated, power
from sweepgen.run.report.stats import verdicts as stats

SEEDS_CASES = (  # d, alpha, weight (the arm's variance share)
    (2.5, 0.05, 0.5),
    (3.0, 0.025, 0.5),
    (4.0, 0.005, 0.5),
    (2.0, 0.05, 0.5),
    (1.2, 0.05, 0.5),
    (2.5, 0.05, 0.9),
    (2.0, 0.05, 0.1),
    (3.0, 0.01, 0.8),
)
DETECT_CASES = (
    (2, 2, 1.0),
    (3, 3, 1.0),
    (4, 4, 1.0),
    (5, 5, 1.0),
    (2, 5, 1.0),
    (3, 8, 3.0),
    (3, 3, 3.0),
    (5, 3, 0.5),
)


def old_seeds(effect: float, alpha: float) -> int | None:
    """The equal-variance two-sample t formula report printed before (pooled sd, df 2n - 2)."""
    for n in range(2, power.MAX_SEEDS + 1):
        df, nc = 2 * n - 2, abs(effect) * math.sqrt(n / 2)
        crit = st.t.isf(alpha / 2, df)
        if st.nct.sf(crit, df, nc) + st.nct.cdf(-crit, df, nc) >= power.POWER:
            return n
    return None


def old_detectable(n1: int, n2: int, sd: float, alpha: float) -> float:
    n = 2 / (1 / n1 + 1 / n2)
    df = max(2 * n - 2, 1.0)
    crit = st.t.isf(alpha / 2, df)
    grid = np.linspace(0.01, 40, 40000)
    ok = st.nct.sf(crit, df, grid * math.sqrt(n / 2)) >= power.POWER
    return float(grid[np.argmax(ok)]) * sd


def decided(
    n1: int, n2: int, diff: float, sd1: float, sd2: float, alpha: float, reps: int, seed: int
) -> float:
    rng = np.random.default_rng(seed)
    methods = stats.Methods(alpha=alpha)
    hits = 0
    for _ in range(reps):
        arm = rng.normal(diff, sd1, n1).tolist()
        base = rng.normal(0.0, sd2, n2).tolist()
        c = stats.compare(
            [("base", base), ("arm", arm)], baseline="base", mode="max", methods=methods, seeds_needed=False
        )
        hits += c.comparisons[0].verdict == "better"
    return hits / reps


def two(mean: float, var: float) -> list[float]:
    h = math.sqrt(var / 2)
    return [mean - h, mean + h]


def printed(arm: list[float], base: list[float], alpha: float) -> stats.Comparison:
    result = stats.compare(
        [("base", base), ("arm", arm)], baseline="base", mode="max", methods=stats.Methods(alpha=alpha)
    )
    return result.comparisons[0]


def seeds(reps: int) -> None:
    print(
        "| d | alpha | arm's variance share | old N | N printed | exact power N / N-1 | simulated N / N-1 |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for i, (d, alpha, w) in enumerate(SEEDS_CASES):
        var_arm, var_base = 2 * w, 2 * (1 - w)  # pooled variance 1: the difference is d
        c = printed(two(d, var_arm), two(0.0, var_base), alpha)
        n = c.seeds_needed
        assert n is not None and c.verdict == "no evidence", c
        sd1, sd2 = math.sqrt(var_arm), math.sqrt(var_base)
        at = [decided(k, k, d, sd1, sd2, alpha, reps, 100 * i + k) for k in (n, n - 1)]
        exact = [power.power(k, d, alpha, w) for k in (n, n - 1)]
        se = math.sqrt(0.8 * 0.2 / reps)
        print(
            f"| {d} | {alpha} | {w} | {old_seeds(d, alpha)} | {n} | {exact[0]:.1%} / {exact[1]:.1%} "
            f"| {at[0]:.1%} / {at[1]:.1%} (MC se {se:.1%}) |"
        )


def detectable(reps: int) -> None:
    print("| arm + base | arm sd / base sd | old detectable (its power) | printed | simulated power there |")
    print("| --- | ---: | --- | ---: | ---: |")
    for i, (n1, n2, ratio) in enumerate(DETECT_CASES):
        var_arm, var_base = ratio**2, 1.0
        c = printed(two(0.0, var_arm) + [0.0] * (n1 - 2), two(0.0, var_base) + [0.0] * (n2 - 2), 0.05)
        # the extra zeros shrink the sample variances: take the printed detectable at those
        va, vb = (
            stats._var(two(0.0, var_arm) + [0.0] * (n1 - 2)),
            stats._var(two(0.0, var_base) + [0.0] * (n2 - 2)),
        )
        assert c.detectable is not None
        sim = decided(n1, n2, c.detectable, math.sqrt(va), math.sqrt(vb), 0.05, reps, 7000 + i)
        old = old_detectable(n1, n2, power.pooled_sd(va, vb), 0.05)
        old_sim = decided(n1, n2, old, math.sqrt(va), math.sqrt(vb), 0.05, reps, 8000 + i)
        print(f"| {n1} + {n2} | {ratio} | {old:.3g} ({old_sim:.1%}) | {c.detectable:.3g} | {sim:.1%} |")


PERMUTATION_CASES = (
    (3.0, 0.05),
    (2.5, 0.05),
    (2.0, 0.05),
    (4.0, 0.005),
    (3.0, 0.01),
    (5.0, 0.03),
    (3.0, 0.03),
)


def permutation(reps: int) -> None:
    print("| d | alpha | N printed (calibrated Welch's N) | permutation test decides at N |")
    print("| ---: | ---: | --- | ---: |")
    for i, (d, alpha) in enumerate(PERMUTATION_CASES):
        methods = stats.Methods(test="permutation", alpha=alpha)
        c = stats.compare(
            [("base", two(0.0, 1.0)), ("arm", two(d, 1.0))], baseline="base", mode="max", methods=methods
        )
        n = c.comparisons[0].seeds_needed
        assert n is not None
        rng = np.random.default_rng(9000 + i)
        hits = 0
        for _ in range(reps):
            groups = [("base", rng.normal(0, 1, n).tolist()), ("arm", rng.normal(d, 1, n).tolist())]
            got = stats.compare(groups, baseline="base", mode="max", methods=methods, seeds_needed=False)
            hits += got.comparisons[0].verdict == "better"
        print(f"| {d} | {alpha} | {n} ({power.seeds_needed(d, alpha)}) | {hits / reps:.1%} |")


def levels() -> None:
    print(
        "| alpha | level at n + n rises with n (3..64) | level at 32 / alpha | largest power lost past 32 |"
    )
    print("| ---: | --- | ---: | ---: |")
    for alpha in (0.05, 0.025, 0.005, 0.0005, 5e-5, 1e-6):
        got = [calibrated.level(n, n, alpha) for n in range(3, 65)]  # power.py bounds from 3 seeds on
        rising = all(b >= a for a, b in zip(got, got[1:]))
        at32 = calibrated.level(32, 32, alpha)
        lost = 0.0
        for n in (33, 48, 64, 128, 256):
            exact = calibrated.level(n, n, alpha)
            for shift in np.linspace(1.5, 5.0, 15):
                w = np.array([0.5, 0.99])
                diff = calibrated.rates(w, n, n, exact, shift=shift) - calibrated.rates(
                    w, n, n, at32, shift=shift
                )
                lost = max(lost, float(diff.max()))
        print(f"| {alpha} | {rising} | {at32 / alpha:.5f} | {lost:.1e} |")


def cost() -> None:
    rng = np.random.default_rng(0)
    groups = [("base", rng.normal(0, 1, 5).tolist())]
    groups += [(f"null{i}", rng.normal(0, 1, 5).tolist()) for i in range(40)]
    groups += [(f"shift{i}", rng.normal(3, 1, 5).tolist()) for i in range(159)]
    start = time.process_time()
    result = stats.compare(groups, baseline="base", mode="max")
    spent = time.process_time() - start
    quiet = sum(c.verdict == "no evidence" for c in result.comparisons)
    print(
        f"stats.compare, 200 groups x 5 seeds: {spent:.2f} s CPU ({quiet} comparisons with a power analysis)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--part", choices=("seeds", "detectable", "permutation", "levels", "cost"), default="seeds"
    )
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    parts = {
        "seeds": lambda: seeds(args.reps),
        "detectable": lambda: detectable(args.reps),
        "permutation": lambda: permutation(args.reps),
        "levels": levels,
        "cost": cost,
    }
    parts[args.part]()


if __name__ == "__main__":
    main()
