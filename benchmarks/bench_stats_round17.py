"""Report statistics, round seventeen (benchmarks/RESULTS.md, round seventeen's section): what the
intervals `report`, `run --until-decided` and `search` print cover at 2-5 seeds, through their own
functions (fixed seeds).

Parts (``--part``):
- ``boot``: the percentile bootstrap (``--interval bootstrap``) on normal, lognormal and discrete
  (a count out of 20 eval items) runs, n + n seeds: what share of its mean and difference intervals
  cover the truth, and how many are withheld; ``--before`` runs it with round sixteen's
  ``bootstrap.MIN_RUNS`` (3), the t intervals beside;
- ``skew``: the t interval of a group mean on a lognormal metric, and how often the report's skew
  sentence (stats/skew.py) is said, over 2, 5 and 10 groups of 3-5 seeds (normal runs beside);
- ``search``: a search's best trial (best of K trials of 2-5 repeats, true means 0.1 apart over the
  K against seed noise 0.1-ish), its interval (search/best_value.py) on normal, lognormal and
  discrete values: the share that covers the picked trial's true mean, and how often there is none;
- ``lastk``: `run --until-decided --at last:K` on null arms: each run's value is the mean of its last
  K logged evals (a seed effect plus per-eval noise, accuracies out of 20 items), looked at by the
  schedule of 2 seeds a round up to 2-5 seeds: how often any arm is called (at most alpha), and the
  repeated intervals' coverage of the true difference 0.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round17.py --part boot --reps 400
"""

from __future__ import annotations

import sys

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import bootstrap, skew
from sweepgen.run.report.stats import sequential as sq
from sweepgen.run.report.stats import verdicts as stats
from sweepgen.run.search import best_value

SEEDS = (2, 3, 4, 5)
BOOT = stats.Methods(interval="bootstrap")
T = stats.Methods()


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


def _draw(rng: np.random.Generator, shape: str, n: int, shift: float = 0.0) -> list[float]:
    if shape == "normal":
        return list(rng.normal(shift, 1, n))
    if shape == "lognormal":
        return list(rng.lognormal(0, 1, n) + shift)
    return list(rng.binomial(20, 0.7 + shift / 10, n) / 20)  # discrete: a count out of 20 items


def _truth(shape: str, shift: float = 0.0) -> float:
    return {"normal": shift, "lognormal": float(np.exp(0.5)) + shift, "discrete": 0.7 + shift / 10}[shape]


def _within(low: float | None, high: float | None, truth: float) -> bool | None:
    return None if low is None or high is None else low <= truth <= high


def _boot(reps: int) -> None:
    if BEFORE:
        bootstrap.MIN_RUNS = 3  # round sixteen's
    rng = np.random.default_rng(171)
    print("shape | seeds | method | difference interval covers | mean interval covers")
    for shape in ("normal", "lognormal", "discrete"):
        for n in SEEDS:
            tallies = {"bootstrap": (Tally(), Tally()), "t": (Tally(), Tally())}
            for _ in range(reps):
                a, b = _draw(rng, shape, n, 0.3), _draw(rng, shape, n)
                diff = _truth(shape, 0.3) - _truth(shape)
                for name, methods in (("bootstrap", BOOT), ("t", T)):
                    s = stats.compare(
                        [("base", b), ("arm", a)],
                        baseline="base",
                        mode="max",
                        methods=methods,
                        seeds_needed=False,
                    )
                    c, g = s.comparisons[0], s.groups[1]
                    tallies[name][0].add(_within(c.low, c.high, diff))
                    tallies[name][1].add(_within(g.low, g.high, _truth(shape, 0.3)))
            for name, (d, m) in tallies.items():
                print(f"{shape} | {n} | {name} | {d} | {m}")


def _skew(reps: int) -> None:
    rng = np.random.default_rng(172)
    print("shape | groups | seeds | t mean interval covers | skew sentence said | covers where said")
    for shape in ("normal", "lognormal"):
        for groups in (2, 5, 10):
            for n in (3, 4, 5):
                cover, where_said = Tally(), Tally()
                said = 0
                for _ in range(reps):
                    values = {f"g{i}": _draw(rng, shape, n) for i in range(groups)}
                    flagged = bool(skew.sentence(values))
                    said += flagged
                    for runs in values.values():
                        low, high = stats.t_mean(runs)
                        cover.add(_within(low, high, _truth(shape)))
                        if flagged:
                            where_said.add(_within(low, high, _truth(shape)))
                print(f"{shape} | {groups} | {n} | {cover} | {said / reps:.1%} | {where_said}")


def _search(reps: int) -> None:
    rng = np.random.default_rng(173)
    print("shape | trials | seeds | picked trial's interval covers | its own 95% t covers")
    for shape in ("normal", "lognormal", "discrete"):
        for trials in (5, 20):
            for n in SEEDS:
                ours, plain = Tally(), Tally()
                for _ in range(reps):
                    shifts = [0.3 * i / trials for i in range(trials)]
                    runs = [_draw(rng, shape, n, s) for s in shifts]
                    best = max(range(trials), key=lambda i: float(np.mean(runs[i])))
                    truth = _truth(shape, shifts[best])
                    held = best_value.interval(runs[best], trials)
                    ours.add(None if held is None else held[0] <= truth <= held[1])
                    plain.add(_within(*stats.t_mean(runs[best]), truth))
                print(f"{shape} | {trials} | {n} | {ours} | {plain}")


def _last_k_values(rng: np.random.Generator, n: int, k: int) -> list[float]:
    """n runs' --at last:K values: each run's level (0.7 moved by its seed, sd 0.05) scored K times on
    20 items, the mean of the K."""
    levels = np.clip(0.7 + rng.normal(0, 0.05, n), 0, 1)
    return list(rng.binomial(20, levels[:, None], (n, k)).mean(axis=1) / 20)


def _lastk(reps: int) -> None:
    rng = np.random.default_rng(174)
    print("K | max seeds | arms | any arm called (null) | an arm's repeated intervals all cover 0")
    for k in (1, 5):
        for top in (4, 6):
            for arms in (1, 3):
                called = 0
                cover = Tally()
                schedule = sq.Schedule(2, top)
                for _ in range(reps):
                    values = {
                        g: _last_k_values(rng, top, k) for g in ["base", *[f"a{i}" for i in range(arms)]]
                    }
                    out = sq.simulate(values, "base", schedule)
                    called += any(v != sq.OPEN for v in out.verdicts.values())
                    for arm in out.verdicts:  # every look's interval of the arm holds 0 at once
                        each = [
                            _within(c.low, c.high, 0.0) for *_, cs in out.looks for c in cs if c.name == arm
                        ]
                        given = [x for x in each if x is not None]
                        cover.add(all(given) if given else None)
                print(f"{k} | {top} | {arms} | {called / reps:.1%} | {cover}")


PARTS = {"boot": _boot, "skew": _skew, "search": _search, "lastk": _lastk}


BEFORE = "--before" in sys.argv  # boot: round sixteen's MIN_RUNS


if __name__ == "__main__":
    if BEFORE:
        sys.argv.remove("--before")
    cli(PARTS)
