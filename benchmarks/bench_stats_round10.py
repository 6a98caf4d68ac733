"""Report statistics, round ten (benchmarks/RESULTS.md, round ten's section): what `report` prints,
checked against simulated sweeps with the truth known, through the report's own functions (fixed
seeds).

Parts (``--part``):
- ``best``: the best mean's sentence (stats.winner), no baseline: how often it calls a group "better
  than every other group" where that is wrong (two groups alike at the top and the rest far below,
  the worst case; every group alike; a min-is-better metric; unequal seeds; one group of one run),
  and how often it says so where one group is truly best (its power);
- ``stopped``: `run --until-decided` (a seed a round, up to 8): the mean interval of each group the
  looks ran, at ``sequential.union_mean_level`` (the looks' level then), and the fixed-n 95% one it replaced:
  their coverage of the arm's and the baseline's true means;
- ``paired``: every arm runs the same seed list and a seed moves every arm's run alike (a shared seed
  effect, correlation 0.8) or oppositely (-0.8): the report's (unpaired) test's false verdicts, and
  the group means' 95% intervals' coverage;
- ``one_seed``: an arm of one run beside baselines of 2-5: its verdict ("cannot decide" always);
- ``ties``: accuracy over 10 items at 0.9 (values tie often, whole groups at 1.0): three groups
  alike: false "best" calls and false verdicts against a baseline;
- ``min``: a min-is-better metric, arms alike, unequal seeds and spreads: false verdicts;
- ``at_best``: `--at best`, the max over a run's 20 evaluations: arms of the same true curve, the
  same or another eval noise: false verdicts (the report warns that the value is biased);
- ``importance``: a 3 x 3 grid at 3 seeds, one parameter moving the metric and one doing nothing:
  how often importance.matters calls each (normal and lognormal noise, runs lost, a seed effect);
- ``family``: two metrics reported one after the other (two `report --metric` runs), their run noise
  correlated 0.5, every arm null: how often either report calls an arm.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round10.py --part best --reps 2000
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import sequential, winner
from sweepgen.run.report.stats import verdicts as stats

CALLED = ("better", "worse")


def _called_best(groups: list[tuple[str, list[float]]], mode: str = "max") -> str | None:
    """The group the best mean's sentence calls better than every other, or None."""
    statistics = stats.compare(groups, baseline=None, mode=mode, seeds_needed=False)
    said = winner.sentence(statistics, dict(groups))
    if not said or "it is better than every other group" not in said[0]:
        return None
    return said[0].split(" has the best mean")[0].split(" (tied with")[0]


def _best(reps: int) -> None:
    rng = np.random.default_rng(21)
    print("case | seeds | mode | wrong 'best' | right 'best'")
    cases = [
        # (name, means (the first the truly best, or none where a tie leads), seeds per group, mode)
        ("two alike at the top", (0.0, 0.0, -30.0), (3, 3, 3), "max", None),
        ("two alike at the top", (0.0, 0.0, -30.0), (5, 5, 5), "max", None),
        ("two alike at the top, unequal", (0.0, 0.0, -30.0), (2, 5, 5), "max", None),
        ("two alike at the bottom (min)", (0.0, 0.0, 30.0), (3, 3, 3), "min", None),
        ("five alike", (0.0,) * 5, (3,) * 5, "max", None),
        ("one 2 sd better", (2.0, 0.0, 0.0, 0.0), (3,) * 4, "max", "g0"),
        ("one 2 sd better", (2.0, 0.0, 0.0, 0.0), (5,) * 4, "max", "g0"),
        ("one 3 sd better beside a 1-run group", (3.0, 0.0, 0.0), (5, 5, 1), "max", "g0"),
    ]
    for name, means, sizes, mode, truly in cases:
        wrong = right = 0
        for _ in range(reps):
            groups = [(f"g{i}", list(rng.normal(mu, 1.0, n))) for i, (mu, n) in enumerate(zip(means, sizes))]
            called = _called_best(groups, mode)
            if called is None:
                continue
            right += called == truly
            wrong += called != truly
        print(f"{name} | {sizes} | {mode} | {wrong / reps:.2%} | {right / reps:.2%}")


