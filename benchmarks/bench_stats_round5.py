"""Report statistics, round five (benchmarks/RESULTS.md §28): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``proportions``: binomial accuracies (m items, true accuracy p) at 2, 3, 5 seeds: how often a
  group's 95% t interval runs past 1, and its coverage (groups with spread), before clipping;
- ``winner``: K groups alike (normal, true mean 0) of n seeds: how often the best group's own 95% t
  interval covers its true mean, and the sentence's Bonferroni interval (winner.sentence);
- ``importance``: a 3 x 3 grid (lr with an effect of ``effect`` sd across its levels, beta none) at n
  seeds a cell: how often beta's interval lies above 0, and with no sentence beside it;
- ``outliers``: binomial accuracies at 3, 4, 5, 8 seeds: how often outliers.find names a run, and
  how often the other runs all tie there;
- ``sequential``: null sweeps through ``sequential.simulate``, then the fixed-n table
  (``stats.compare``) at the seeds each group ran: how often either calls a null arm.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round5.py --part winner --reps 4000
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats as st

from sweepgen.run.report.stats import importance, outliers, sequential, winner
from sweepgen.run.report.stats import verdicts as stats


def proportions(reps: int) -> None:
    rng = np.random.default_rng(0)
    for items in (20, 100):
        for p in (0.9, 0.97, 0.99):
            cells = []
            for n in (2, 3, 5):
                x = rng.binomial(items, p, size=(reps, n)) / items
                mean, sd = x.mean(1), x.std(1, ddof=1)
                half = st.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
                spread = sd > 0
                covers = ((mean - half <= p) & (p <= mean + half))[spread].mean()
                past = ((mean + half) > 1)[spread].mean()
                cells.append(f"n={n}: past 1 {past:.0%}, covers {covers:.1%} (spread in {spread.mean():.0%})")
            print(f"{items} items, p={p}: " + "; ".join(cells))


def winner_part(reps: int) -> None:
    rng = np.random.default_rng(0)
    for k, n in ((5, 3), (20, 3), (20, 5), (100, 5)):
        own = held = 0
        for _ in range(reps):
            groups = [(f"g{i}", list(rng.normal(size=n))) for i in range(k)]
            statistics = stats.compare(groups, baseline=None, mode="max")
            best = max(statistics.groups, key=lambda g: g.mean)
            (said,) = winner.sentence(statistics, dict(groups))
            low, high = (float(x) for x in said.split("[")[1].split("]")[0].split(", "))
            own += (best.low or 0) <= 0 <= (best.high or 0)
            held += low <= 0 <= high
        print(
            f"{k} groups of {n} seeds: best group's own interval covers {own / reps:.1%}, "
            f"the sentence's {held / reps:.1%}"
        )


def _grid(rng: np.random.Generator, n: int, effect: float) -> importance.Importance | None:
    values, scores = [], []
    for lr, shift in ((1e-5, 0.0), (1e-4, 0.5), (1e-3, 1.0)):
        for beta in (0.0, 0.1, 0.2):
            for _ in range(n):
                values.append({"lr": lr, "beta": beta})
                scores.append(effect * shift + rng.normal())
    return importance.compute(values, scores, importance.params_of(values, ["lr", "beta"]))


def importance_part(reps: int) -> None:
    for n, effect in ((2, 0.0), (3, 0.0), (3, 1.0), (3, 2.0), (5, 1.0), (5, 2.0)):
        rng = np.random.default_rng(n * 10 + int(effect))
        above = silent = real = 0
        for _ in range(reps):
            result = _grid(rng, n, effect)
            assert result is not None
            rows = {r.path: r for r in result.rows}
            above += rows["beta"].low > 0
            silent += rows["beta"].low > 0 and result.note is None
            real += rows["lr"].low > 0
        print(
            f"{9 * n} runs ({n} seeds a cell), lr effect {effect} sd: beta's interval above 0 in "
            f"{above}/{reps} ({silent} with no sentence); lr's above 0 in {real}/{reps}"
        )


def outliers_part(reps: int) -> None:
    rng = np.random.default_rng(0)
    for items, p in ((20, 0.97), (20, 0.9), (100, 0.99), (50, 0.5)):
        cells = []
        for n in (3, 4, 5, 8):
            named = tied = 0
            for row in rng.binomial(items, p, size=(reps, n)) / items:
                runs = [(str(i), float(v)) for i, v in enumerate(row)]
                found = outliers.find("g", runs)
                named += found is not None
                tied += found is not None and len({v for k, v in runs if k != found.run}) == 1
            cells.append(f"n={n}: named {named / reps:.1%} (others tied {tied / reps:.1%})")
        print(f"{items} items, p={p}: " + "; ".join(cells))


def sequential_part(reps: int) -> None:
    for arms, most, per, spending in ((1, 5, 1, "obf"), (1, 10, 1, "pocock"), (3, 10, 2, "pocock")):
        schedule = sequential.Schedule(per, most, spending=spending)
        rng = np.random.default_rng(0)
        looks = table = 0
        for _ in range(reps):
            values = {name: list(rng.normal(size=most)) for name in ["base", *(f"a{i}" for i in range(arms))]}
            out = sequential.simulate(values, "base", schedule)
            looks += any(v != sequential.OPEN for v in out.verdicts.values())
            ran = [(name, v[: out.seeds[name]]) for name, v in values.items()]
            fixed = stats.compare(ran, baseline="base", mode="max", seeds_needed=False)
            table += any(c.verdict in ("better", "worse") for c in fixed.comparisons)
        print(
            f"{arms} arm(s), up to {most} seeds, {per} a round, {spending}: the looks call a null arm in "
            f"{looks / reps:.2%}, the fixed-n table at the seeds run in {table / reps:.2%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("proportions", "winner", "importance", "outliers", "sequential"), required=True
    )
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    parts = {
        "proportions": proportions,
        "winner": winner_part,
        "importance": importance_part,
        "outliers": outliers_part,
        "sequential": sequential_part,
    }
    parts[args.part](args.reps)


if __name__ == "__main__":
    main()
