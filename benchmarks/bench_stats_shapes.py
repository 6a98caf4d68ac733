"""Calibration of `report`'s comparisons on RL-shaped per-seed values (benchmarks/RESULTS.md,
"Calibration on RL-shaped metrics"): for each shape and seed count, the share of null comparisons
called better or worse (stated: 5%), the coverage of the printed difference interval, and the
family-wise rate with four arms against one baseline. Calls sweepgen.run.report.stats.verdicts.compare
directly (not the CLI) for speed.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_shapes.py [--reps 2000] [--only binom10]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from sweepgen.run.report.stats import verdicts as stats

Draw = Callable[[np.random.Generator, int], np.ndarray]


def _binomial(items: int, p: float) -> Draw:
    return lambda rng, n: rng.binomial(items, p, n) / items


def _collapse(rng: np.random.Generator, n: int) -> np.ndarray:
    values = rng.normal(0.6, 0.05, n)
    values[rng.random(n) < 0.15] = 0.0  # a run that diverged
    return values


SHAPES: dict[str, Draw] = {
    "normal": lambda rng, n: rng.normal(0.5, 0.05, n),
    "binom10_p0.95": _binomial(10, 0.95),  # accuracy over 10 eval items near the cap
    "binom20_p0.9": _binomial(20, 0.9),
    "binom5_p0.9": _binomial(5, 0.9),
    "t2": lambda rng, n: 0.5 + 0.05 * rng.standard_t(2, n),
    "collapse15": _collapse,
    "lognormal": lambda rng, n: rng.lognormal(0.0, 1.0, n),
}
SIZES = ((2, 2), (3, 3), (4, 4), (5, 5), (8, 8), (3, 5), (5, 3), (2, 5))


def cell(draw: Draw, n_arm: int, n_base: int, reps: int, arms: int = 1) -> tuple[float, float, float]:
    """(false-verdict share of arm 0, coverage of its printed interval, family-wise share) under the
    null: every group drawn from the same shape."""
    rng = np.random.default_rng(1)
    wrong = covered = shown = family = 0
    for _ in range(reps):
        groups = [("base", draw(rng, n_base).tolist())]
        groups += [(f"a{j}", draw(rng, n_arm).tolist()) for j in range(arms)]
        found = stats.compare(groups, baseline="base", mode="max", seeds_needed=False).comparisons
        first = found[0]
        wrong += first.verdict in ("better", "worse")
        if first.low is not None and first.high is not None:
            shown += 1
            covered += first.low <= 0 <= first.high
        family += any(c.verdict in ("better", "worse") for c in found)
    return wrong / reps, covered / max(shown, 1), family / reps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--only", default=None, help="one shape's name")
    args = parser.parse_args()
    print("| shape | seeds (arm + baseline) | false verdicts | interval coverage | 4 arms: family-wise |")
    print("| --- | --- | --- | --- | --- |")
    for name, draw in SHAPES.items():
        if args.only and name != args.only:
            continue
        for n_arm, n_base in SIZES:
            wrong, cover, _ = cell(draw, n_arm, n_base, args.reps)
            four = cell(draw, n_arm, n_base, args.reps // 4, arms=4)[2] if n_arm == n_base else None
            fw = "-" if four is None else f"{four:.1%}"
            print(f"| {name} | {n_arm} + {n_base} | {wrong:.1%} | {cover:.1%} | {fw} |", flush=True)


if __name__ == "__main__":
    main()