def _stopped(reps: int) -> None:
    rng = np.random.default_rng(12)  # round nine's seed: the same sweeps
    print("spending effect | arm: looks' level / fixed-n 95% | baseline: looks' / fixed-n | stopped early")
    for spending, effect in (("pocock", 0.0), ("pocock", 1.0), ("pocock", 2.0), ("obf", 1.0)):
        schedule = sequential.Schedule(per_round=1, max_seeds=8, spending=spending)
        covered = np.zeros(4)
        early = 0
        for _ in range(reps):
            z = rng.normal(size=(2, 8))
            out = sequential.simulate({"base": list(z[0]), "arm": list(z[1] + effect)}, "base", schedule)
            na, nb = out.seeds["arm"], out.seeds["base"]
            early += na < 8
            arm, base = list(z[1][:na] + effect), list(z[0][:nb])
            for k, (values, truth, level) in enumerate(
                (
                    (arm, effect, sequential.union_mean_level(schedule, na)),
                    (arm, effect, stats.LEVEL),
                    (base, 0.0, sequential.union_mean_level(schedule, nb)),
                    (base, 0.0, stats.LEVEL),
                )
            ):
                low, high = stats.t_mean(values, level)
                covered[k] += low is not None and high is not None and low <= truth <= high
        c = covered / reps
        print(f"{spending} {effect} | {c[0]:.2%} / {c[1]:.2%} | {c[2]:.2%} / {c[3]:.2%} | {early / reps:.2%}")


def _paired(reps: int) -> None:
    rng = np.random.default_rng(31)
    print("seed correlation | seeds | false verdicts (3 arms, Holm) | mean intervals cover")
    for rho in (0.8, -0.8):
        for n in (3, 5):
            called = covered = shown = 0
            for _ in range(reps):
                seed = rng.normal(size=n)
                sign = np.array([1.0, 1.0, np.sign(rho), 1.0])  # the third arm moved oppositely for rho < 0
                own = rng.normal(size=(4, n))
                values = np.sqrt(abs(rho)) * sign[:, None] * seed + np.sqrt(1 - abs(rho)) * own
                groups = [(f"g{i}", list(values[i])) for i in range(4)]
                s = stats.compare(groups, baseline="g0", mode="max", seeds_needed=False)
                called += any(c.verdict in CALLED for c in s.comparisons)
                for g in s.groups:
                    if g.low is not None and g.high is not None:
                        shown += 1
                        covered += g.low <= 0 <= g.high
            print(f"{rho} | {n} | {called / reps:.2%} | {covered / max(shown, 1):.2%}")


def _one_seed(reps: int) -> None:
    rng = np.random.default_rng(41)
    print("baseline seeds | arm effect | verdicts of the one-run arm")
    for nb in (2, 3, 5):
        for effect in (0.0, 5.0):
            seen: dict[str, int] = {}
            for _ in range(reps):
                groups = [("b", list(rng.normal(0, 1, nb))), ("a", [float(rng.normal(effect, 1))])]
                (c,) = stats.compare(groups, baseline="b", mode="max", seeds_needed=False).comparisons
                seen[c.verdict] = seen.get(c.verdict, 0) + 1
            print(f"{nb} | {effect} | " + ", ".join(f"{v} {k / reps:.1%}" for v, k in sorted(seen.items())))


def _ties(reps: int) -> None:
    rng = np.random.default_rng(51)
    methods = stats.Methods(bounds=(0.0, 1.0))
    print("accuracy | items | seeds | false 'best' | false verdicts (2 arms vs a baseline)")
    for p, m in ((0.9, 10), (0.97, 10), (0.5, 10)):
        for n in (3, 5):
            best = called = 0
            for _ in range(reps):
                groups = [(f"g{i}", list(rng.binomial(m, p, n) / m)) for i in range(3)]
                best += _called_best(groups) is not None
                s = stats.compare(groups, baseline="g0", mode="max", methods=methods, seeds_needed=False)
                called += any(c.verdict in CALLED for c in s.comparisons)
            print(f"{p} | {m} | {n} | {best / reps:.2%} | {called / reps:.2%}")


