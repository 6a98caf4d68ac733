"""Report statistics, round eight (benchmarks/RESULTS.md §33): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``items``: an accuracy over m fixed eval items of varying difficulty (Beta(1.4, 0.6): the task's
  accuracy 0.7), every seed scoring the same m items: how often the report's 95% mean interval
  (``stats.t_mean``) holds the task's accuracy, at 3 and 5 seeds;
- ``skew``: a metric with a heavy right tail (lognormal; a rare seed far above the others): how
  often the 95% t interval of a group mean holds its true mean, at 2, 3 and 5 seeds, and how often
  the report's test (``stats.difference_test``: Welch's at the calibrated level) calls such an arm
  different from a baseline of the same mean (the same lognormal; a tight normal one).

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round8.py --part items --reps 20000
    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round8.py --part skew --reps 2000
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from sweepgen.run.report import stats

Draw = Callable[[int], np.ndarray]


def _items(reps: int) -> None:
    rng = np.random.default_rng(1)
    for m in (20, 100, 500):
        for n in (3, 5):
            covered = 0
            for _ in range(reps):
                q = rng.beta(1.4, 0.6, m)
                low, high = stats.t_mean(((rng.random((n, m)) < q).mean(1)).tolist())
                covered += low is not None and high is not None and low <= 0.7 <= high
            print(f"items m={m} seeds={n}: 95% mean interval holds the task's 0.7 in {covered / reps:.1%}")


def _lognormal(rng: np.random.Generator, mu: float, sigma: float) -> Draw:
    return lambda k: rng.lognormal(mu, sigma, k)


def _skew(reps: int) -> None:
    rng = np.random.default_rng(2)
    for sigma in (1.0, 1.5):
        truth = math.exp(sigma**2 / 2)
        for n in (2, 3, 5):
            x = rng.lognormal(0, sigma, (reps, n))
            covered = sum(_holds(row.tolist(), truth) for row in x)
            print(
                f"skew lognormal sigma={sigma} seeds={n}: "
                f"95% t interval holds the mean in {covered / reps:.1%}"
            )
    tight: Draw = lambda k: rng.normal(math.exp(0.5), 0.1, k)  # noqa: E731 - the same mean, no tail
    for n in (3, 5):
        for name, arm, base in (
            ("same lognormal", _lognormal(rng, 0, 1), _lognormal(rng, 0, 1)),
            ("lognormal vs tight normal", _lognormal(rng, 0, 1), tight),
        ):
            called = sum(_called(arm(n), base(n)) for _ in range(reps))
            print(f"skew {name} seeds={n}: equal means called different in {called / reps:.1%}")


def _holds(values: list[float], truth: float) -> bool:
    low, high = stats.t_mean(values)
    return low is not None and high is not None and low <= truth <= high


def _called(arm: np.ndarray, base: np.ndarray) -> bool:
    _, p = stats.difference_test(arm.tolist(), base.tolist())
    return p is not None and p < stats.ALPHA


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("items", "skew"), required=True)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    (_items if args.part == "items" else _skew)(args.reps)


if __name__ == "__main__":
    main()
