"""Report statistics, round thirteen (benchmarks/RESULTS.md, round thirteen's section): what `report`
prints after `run --until-decided`, checked against simulated sweeps with the truth known, through
the report's own functions (fixed seeds).

Parts (``--part``):
- ``means``: the looks' mean intervals on the seeds `run --until-decided` chose (sequential.simulate,
  the report's own looks: a seed a round to 5 or 8, two to 10; Pocock and O'Brien-Fleming; the arm
  0-2 sds from the baseline, as noisy or 3 times noisier): what each group's mean interval covers at
  the look its seeds stopped at, at the level now (``sequential.mean_level``, calibrated over the
  schedule's stops), the union bound's before (``sequential.union_mean_level``) and a fixed-n 95%;
- ``best_p``: the best mean's test's calibrated p's, one at a time and in one pass
  (calibrated.p_values): the largest relative difference.

What the best group's test costs is measured by ``benchmarks/bench_report.py --best-groups``.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round13.py --part means --reps 400
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import calibrated, sequential
from sweepgen.run.report.stats import verdicts as stats

SCHEDULES = ((1, 5, "pocock"), (1, 8, "pocock"), (2, 10, "pocock"), (1, 8, "obf"))
CASES = ((0.0, 1.0), (1.0, 1.0), (2.0, 1.0), (0.0, 3.0), (1.0, 3.0), (2.0, 3.0))  # (effect, arm's sd)


def _means(reps: int) -> None:
    rng = np.random.default_rng(13)
    print(
        "schedule | effect (sd) | arm's sd | looks' level | arm: now / union bound / fixed-n 95% | "
        "baseline: now / union bound / fixed-n 95% | arm stopped early"
    )
    for per_round, top, spending in SCHEDULES:
        schedule = sequential.Schedule(per_round=per_round, max_seeds=top, spending=spending)
        level = sequential.mean_level(schedule)
        for effect, spread in CASES:
            covered = np.zeros((2, 3))
            early = 0
            for _ in range(reps):
                z = rng.normal(size=(2, top))
                arm = z[1] * spread + effect
                out = sequential.simulate({"base": list(z[0]), "arm": list(arm)}, "base", schedule)
                na, nb = out.seeds["arm"], out.seeds["base"]
                early += na < top
                for k, (values, truth) in enumerate(((arm[:na], effect), (z[0][:nb], 0.0))):
                    for j, at in enumerate(
                        (level, sequential.union_mean_level(schedule, len(values)), stats.LEVEL)
                    ):
                        low, high = stats.t_mean(list(values), at)
                        covered[k, j] += low is not None and high is not None and low <= truth <= high
            c = covered / reps
            print(
                f"{per_round} a round to {top}, {spending} | {effect} | {spread} | {level:.2%} | "
                + " | ".join(" / ".join(f"{x:.2%}" for x in row) for row in c)
                + f" | {early / reps:.2%}"
            )


def _best_p(reps: int) -> None:
    rng = np.random.default_rng(31)
    worst = 0.0
    for n1, n2 in ((2, 2), (3, 3), (2, 5), (5, 3), (4, 8), (3, 30)):
        p = 10 ** rng.uniform(-12, 0, reps)
        loop = np.array([calibrated.p_value(float(x), n1, n2) for x in p])
        worst = max(worst, float(np.max(np.abs(calibrated.p_values(p, n1, n2) - loop) / loop)))
    print(f"largest relative difference, {6 * reps} p's: {worst:.3g}")


PARTS = {"means": _means, "best_p": _best_p}


if __name__ == "__main__":
    cli(PARTS)
