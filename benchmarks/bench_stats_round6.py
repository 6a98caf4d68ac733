"""Report statistics, round six (benchmarks/RESULTS.md §29): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``outliers``: binomial accuracies (m items, true accuracy p) at 3, 4, 5, 8 seeds: how often a run
  is named where none collapsed, on the raw scale (outliers.find) and as `report` tests a proportion
  (outliers.scan with bounds [0, 1]: Anscombe's scale); and how often a seed set to 0 is named;
- ``detectable``: two groups of binomial accuracies at 2-5 seeds, compared by `stats.compare`: how
  often the power analysis's smallest detectable difference came out at 1 or more before this round
  (a difference no accuracy can have);
- ``sequential``: null sweeps through ``sequential.simulate``, then the table `report` prints at the
  seeds each group ran: fixed-n (``stats.compare``) and now (``sequential_table.adjusted``): how
  often any null arm is called;
- ``pruned``: K trials alike (true mean 0) of n seeds, a pruner keeping the few whose early values
  (the final ones plus noise) were highest: how often the best survivor's Bonferroni interval covers
  0, taken over the survivors and over all K (winner.sentence's family).

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round6.py --part outliers --reps 3000
"""

from __future__ import annotations

import argparse

import numpy as np

from sweepgen.run.report.stats import outliers, sequential, sequential_table
from sweepgen.run.report.stats import verdicts as stats

PROPORTION = (0.0, 1.0)


def outliers_part(reps: int) -> None:
    rng = np.random.default_rng(0)
    for items, p in ((20, 0.97), (20, 0.9), (100, 0.99), (100, 0.9), (50, 0.5)):
        cells = []
        for n in (3, 4, 5, 8):
            raw = scaled = caught_raw = caught = 0
            for row in rng.binomial(items, p, size=(reps, n)) / items:
                runs = [(str(i), float(v)) for i, v in enumerate(row)]
                raw += outliers.find("g", runs) is not None
                scaled += outliers.scan({"g": runs}, PROPORTION) != []
                fell = [("0", 0.0), *runs[1:]]
                caught_raw += [o.run for o in outliers.scan({"g": fell})] == ["0"]
                caught += [o.run for o in outliers.scan({"g": fell}, PROPORTION)] == ["0"]
            cells.append(
                f"n={n}: none collapsed {raw / reps:.1%} -> {scaled / reps:.1%}, "
                f"one at 0 {caught_raw / reps:.1%} -> {caught / reps:.1%}"
            )
        print(f"{items} items, p={p}: " + "; ".join(cells))


def detectable_part(reps: int) -> None:
    rng = np.random.default_rng(0)
    for items, p in ((20, 0.9), (20, 0.7), (100, 0.5)):
        cells = []
        for n in (2, 3, 5):
            wide = 0
            for _ in range(reps):
                groups = [(g, list(rng.binomial(items, p, n) / items)) for g in ("base", "arm")]
                c = stats.compare(groups, baseline="base", mode="max").comparisons[0]
                wide += c.verdict == "no evidence" and c.detectable is not None and c.detectable >= 1
            cells.append(f"n={n}: {wide / reps:.1%}")
        print(f"{items} items, p={p}: detectable >= 1 (unbounded) in " + "; ".join(cells))


def _null_sweep(rng: np.random.Generator, arms: int, schedule: sequential.Schedule) -> tuple[bool, bool]:
    """One null sweep through the looks: whether its fixed-n table, and the table `report` prints
    now, call any arm."""
    names = ["base", *(f"a{i}" for i in range(arms))]
    values = {name: list(rng.normal(size=schedule.max_seeds)) for name in names}
    out = sequential.simulate(values, "base", schedule)
    fixed = stats.compare(
        [(name, v[: out.seeds[name]]) for name, v in values.items()],
        baseline="base",
        mode="max",
        seeds_needed=False,
    )
    table, _ = sequential_table.adjusted(fixed, out.verdicts)
    return _calls(fixed), _calls(table)


def _calls(statistics: stats.Statistics) -> bool:
    return any(c.verdict in ("better", "worse") for c in statistics.comparisons)


def sequential_part(reps: int) -> None:
    for arms, most, per, spending in ((1, 5, 1, "obf"), (1, 10, 1, "pocock"), (3, 10, 2, "pocock")):
        rng = np.random.default_rng(0)
        called = [
            _null_sweep(rng, arms, sequential.Schedule(per, most, spending=spending)) for _ in range(reps)
        ]
        fixed_n, now = (sum(c[i] for c in called) / reps for i in (0, 1))
        print(
            f"{arms} arm(s), up to {most} seeds, {per} a round, {spending}: the table calls a null arm "
            f"in {fixed_n:.2%} fixed-n, {now:.2%} now"
        )


def pruned_part(reps: int) -> None:
    from sweepgen.run.search import best_value

    for trials, kept, seeds, early_noise in ((30, 5, 3, 1.0), (50, 3, 5, 0.2), (50, 5, 5, 0.5)):
        rng = np.random.default_rng(0)
        covered = {kept: 0, trials: 0}
        for _ in range(reps):
            final = rng.normal(0, 1, (trials, seeds))
            early = final + rng.normal(0, early_noise, (trials, seeds))
            survivors = np.argsort(-early.mean(1))[:kept]
            best = list(final[survivors[np.argmax(final[survivors].mean(1))]])
            for family in covered:
                low, high = best_value.interval(best, family) or (np.nan, np.nan)
                covered[family] += low <= 0 <= high
        print(
            f"{trials} trials of {seeds} seeds, {kept} kept (early noise {early_noise} sd): the best "
            f"survivor's interval covers {covered[kept] / reps:.1%} over the survivors, "
            f"{covered[trials] / reps:.1%} over all"
        )


PARTS = {
    "outliers": outliers_part,
    "detectable": detectable_part,
    "sequential": sequential_part,
    "pruned": pruned_part,
}

if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--part", choices=sorted(PARTS), required=True)
    cli.add_argument("--reps", type=int, default=1000)
    given = cli.parse_args()
    PARTS[given.part](given.reps)
