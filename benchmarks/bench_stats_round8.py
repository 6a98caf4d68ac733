"""Report statistics, round eight (benchmarks/RESULTS.md §33): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``items``: an accuracy over m fixed eval items of varying difficulty (Beta(1.4, 0.6): the task's
  accuracy 0.7), every seed scoring the same m items: how often the report's 95% mean interval
  (``stats.t_mean``) holds the task's accuracy, at 3 and 5 seeds;
- ``skew``: a metric with a heavy right tail (lognormal; a rare seed far above the others): how
  often the 95% t interval of a group mean holds its true mean, at 2, 3 and 5 seeds, and how often
  the report's test (``stats.difference_test``: Welch's at the calibrated level) calls such an arm
  different from a baseline of the same mean (the same lognormal; a tight normal one);
- ``power``: normal runs ``shift`` sd apart, the comparisons without evidence: how often the seeds
  needed that `report` prints (the plug-in count, and the count at the top of the spread's 80%
  interval) give the observed difference 80% power at the true spread (``power.power``).

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round8.py --part items --reps 20000
    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round8.py --part skew --reps 2000
    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round8.py --part power --reps 400
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np

from sweepgen.run.report.stats import power
from sweepgen.run.report.stats import verdicts as stats

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


def _power(reps: int) -> None:
    rng = np.random.default_rng(5)
    for n, shift in ((3, 1.0), (3, 0.5), (5, 1.0)):
        point, top = [], []
        for _ in range(reps):
            arm, base = rng.normal(shift, 1, n).tolist(), rng.normal(0, 1, n).tolist()
            (c,) = stats.compare([("b", base), ("a", arm)], baseline="b", mode="max").comparisons
            if c.verdict != "no evidence" or c.seeds_needed is None or c.seeds_needed_high is None:
                continue
            point.append(power.power(c.seeds_needed, abs(c.diff), stats.ALPHA) >= power.POWER)
            top.append(power.power(c.seeds_needed_high, abs(c.diff), stats.ALPHA) >= power.POWER)
        print(
            f"power {n} + {n} seeds, {shift} sd: {len(point)} without evidence; 80% reached at the true "
            f"spread by the printed count in {np.mean(point):.1%}, "
            f"by the spread-top count in {np.mean(top):.1%}"
        )


PARTS = {"items": _items, "skew": _skew, "power": _power}


def cli(parts: dict[str, Callable[[int], None]]) -> None:
    """``--part P --reps R``: run part P with R simulated sweeps (round nine's benchmark too)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=tuple(parts), required=True)
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    parts[args.part](args.reps)


def main() -> None:
    cli(PARTS)


if __name__ == "__main__":
    main()
