"""Report statistics, round sixteen (benchmarks/RESULTS.md, round sixteen's section): the percentile
bootstrap (``--interval bootstrap``) against the t/Welch intervals at 2-5 seeds, with ties and discrete
metrics, and metrics bounded at 0 or 1, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``ties``: accuracies on a grid (a count out of 10 or 50 eval items, true accuracy 0.7, or a run's
  own level moved by the seed), n + n seeds of two arms 0.02 apart: what share of 95% difference
  intervals of each method covers the true difference, overall and where a group's runs all tie,
  and how often a group ties;
- ``small``: normal runs (and a skewed, lognormal metric), n + n seeds: each method's difference
  interval's coverage beside the coverage the report prints for it, and its mean interval's;
- ``bounded``: accuracies near 1 (true 0.97-0.995 over 50 items) and near 0: how often a group's runs
  all sit at the bound (no interval), how often a mean interval's unclipped end crosses it, and what
  the clipped intervals cover.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round16.py --part ties --reps 1000
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import verdicts as stats

SEEDS = (2, 3, 4, 5)
BOOT = stats.Methods(interval="bootstrap")
T = stats.Methods()
PROPORTION = stats.Methods(bounds=(0.0, 1.0))
PROPORTION_BOOT = stats.Methods(interval="bootstrap", bounds=(0.0, 1.0))


def _compare(a: list[float], b: list[float], methods: stats.Methods) -> stats.Statistics:
    return stats.compare(
        [("base", b), ("arm", a)], baseline="base", mode="max", methods=methods, seeds_needed=False
    )


def _covers(c: stats.Comparison, truth: float) -> bool | None:
    """Whether the comparison's interval covers ``truth`` (None: no interval)."""
    if c.low is None or c.high is None:
        return None
    return c.low <= truth <= c.high


class Tally:
    """Coverage counted over the intervals given, and how many were withheld."""

    def __init__(self) -> None:
        self.covered = self.given = self.none = 0

    def add(self, covered: bool | None) -> None:
        if covered is None:
            self.none += 1
            return
        self.given += 1
        self.covered += covered

    def __str__(self) -> str:
        share = f"{self.covered / self.given:.1%}" if self.given else "-"
        return f"{share} of {self.given} (none: {self.none})"


def _accuracy(rng: np.random.Generator, n: int, truth: float, items: int, seed_sd: float) -> list[float]:
    level = np.clip(truth + rng.normal(0, seed_sd, n), 0, 1) if seed_sd else np.full(n, truth)
    return list(rng.binomial(items, level) / items)


def _ties(reps: int) -> None:
    rng = np.random.default_rng(161)
    print("items | seed sd | seeds | groups tied | bootstrap: all | bootstrap: a group tied | t: all")
    for items in (10, 50):
        for seed_sd in (0.0, 0.03):
            for n in SEEDS:
                tied = 0
                boot_all, boot_tied, t_all = Tally(), Tally(), Tally()
                for _ in range(reps):
                    b = _accuracy(rng, n, 0.7, items, seed_sd)
                    a = _accuracy(rng, n, 0.72, items, seed_sd)
                    truth = _true_diff(0.72, 0.7, items, seed_sd)
                    one_tied = len(set(a)) == 1 or len(set(b)) == 1
                    tied += one_tied
                    boot = _covers(_compare(a, b, BOOT).comparisons[0], truth)
                    boot_all.add(boot)
                    if one_tied:
                        boot_tied.add(boot)
                    t_all.add(_covers(_compare(a, b, T).comparisons[0], truth))
                print(f"{items} | {seed_sd} | {n} | {tied / reps:.1%} | {boot_all} | {boot_tied} | {t_all}")


def _true_diff(a: float, b: float, items: int, seed_sd: float) -> float:
    """The true difference of the two arms' mean accuracy (clipping at [0, 1] moves it a little where
    the seed moves the level; by simulation then)."""
    if not seed_sd:
        return a - b
    rng = np.random.default_rng(7)
    return float(
        np.clip(a + rng.normal(0, seed_sd, 400_000), 0, 1).mean()
        - np.clip(b + rng.normal(0, seed_sd, 400_000), 0, 1).mean()
    )


def _small(reps: int) -> None:
    rng = np.random.default_rng(162)
    print("shape | seeds | method | difference interval covers | printed | mean interval covers")
    for shape in ("normal", "lognormal"):
        for n in SEEDS:
            tallies = {"bootstrap": (Tally(), Tally()), "t": (Tally(), Tally())}
            for _ in range(reps):
                if shape == "normal":
                    a, b, truth_a, truth_b = rng.normal(0.3, 1, n), rng.normal(0, 1, n), 0.3, 0.0
                else:
                    a, b = rng.lognormal(0, 1, n), rng.lognormal(0, 1, n)
                    truth_a = truth_b = float(np.exp(0.5))
                for name, methods in (("bootstrap", BOOT), ("t", T)):
                    s = _compare(list(a), list(b), methods)
                    tallies[name][0].add(_covers(s.comparisons[0], truth_a - truth_b))
                    g = s.groups[1]
                    tallies[name][1].add(None if g.low is None else g.low <= truth_a <= g.high)
            printed = stats.bootstrap.diff_coverage(n, n)
            for name, (diff, mean) in tallies.items():
                said = f"{printed:.0%}" if name == "bootstrap" and printed is not None else "95%"
                print(f"{shape} | {n} | {name} | {diff} | {said} | {mean}")


def _bounded(reps: int) -> None:
    rng = np.random.default_rng(163)
    print("true accuracy | seeds | method | groups at the bound | unclipped end past it | clipped covers")
    for truth in (0.005, 0.97, 0.99, 0.995):
        for n in SEEDS:
            for name, methods in (("t", PROPORTION), ("bootstrap", PROPORTION_BOOT)):
                at_bound = past = 0
                cover = Tally()
                for _ in range(reps):
                    values = _accuracy(rng, n, truth, 50, 0.0)
                    at_bound += len(set(values)) == 1 and values[0] in (0.0, 1.0)
                    raw = stats.group_stats("g", values, stats.Methods(interval=methods.interval))
                    past += raw.low is not None and (raw.low < 0 or raw.high > 1)
                    g = stats.group_stats("g", values, methods)
                    cover.add(None if g.low is None else g.low <= truth <= g.high)
                print(f"{truth} | {n} | {name} | {at_bound / reps:.1%} | {past / reps:.1%} | {cover}")


PARTS = {"ties": _ties, "small": _small, "bounded": _bounded}


if __name__ == "__main__":
    cli(PARTS)
