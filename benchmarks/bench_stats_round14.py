"""Report statistics, round fourteen (benchmarks/RESULTS.md, round fourteen's section): the fixed-n
comparisons `report` and `search` print at 2-5 seeds, checked against simulated sweeps with the truth
known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``arms``: one to five arms against one baseline (every arm alike the baseline, or each 1 sd away),
  equal and unequal seed counts (2 vs 5 either way) and spreads (the arm 3x noisier, or 1/3):
  how often any arm is called (the family-wise error, Holm's claim), and what each difference
  interval covers (``stats.compare``);
- ``metrics``: two or three metrics reported over the same null runs (their run noise correlated
  0.5): how often any report calls any arm, each at alpha (a report is one family) and at alpha / M
  (docs/RUN.md's advice, which the report now prints);
- ``importance``: the importance table's test of whether a parameter matters
  (``importance.matters``) on a 3 x 3 grid at 2 seeds a cell: a parameter that does nothing beside
  one that does, with unequal spreads, with a cell lost, and beside an interaction;
- ``best``: the best of K groups alike (2, 3, 5 seeds): its Bonferroni interval's coverage of its
  own true mean (winner.py / best_value.py) against its plain 95% interval's, and how often it is
  called "better than every other group" (the worst case: two alike at the top, the rest far below);
- ``best_unequal``: the best group's test where the two alike on top differ in seeds (2 vs 5) and
  spread;
- ``paired``: arms on the same seed list, the seed's effect shared: the unpaired test's level and
  power against a paired t-test's (scipy.stats.ttest_rel), the power the report leaves.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round14.py --part arms --reps 2000
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import importance, winner
from sweepgen.run.report.stats import verdicts as stats
from sweepgen.run.search import best_value

# (arms, baseline seeds, arm seeds, arm's sd): the baseline's sd is 1
ARM_CASES = (
    (1, 2, 2, 1.0),
    (1, 3, 3, 1.0),
    (1, 5, 5, 1.0),
    (1, 5, 2, 1.0),
    (1, 5, 2, 3.0),
    (1, 5, 2, 1 / 3),
    (1, 2, 5, 3.0),
    (1, 2, 5, 1 / 3),
    (3, 2, 2, 1.0),
    (3, 3, 3, 1.0),
    (3, 5, 5, 1.0),
    (3, 5, 2, 3.0),
    (3, 2, 5, 1 / 3),
    (5, 3, 3, 1.0),
    (5, 5, 5, 1.0),
    (5, 5, 2, 3.0),
)


def _arms(reps: int) -> None:
    rng = np.random.default_rng(14)
    print(
        "arms | seeds (baseline, arm) | arm's sd | any arm called (null) | each interval covers (null) "
        "| each interval covers (1 sd away) | called (1 sd away, per arm)"
    )
    for k, nb, na, sd in ARM_CASES:
        out = []
        for effect in (0.0, 1.0):
            anyc = cov = have = called = 0
            for _ in range(reps):
                groups = [("base", list(rng.normal(0, 1, nb)))]
                groups += [(f"a{i}", list(rng.normal(effect, sd, na))) for i in range(k)]
                s = stats.compare(groups, baseline="base", mode="max", seeds_needed=False)
                calls = [c.verdict in ("better", "worse") for c in s.comparisons]
                anyc += any(calls)
                called += sum(calls)
                for c in s.comparisons:
                    if c.low is not None and c.high is not None:
                        have += 1
                        cov += c.low <= effect <= c.high
            out.append((anyc / reps, cov / max(have, 1), called / (reps * k)))
        rates = " | ".join(f"{v:.2%}" for v in (out[0][0], out[0][1], out[1][1], out[1][2]))
        print(f"{k} | ({nb}, {na}) | {sd:.3g} | {rates}")


def _metrics(reps: int) -> None:
    rng = np.random.default_rng(41)
    print("metrics | seeds | arms | any report calls an arm: each at 0.05 | each at 0.05 / metrics")
    for m in (2, 3):
        cov = np.full((m, m), 0.5) + 0.5 * np.eye(m)
        for n, k in ((2, 1), (3, 1), (3, 3), (5, 3)):
            plain = split = 0
            for _ in range(reps):
                draws = rng.multivariate_normal(np.zeros(m), cov, size=(k + 1, n))  # group, seed, metric
                hit_plain = hit_split = False
                for j in range(m):
                    groups = [(f"g{g}", list(draws[g, :, j])) for g in range(k + 1)]
                    for alpha, which in ((stats.ALPHA, 0), (stats.ALPHA / m, 1)):
                        s = stats.compare(
                            groups,
                            baseline="g0",
                            mode="max",
                            methods=stats.Methods(alpha=alpha),
                            seeds_needed=False,
                            verdicts_only=True,
                        )
                        hit = any(c.verdict in ("better", "worse") for c in s.comparisons)
                        if which == 0:
                            hit_plain |= hit
                        else:
                            hit_split |= hit
                plain += hit_plain
                split += hit_split
            print(f"{m} | {n} | {k} | {plain / reps:.2%} | {split / reps:.2%}")


def _grid(rng: np.random.Generator, case: str) -> tuple[np.ndarray, np.ndarray]:
    lr, beta = np.meshgrid(np.arange(3.0), np.arange(3.0), indexing="ij")
    x = np.repeat(np.stack([lr.ravel(), beta.ravel()], axis=1), 2, axis=0)  # 2 seeds a cell
    sd = np.ones(len(x))
    mean = x[:, 0].copy()  # lr moves the metric 1 sd a level; beta does nothing
    if case == "unequal spreads":
        sd = 0.3 + x[:, 0]  # the spread grows with lr
    elif case == "interaction, no main effect":
        mean = x[:, 0] + (x[:, 0] - 1) * (x[:, 1] - 1)  # beta's effect flips with lr: it matters
    y = mean + sd * rng.normal(size=len(x))
    if case == "a cell lost":
        keep = np.ones(len(x), bool)
        keep[[0, 1, 10]] = False
        x, y = x[keep], y[keep]
    return x, y


def _importance(reps: int) -> None:
    rng = np.random.default_rng(3)
    print("case | beta called (Holm p < 0.05) | lr called")
    for case in ("plain", "unequal spreads", "a cell lost", "interaction, no main effect"):
        hits = np.zeros(2)
        for r in range(reps):
            x, y = _grid(rng, case)
            ps = importance.matters(np, x, y, seed=r)
            hits += [p is not None and p < importance.ALPHA for p in ps]
        print(f"{case} | {hits[1] / reps:.2%} | {hits[0] / reps:.2%}")


def _best(reps: int) -> None:
    rng = np.random.default_rng(5)
    print(
        "groups | seeds | best's 95% t interval covers its mean | Bonferroni's (winner.py) covers | "
        "wrong 'better than every other' (two alike on top, 3 sd above the rest)"
    )
    for k in (3, 5, 10):
        for n in (2, 3, 5):
            plain = bonf = have = wrong = 0
            for _ in range(reps):
                v = rng.normal(size=(k, n))
                best = int(np.argmax(v.mean(axis=1)))
                lo, hi = stats.t_mean(list(v[best]))
                held = best_value.interval(list(v[best]), k)
                if lo is not None and hi is not None and held is not None:
                    have += 1
                    plain += lo <= 0 <= hi
                    bonf += held[0] <= 0 <= held[1]
                top = v + np.array([0.0, 0.0, *([-3.0] * (k - 2))])[:, None]
                values = {f"g{i}": list(top[i]) for i in range(k)}
                s = stats.compare(list(values.items()), baseline=None, mode="max")
                words = " ".join(winner.sentence(s, values, k))
                wrong += "better than every other group" in words
            print(f"{k} | {n} | {plain / max(have, 1):.2%} | {bonf / max(have, 1):.2%} | {wrong / reps:.2%}")


def _best_unequal(reps: int) -> None:
    """The best group's test at unequal seeds and spreads: two groups alike on top (one of 2 seeds,
    one of 5, their sds 1 and 3 either way), a third 3 sd below: how often a "better than every
    other group" is said (wrong: the top two are alike)."""
    rng = np.random.default_rng(23)
    print("top two (seeds, sd) | wrong 'better than every other'")
    for (n1, s1), (n2, s2) in (
        ((2, 3.0), (5, 1.0)),
        ((2, 1.0), (5, 3.0)),
        ((2, 1.0), (5, 1.0)),
        ((3, 3.0), (5, 1.0)),
    ):
        wrong = 0
        for _ in range(reps):
            values = {
                "a": list(rng.normal(0, s1, n1)),
                "b": list(rng.normal(0, s2, n2)),
                "c": list(rng.normal(-3, 1, 5)),
            }
            s = stats.compare(list(values.items()), baseline=None, mode="max")
            wrong += "better than every other group" in " ".join(winner.sentence(s, values, 3))
        print(f"({n1}, {s1:g}) and ({n2}, {s2:g}) | {wrong / reps:.2%}")


def _paired(reps: int) -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(17)
    print("seeds | true difference | unpaired (report) called | paired t called | unpaired interval covers")
    for n in (2, 3, 5):
        for effect in (0.0, 0.5, 1.0):
            unp = par = cov = 0
            for _ in range(reps):
                seed_effect = rng.normal(0, 1, n)
                base = seed_effect + rng.normal(0, 0.3, n)
                arm = seed_effect + effect + rng.normal(0, 0.3, n)
                c = stats.compare(
                    [("b", list(base)), ("a", list(arm))], baseline="b", mode="max", seeds_needed=False
                ).comparisons[0]
                unp += c.verdict in ("better", "worse")
                cov += c.low is not None and c.high is not None and c.low <= effect <= c.high
                par += float(sps.ttest_rel(arm, base).pvalue) < stats.ALPHA
            print(f"{n} | {effect} | {unp / reps:.2%} | {par / reps:.2%} | {cov / reps:.2%}")


PARTS = {
    "arms": _arms,
    "metrics": _metrics,
    "importance": _importance,
    "best": _best,
    "best_unequal": _best_unequal,
    "paired": _paired,
}

if __name__ == "__main__":
    cli(PARTS)
