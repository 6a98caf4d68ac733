"""Report statistics, round seven (benchmarks/RESULTS.md §31): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``sequential``: sweeps through ``sequential.simulate`` (normal runs, every arm ``shift`` sd from
  the baseline), then the table `report` prints at the seeds each group ran: the fixed-n
  (``stats.compare``) difference intervals, and the looks' repeated-confidence intervals
  (``sequential_table.adjusted`` with ``sequential_record.held_at_last_look``): how often each misses
  the true difference, and how often it disagrees with the sequential verdict beside it (an interval
  excluding 0 beside "no evidence", or holding 0 beside "better");
- ``float32``: binomial accuracies (m items, true accuracy p) logged through float32, at 5 and 8
  seeds: how often a run is named where none collapsed, by round six's outliers.scan (given as a file,
  ``--old``) and this one's;
- ``importance``: a 3 x 3 grid (lr with an effect of ``effect`` sd across its levels, beta none) at 6
  and 10 seeds a cell, ``importance.compute`` as the page calls it: how often beta's interval over
  refits lies above 0, and how often with no sentence beside it.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round7.py --part sequential --reps 1000
    git show <round six>:sweepgen/run/report/stats/outliers.py > /tmp/old_outliers.py
    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round7.py --part float32 --reps 3000 \
        --old /tmp/old_outliers.py
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from dataclasses import replace
from types import ModuleType

import numpy as np
from bench_stats_round5 import _grid  # the same 3 x 3 grid as round five

from sweepgen.run.report.stats import outliers, sequential, sequential_table
from sweepgen.run.report.stats import verdicts as stats
from sweepgen.run.report.stats.sequential_record import Look, held_at_last_look


def _misses(c: stats.Comparison, truth: float) -> bool:
    return c.low is not None and c.high is not None and not c.low <= truth <= c.high


def _disagrees(c: stats.Comparison) -> bool:
    holds_zero = c.low is None or c.high is None or c.low <= 0 <= c.high
    return (c.verdict in ("better", "worse")) == holds_zero


def _sequential_row(
    reps: int, shift: float, arms: int, max_seeds: int, per_round: int, spending: str
) -> None:
    rng = np.random.default_rng(int(shift * 10) + arms * 100 + max_seeds)
    schedule = sequential.Schedule(per_round, max_seeds, spending=spending)
    counts = np.zeros(4)
    n = 0
    for _ in range(reps):
        values = {"base": list(rng.normal(0, 1, max_seeds))}
        values |= {f"a{i}": list(rng.normal(shift, 1, max_seeds)) for i in range(arms)}
        out = sequential.simulate(values, "base", schedule)
        fixed = stats.compare(
            [(g, v[: out.seeds[g]]) for g, v in values.items()],
            baseline="base",
            mode="max",
            seeds_needed=False,
        )
        held = held_at_last_look([Look(*look) for look in out.looks], schedule.alpha)
        table, _ = sequential_table.adjusted(fixed, out.verdicts, held)
        for old, new in zip(fixed.comparisons, table.comparisons):
            old = replace(old, verdict=new.verdict)  # the table's verdict beside the fixed-n interval
            counts += [_misses(old, shift), _misses(new, shift), _disagrees(old), _disagrees(new)]
            n += 1
    miss_old, miss_new, dis_old, dis_new = counts / n
    print(
        f"{arms} arm(s) {shift} sd away, up to {max_seeds} seeds, {per_round} a round, {spending}: misses "
        f"{miss_old:.2%} -> {miss_new:.2%}; interval against the verdict {dis_old:.2%} -> {dis_new:.2%} "
        f"({n} comparisons)"
    )


def sequential_part(reps: int, old: str | None) -> None:
    for row in (
        (0.0, 1, 10, 1, "pocock"),
        (1.0, 1, 10, 1, "pocock"),
        (2.0, 1, 10, 1, "pocock"),
        (1.5, 3, 10, 2, "pocock"),
        (1.0, 5, 8, 1, "pocock"),
        (2.0, 3, 6, 2, "obf"),
        (1.5, 1, 5, 1, "obf"),
    ):
        _sequential_row(reps, *row)


def _module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("old_outliers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_outliers"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def float32_part(reps: int, old: str | None) -> None:
    before = _module(old) if old else None
    for items, p in ((20, 0.97), (100, 0.99), (20, 0.9)):
        for n in (5, 8):
            rng = np.random.default_rng(11)
            named = np.zeros(2)
            for _ in range(reps):
                runs = [
                    (f"s{i}", float(np.float32(k / items))) for i, k in enumerate(rng.binomial(items, p, n))
                ]
                now = outliers.scan({"g": runs}, (0.0, 1.0)) != []
                then = before is not None and before.scan({"g": runs}, (0.0, 1.0)) != []
                named += [then, now]
            print(
                f"{items} items at {p}, {n} seeds, through float32: named "
                f"{named[0] / reps:.1%} -> {named[1] / reps:.1%}"
            )


def importance_part(reps: int, old: str | None) -> None:
    for n, effect in ((6, 1.0), (6, 2.0), (10, 1.0), (10, 2.0)):
        rng = np.random.default_rng(n * 10 + int(effect) + 1000)
        above = silent = 0
        for _ in range(reps):
            result = _grid(rng, n, effect)
            assert result is not None
            beta = next(r for r in result.rows if r.path == "beta")
            above += beta.low > 0
            silent += beta.low > 0 and result.note is None
        print(
            f"{9 * n} runs, lr effect {effect} sd: beta's interval above 0 in {above}/{reps} "
            f"({silent} with no sentence)"
        )


PARTS = {"sequential": sequential_part, "float32": float32_part, "importance": importance_part}

if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--part", choices=sorted(PARTS), required=True)
    cli.add_argument("--reps", type=int, default=1000)
    cli.add_argument("--old", default=None, help="float32: round six's outliers.py, to compare with")
    given = cli.parse_args()
    PARTS[given.part](given.reps, given.old)
