"""Report statistics, round eleven (benchmarks/RESULTS.md, round eleven's section): what `report`
prints, checked against simulated sweeps with the truth known, through the report's own functions
(fixed seeds).

Parts (``--part``):
- ``at_best``: `--at best`, the max over a run's 20 evaluations, arms of one true curve with the same
  or another eval noise: verdicts before (the test on the best values) and now
  (compared.no_verdict_at_best: none);
- ``stopped``: `run --until-decided` (a seed a round up to 8, or two a round up to 10): what the
  looks' mean intervals (``sequential.union_mean_level``, the level then) cover, the worst of each
  spending and effect;
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

What the best group's test costs is measured by ``benchmarks/bench_report.py --best-groups``.

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
    for effect in (1.0, 1.5):
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


def _at_best(reps: int) -> None:
    from sweepgen.run.report import compared

    rng = np.random.default_rng(71)  # round ten's sweeps
    evals, n = 20, 3
    print("eval noise (arm / baseline) | seeds | called at --at best: before / now | at final")
    for noise in ((0.3, 0.3), (0.6, 0.3)):
        before = now = final = 0
        for _ in range(reps):
            curve = np.linspace(0, 1, evals)
            runs = [curve + rng.normal(0, 0.2, (n, 1)) + rng.normal(0, sd, (n, evals)) for sd in noise]
            best = [("b", list(runs[1].max(1))), ("a", list(runs[0].max(1)))]
            s = stats.compare(best, baseline="b", mode="max", seeds_needed=False)
            before += s.comparisons[0].verdict in CALLED
            now += compared.no_verdict_at_best(s).comparisons[0].verdict in CALLED
            last = [("b", list(runs[1][:, -1])), ("a", list(runs[0][:, -1]))]
            (c,) = stats.compare(last, baseline="b", mode="max", seeds_needed=False).comparisons
            final += c.verdict in CALLED
        print(f"{noise[0]} / {noise[1]} | {n} | {before / reps:.2%} / {now / reps:.2%} | {final / reps:.2%}")


def _stopped(reps: int) -> None:
    rng = np.random.default_rng(12)
    print(
        "schedule | spending | effect (sd) | arm: looks' level | baseline: looks' level | arm stopped early"
    )
    for per_round, top in ((2, 10), (1, 5)):  # 1/round to 8: round ten's (the same seed, the same rates)
        for spending, effect in (("pocock", 0.0), ("pocock", 1.0), ("pocock", 2.0), ("obf", 1.0)):
            schedule = sequential.Schedule(per_round=per_round, max_seeds=top, spending=spending)
            covered = np.zeros(2)
            early = 0
            for _ in range(reps):
                z = rng.normal(size=(2, top))
                out = sequential.simulate({"base": list(z[0]), "arm": list(z[1] + effect)}, "base", schedule)
                na, nb = out.seeds["arm"], out.seeds["base"]
                early += na < top
                for k, (values, truth, got) in enumerate(
                    ((list(z[1][:na] + effect), effect, na), (list(z[0][:nb]), 0.0, nb))
                ):
                    low, high = stats.t_mean(values, sequential.union_mean_level(schedule, got))
                    covered[k] += low is not None and high is not None and low <= truth <= high
            c = covered / reps
            print(
                f"{per_round}/round to {top} | {spending} | {effect} | {c[0]:.2%} | {c[1]:.2%} | "
                f"{early / reps:.2%}"
            )


def _floors(reps: int) -> None:
    rng = np.random.default_rng(113)
    methods = stats.Methods(bounds=(0.0, 1.0))
    print(
        "accuracy | items | seeds (baseline, arm) | false verdicts | cannot decide | false 'best' (3 groups)"
    )
    for p, m in ((0.02, 10), (0.02, 30), (0.98, 10)):
        for sizes in ((3, 3), (2, 5), (5, 2), (5, 5)):  # one run a side: "cannot decide", always
            called = undecided = best = 0
            for _ in range(reps):
                groups = [(f"g{i}", list(rng.binomial(m, p, n) / m)) for i, n in enumerate(sizes)]
                (c,) = stats.compare(
                    groups, baseline="g0", mode="max", methods=methods, seeds_needed=False
                ).comparisons
                called += c.verdict in CALLED
                undecided += c.verdict == stats.UNDECIDABLE
                three = [*groups, ("g2", list(rng.binomial(m, p, sizes[0]) / m))]
                best += _called_best(three, methods=methods) is not None
            print(f"{p} | {m} | {sizes} | {called / reps:.2%} | {undecided / reps:.2%} | {best / reps:.2%}")


def _needed(reps: int) -> None:
    from sweepgen.run.report.stats import power

    rng = np.random.default_rng(115)
    print("case | seeds | without evidence | printed count reaches 80% at the true spread | spread-top count")
    cases = (
        ("normal 1 sd", (2, 5), lambda n, shift: rng.normal(shift, 1, n), 1.0, 1.0),
        ("normal 1 sd", (5, 2), lambda n, shift: rng.normal(shift, 1, n), 1.0, 1.0),
        (
            "accuracy 20 items 0.5 vs 0.6",
            (3, 3),
            lambda n, shift: rng.binomial(20, 0.5 + shift, n) / 20,
            0.1,
            float(np.sqrt(0.25 / 20)),
        ),
    )
    for name, sizes, draw, shift, sd in cases:
        point, top = [], []
        for _ in range(reps):
            base, arm = list(draw(sizes[0], 0.0)), list(draw(sizes[1], shift))
            (c,) = stats.compare([("b", base), ("a", arm)], baseline="b", mode="max").comparisons
            if c.verdict != "no evidence" or c.seeds_needed is None:
                continue
            point.append(power.power(c.seeds_needed, abs(c.diff) / sd, stats.ALPHA) >= power.POWER)
            high = c.seeds_needed_high
            top.append(high is not None and power.power(high, abs(c.diff) / sd, stats.ALPHA) >= power.POWER)
        print(f"{name} | {sizes} | {len(point)} | {np.mean(point):.1%} | {np.mean(top):.1%}")


def _curve_steps(reps: int) -> None:
    rng = np.random.default_rng(117)
    steps = np.arange(1, 41)
    print("value | arm logs every | false verdicts (3 + 3, same true curve rising 0 -> 1)")
    for at in ("last:5", "final"):
        for every in (1, 5):
            called = 0
            for _ in range(reps):
                groups = []
                for name, stride in (("b", 1), ("a", every)):
                    logged = steps[stride - 1 :: stride]
                    runs = logged / 40 + rng.normal(0, 0.1, (3, 1)) + rng.normal(0, 0.05, (3, len(logged)))
                    values = runs[:, -1] if at == "final" else runs[:, -5:].mean(1)
                    groups.append((name, list(values)))
                (c,) = stats.compare(groups, baseline="b", mode="max", seeds_needed=False).comparisons
                called += c.verdict in CALLED
            print(f"{at} | {every} | {called / reps:.2%}")


def _importance(reps: int) -> None:
    from sweepgen.run.report.stats import importance

    rng = np.random.default_rng(119)
    grid = np.array([(a, b) for a in (1, 2, 3) for b in (1, 2, 3) for _ in range(3)], dtype=float)
    print("case | lr called 'matters' | beta (does nothing) called")
    cases = (
        (
            "accuracy over 10 items near 0 (p 0.03), lr doing nothing too",
            lambda: rng.binomial(10, 0.03, len(grid)) / 10,
        ),
        (
            "accuracy over 10 items, lr 0.03 / 0.1 / 0.3",
            lambda: rng.binomial(10, np.array([0.03, 0.1, 0.3])[grid[:, 0].astype(int) - 1]) / 10,
        ),
        ("ties: accuracy over 10 items at 0.97", lambda: rng.binomial(10, 0.97, len(grid)) / 10),
    )
    for name, draw in cases:
        called = np.zeros(2)
        for _ in range(reps):
            p = importance.matters(np, grid, draw())
            called += [q is not None and q < importance.ALPHA for q in p]
        print(f"{name} | {called[0] / reps:.2%} | {called[1] / reps:.2%}")


PARTS = {
    "looks_best": _looks_best,
    "at_best": _at_best,
    "stopped": _stopped,
    "floors": _floors,
    "needed": _needed,
    "curve_steps": _curve_steps,
    "importance": _importance,
}


if __name__ == "__main__":
    cli(PARTS)