def _min(reps: int) -> None:
    rng = np.random.default_rng(61)
    print("seeds (baseline first) | sds | false verdicts, min is better")
    for sizes, sds in (
        ((3, 3, 3), (1.0, 1.0, 1.0)),
        ((2, 5, 3), (1.0, 3.0, 0.3)),
        ((5, 2, 2), (0.3, 1.0, 3.0)),
    ):
        called = 0
        for _ in range(reps):
            groups = [(f"g{i}", list(rng.lognormal(0, 0.1, n) * sds[i] + 5)) for i, n in enumerate(sizes)]
            # every group's true mean set alike: the lognormal's mean times its sd, removed
            groups = [(g, [v - sds[i] * np.exp(0.005) for v in vals]) for i, (g, vals) in enumerate(groups)]
            s = stats.compare(groups, baseline="g0", mode="min", seeds_needed=False)
            called += any(c.verdict in CALLED for c in s.comparisons)
        print(f"{sizes} | {sds} | {called / reps:.2%}")


def _at_best(reps: int) -> None:
    rng = np.random.default_rng(71)
    evals, n = 20, 3
    print("eval noise (arm / baseline) | seeds | called different at --at best | at final")
    for noise in ((0.3, 0.3), (0.6, 0.3)):
        best = final = 0
        for _ in range(reps):
            curve = np.linspace(0, 1, evals)  # the same true curve in both arms, and a seed effect
            runs = [
                curve + rng.normal(0, 0.2, (n, 1)) + rng.normal(0, sd, (n, evals)) for sd in noise
            ]  # arm, baseline
            for at, take in (("best", lambda r: r.max(1)), ("final", lambda r: r[:, -1])):
                groups = [("b", list(take(runs[1]))), ("a", list(take(runs[0])))]
                (c,) = stats.compare(groups, baseline="b", mode="max", seeds_needed=False).comparisons
                hit = c.verdict in CALLED
                best += hit and at == "best"
                final += hit and at == "final"
        print(f"{noise[0]} / {noise[1]} | {n} | {best / reps:.2%} | {final / reps:.2%}")


def _family(reps: int) -> None:
    rng = np.random.default_rng(81)
    print("seeds | arms | either metric's report calls an arm (each report alone)")
    for n, arms in ((3, 1), (5, 3)):
        either = each = 0
        for _ in range(reps):
            z = rng.normal(size=(arms + 1, n, 2))
            metrics = (z[..., 0], 0.5 * z[..., 0] + np.sqrt(0.75) * z[..., 1])
            hits = []
            for values in metrics:
                groups = [(f"g{i}", list(values[i])) for i in range(arms + 1)]
                s = stats.compare(groups, baseline="g0", mode="max", seeds_needed=False)
                hits.append(any(c.verdict in CALLED for c in s.comparisons))
            either += any(hits)
            each += hits[0]
        print(f"{n} | {arms} | {either / reps:.2%} ({each / reps:.2%})")


def _importance(reps: int) -> None:
    from sweepgen.run.report.stats import importance

    rng = np.random.default_rng(91)
    grid = np.array([(a, b) for a in (1, 2, 3) for b in (1, 2, 3) for _ in range(3)], dtype=float)
    print("case | lr called 'matters' | beta (does nothing) called")
    cases = (
        ("normal, lr 1 sd a level", lambda: 1.0 * grid[:, 0] + rng.normal(size=len(grid)), None),
        (
            "lognormal(1.5) noise, lr 1 a level",
            lambda: 1.0 * grid[:, 0] + rng.lognormal(0, 1.5, len(grid)),
            None,
        ),
        ("normal, a third of the runs lost", lambda: 1.0 * grid[:, 0] + rng.normal(size=len(grid)), 0.33),
        ("a seed effect shared by every config", lambda: grid[:, 0] + np.tile(rng.normal(0, 2, 3), 9), None),
    )
    for name, draw, lost in cases:
        called = np.zeros(2)
        for _ in range(reps):
            y = draw()
            keep = rng.uniform(size=len(grid)) > lost if lost else np.ones(len(grid), dtype=bool)
            p = importance.matters(np, grid[keep], y[keep])
            called += [q is not None and q < importance.ALPHA for q in p]
        print(f"{name} | {called[0] / reps:.2%} | {called[1] / reps:.2%}")


PARTS = {
    "importance": _importance,
    "best": _best,
    "stopped": _stopped,
    "paired": _paired,
    "one_seed": _one_seed,
    "ties": _ties,
    "min": _min,
    "at_best": _at_best,
    "family": _family,
}


if __name__ == "__main__":
    cli(PARTS)
