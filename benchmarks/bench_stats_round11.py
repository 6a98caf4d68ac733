"""Report statistics, round eleven (benchmarks/RESULTS.md, round eleven's section): what `report`
prints, checked against simulated sweeps with the truth known, through the report's own functions
(fixed seeds).

Parts (``--part``):
- ``at_best``: `--at best`, the max over a run's 20 evaluations, arms of one true curve with the same
  or another eval noise: verdicts before (the test on the best values) and now
  (compared.no_verdict_at_best: none);
- ``stopped``: `run --until-decided` (a seed a round up to 8, or two a round up to 10): what the
  looks' mean intervals (``sequential.mean_level``) cover, the worst of each spending and effect;
- ``looks_best``: the best mean's "better than every other group" (winner.sentence) on the seeds
  `run --until-decided` chose: two arms alike, a baseline below them;
- ``floors``: accuracy over 10-30 items where most seeds score exactly 0 (or 1): false verdicts and
  false "best", 2 + 5, 5 + 2, 3 + 3, one arm of one run;
- ``needed``: the seeds-needed count (plug-in and spread-top): run at that count, how often the
  report's own test then calls the true difference (the power it claims, 80%);
- ``curve_steps``: `--at last:K` / final where one arm logs every step and the other every 5th
  (same true curve): false verdicts;
- ``importance``: the importance table's "matters" on a 3 x 3 grid with ties and floors (accuracy
  over 10 items near 0): the do-nothing parameter's rate;
- ``best_cost``: what the best group's test (winner._is_it_best) costs per report, at 2-50 groups.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round11.py --part floors --reps 2000
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import sequential, winner
from sweepgen.run.report.stats import verdicts as stats

CALLED = ("better", "worse")


def _called_best(groups: list[tuple[str, list[float]]], mode: str = "max", methods=None) -> str | None:
    """The group the best mean's sentence calls better than every other, or None."""
    statistics = stats.compare(groups, baseline=None, mode=mode, methods=methods, seeds_needed=False)
    said = winner.sentence(statistics, dict(groups))
    if not said or "it is better than every other group" not in said[0]:
        return None
    return said[0].split(" has the best mean")[0].split(" (tied with")[0]


def _looks_best(reps: int) -> None:
    rng = np.random.default_rng(111)
    print("arms' effect over the baseline (sd) | schedule | wrong 'best' of two arms alike | stopped early")
    for effect in (0.5, 1.0, 1.5, 2.0):
        for per_round, top in ((1, 8), (2, 10)):
            schedule = sequential.Schedule(per_round=per_round, max_seeds=top)
            wrong = early = 0
            for _ in range(reps):
                z = rng.normal(size=(3, top))
                values = {"base": list(z[0]), "a": list(z[1] + effect), "b": list(z[2] + effect)}
                out = sequential.simulate(values, "base", schedule)
                early += sum(out.seeds[g] < top for g in ("a", "b"))
                groups = [(g, v[: out.seeds[g]]) for g, v in values.items()]
                wrong += _called_best(groups) is not None
            print(f"{effect} | {per_round}/round to {top} | {wrong / reps:.2%} | {early / (2 * reps):.2%}")


PARTS = {
    "looks_best": _looks_best,
}


if __name__ == "__main__":
    cli(PARTS)
