"""Report statistics, round thirteen (benchmarks/RESULTS.md, round thirteen's section): what `report`
prints after `run --until-decided`, checked against simulated sweeps with the truth known, through
the report's own functions (fixed seeds).

Parts (``--part``):
- ``means``: the looks' mean intervals on the seeds `run --until-decided` chose (sequential.simulate,
  the report's own looks: a seed a round to 5 or 8, two to 10; Pocock and O'Brien-Fleming; the arm
  0-2 sds from the baseline, as noisy or 3 times noisier): what each group's mean interval covers at
  the look its seeds stopped at, at the level now (``sequential.mean_level``, calibrated over the
  schedule's stops), the union bound's before (``sequential.union_mean_level``) and a fixed-n 95%;
- ``means_rounds``: the same at 3 and 5 seeds a round (3 to 12, 5 to 15, Pocock; 3 to 9, O'Brien-Fleming);
- ``fresh``: the calibration's own grid of cases (looks_level) on fresh draws: the level's coverage at
  its worst and best case, a fixed-n 95%'s worst;
- ``heavy``: one diverged seed (each seed at -10 with probability 0.1): false verdicts, the
  difference interval's and each group's mean interval's coverage, 2-5 seeds a side;
- ``paired``: both groups on the same seed list (a shared seed effect): the unpaired test's verdicts
  and interval;
- ``accuracy_means``: a group's mean interval on accuracies near 1 (0.98 over 50 or 200 items) and
  elsewhere, 2, 3 and 5 seeds: how often there is one, and what it covers;
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


def _means(reps: int, schedules: tuple[tuple[int, int, str], ...] = SCHEDULES, seed: int = 13) -> None:
    rng = np.random.default_rng(seed)
    print(
        "schedule | effect (sd) | arm's sd | looks' level | arm: now / union bound / fixed-n 95% | "
        "baseline: now / union bound / fixed-n 95% | arm stopped early"
    )
    for per_round, top, spending in schedules:
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


def _means_rounds(reps: int) -> None:
    """``means`` at 3-5 seeds a round."""
    _means(reps, ((3, 12, "pocock"), (5, 15, "pocock"), (3, 9, "obf")), seed=14)


def _fresh(reps: int) -> None:
    """looks_level's own grid of cases on fresh draws (seed 99, ``reps`` a case): the coverage of the
    calibrated level at its worst and best case, and a fixed-n 95%'s worst."""
    from sweepgen.run.report.stats import looks_level

    print("schedule | looks' level | worst case | best case | fixed-n 95%'s worst case")
    for per_round, top, spending in (*SCHEDULES, (3, 12, "pocock"), (5, 15, "pocock"), (3, 9, "obf")):
        schedule = sequential.Schedule(per_round=per_round, max_seeds=top, spending=spending)
        level = sequential.mean_level(schedule)
        seed, draws = looks_level.SEED, looks_level.DRAWS
        looks_level.SEED, looks_level.DRAWS = 99, reps
        try:
            pivots = looks_level._pivots(schedule)
        finally:
            looks_level.SEED, looks_level.DRAWS = seed, draws
        at, fixed = looks_level._quantiles(level, top), looks_level._quantiles(0.95, top)
        cover = [float(np.mean(p <= at[n])) for p, n in pivots]
        worst_fixed = min(float(np.mean(p <= fixed[n])) for p, n in pivots)
        print(
            f"{per_round} a round to {top}, {spending} | {level:.2%} | {min(cover):.2%} | {max(cover):.2%} | "
            f"{worst_fixed:.2%}"
        )


def _heavy(reps: int) -> None:
    """One diverged seed: each seed of both groups (alike) at -10 with probability 0.1, else N(0, 1)."""
    rng = np.random.default_rng(5)
    truth = 0.1 * -10.0
    print("seeds | called | difference interval covers 0 | mean interval covers the true mean (-1)")
    for sizes in ((3, 3), (2, 5), (5, 2), (5, 5), (3, 5)):
        called = cov_d = n_d = cov_m = n_m = 0
        for _ in range(reps):
            groups = []
            for i, n in enumerate(sizes):
                v = rng.normal(0, 1, n)
                v[rng.random(n) < 0.1] = -10.0
                groups.append((f"g{i}", list(v)))
            s = stats.compare(groups, baseline="g0", mode="max", seeds_needed=False)
            c = s.comparisons[0]
            called += c.verdict in ("better", "worse")
            if c.low is not None and c.high is not None:
                n_d += 1
                cov_d += c.low <= 0 <= c.high
            for g in s.groups:
                if g.low is not None and g.high is not None:
                    n_m += 1
                    cov_m += g.low <= truth <= g.high
        print(f"{sizes} | {called / reps:.2%} | {cov_d / max(n_d, 1):.2%} | {cov_m / max(n_m, 1):.2%}")


def _paired(reps: int) -> None:
    """Both groups run the same seed list, the seed's own effect (sd 1) shared, run noise sd 0.3;
    the arm equal or 0.5 above: the report's unpaired test's verdicts and its interval's coverage."""
    rng = np.random.default_rng(17)
    print("seeds | true difference | called | difference interval covers it")
    for n in (2, 3, 5):
        for effect in (0.0, 0.5):
            called = cov = have = 0
            for _ in range(reps):
                seed_effect = rng.normal(0, 1, n)
                base = seed_effect + rng.normal(0, 0.3, n)
                arm = seed_effect + effect + rng.normal(0, 0.3, n)
                s = stats.compare(
                    [("b", list(base)), ("a", list(arm))], baseline="b", mode="max", seeds_needed=False
                )
                c = s.comparisons[0]
                called += c.verdict in ("better", "worse")
                if c.low is not None and c.high is not None:
                    have += 1
                    cov += c.low <= effect <= c.high
            print(f"{n} | {effect} | {called / reps:.2%} | {cov / max(have, 1):.2%}")


def _accuracy_means(reps: int) -> None:
    """A group's mean interval on accuracies (binomial over m items / m), clipped to [0, 1]."""
    rng = np.random.default_rng(7)
    methods = stats.Methods(bounds=(0.0, 1.0))
    print("accuracy | items | seeds | has an interval | it covers")
    for p, m in ((0.98, 50), (0.98, 200), (0.9, 20), (0.5, 20)):
        for n in (2, 3, 5):
            cov = have = 0
            for _ in range(reps):
                g = stats.group_stats("g", list(rng.binomial(m, p, n) / m), methods)
                if g.low is not None and g.high is not None:
                    have += 1
                    cov += g.low <= p <= g.high
            print(f"{p} | {m} | {n} | {have / reps:.1%} | {cov / max(have, 1):.2%}")


def _best_p(reps: int) -> None:
    rng = np.random.default_rng(31)
    worst = 0.0
    for n1, n2 in ((2, 2), (3, 3), (2, 5), (5, 3), (4, 8), (3, 30)):
        p = 10 ** rng.uniform(-12, 0, reps)
        loop = np.array([calibrated.p_value(float(x), n1, n2) for x in p])
        worst = max(worst, float(np.max(np.abs(calibrated.p_values(p, n1, n2) - loop) / loop)))
    print(f"largest relative difference, {6 * reps} p's: {worst:.3g}")


PARTS = {
    "means": _means,
    "means_rounds": _means_rounds,
    "fresh": _fresh,
    "heavy": _heavy,
    "paired": _paired,
    "accuracy_means": _accuracy_means,
    "best_p": _best_p,
}


if __name__ == "__main__":
    cli(PARTS)
