"""Report statistics, round fifteen (benchmarks/RESULTS.md, round fifteen's section): which number
per run is compared, runs of different lengths, ties on a grid, and the looks' model of several arms,
at 2, 3 and 5 seeds, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``best``: two arms of one true curve (20 evaluations a run, each with eval noise; the seed moves a
  run's level): each run's final value, its best over the evaluations and the mean of its last 5,
  compared by ``stats.compare``: the best's bias over the true final value and how often the arms
  are called different, with equal eval noise and with one arm's eval noise twice the other's;
- ``lengths``: two arms of one rising curve, every run of one arm stopped at step 30 or 20 of 40
  (or one seed of it at 20): how often ``stats.compare`` calls them different at the final value and at last:5
  (what `report` said before this round: a warning, and the verdict);
- ``ties``: accuracies on a grid (a count out of 50 or 10 eval items), two arms alike: how often
  either is called, how often a difference interval (or a group's) has zero width, what the group
  intervals cover, and what a 2-seed group whose two runs tie shows;
- ``looks``: looks_level's simulated stops with Holm's step-down (what each look runs) against
  Bonferroni (what the model ran before): the share of arm stops that differ, and the level.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round15.py --part best --reps 1000
"""

from __future__ import annotations

import importlib.util

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import looks_level, sequential
from sweepgen.run.report.stats import verdicts as stats

CALLED = ("better", "worse")
SEEDS = (2, 3, 5)


def _called(a: list[float], b: list[float], methods: stats.Methods | None = None) -> stats.Comparison:
    s = stats.compare(
        [("base", b), ("arm", a)], baseline="base", mode="max", methods=methods, seeds_needed=False
    )
    return s.comparisons[0]


def _curves(rng: np.random.Generator, n: int, steps: int, eval_sd: float) -> np.ndarray:
    """``n`` runs x ``steps`` evaluations of one true curve rising to 1 (the seed's level sd 0.05)."""
    t = np.arange(1, steps + 1)
    truth = 1 - np.exp(-t / (steps / 4))
    return truth + rng.normal(0, 0.05, (n, 1)) + rng.normal(0, eval_sd, (n, steps))


def _best(reps: int) -> None:
    rng = np.random.default_rng(151)
    print("seeds | arm's eval noise | best's bias (arm) | called: final | called: best | called: last:5")
    for n in SEEDS:
        for ratio in (1.0, 2.0):
            bias, calls = [], np.zeros(3)
            for _ in range(reps):
                base, arm = _curves(rng, n, 20, 0.05), _curves(rng, n, 20, 0.05 * ratio)
                truth = 1 - np.exp(-4.0)
                bias.append(arm.max(axis=1).mean() - truth)
                for j, pick in enumerate(
                    (lambda x: x[:, -1], lambda x: x.max(axis=1), lambda x: x[:, -5:].mean(axis=1))
                ):
                    calls[j] += _called(list(pick(arm)), list(pick(base))).verdict in CALLED
            rates = " | ".join(f"{c / reps:.2%}" for c in calls)
            print(f"{n} | {ratio:g}x | {np.mean(bias):+.3f} | {rates}")


def _lengths(reps: int) -> None:
    rng = np.random.default_rng(152)
    print("seeds | the arm's runs stopped at | true gap (seed sds) | called: final | called: last:5")
    truth = 1 - np.exp(-np.arange(1, 41) / 10)
    for n in SEEDS:
        for stop, which in ((30, "every"), (20, "every"), (20, "one")):
            calls = np.zeros(2)
            for _ in range(reps):
                base, arm = _curves(rng, n, 40, 0.02), _curves(rng, n, 40, 0.02)
                cut = [stop] * n if which == "every" else [stop] + [40] * (n - 1)
                finals = [arm[i, c - 1] for i, c in enumerate(cut)]
                lasts = [arm[i, c - 5 : c].mean() for i, c in enumerate(cut)]
                calls[0] += _called(finals, list(base[:, -1])).verdict in CALLED
                calls[1] += _called(lasts, list(base[:, -5:].mean(axis=1))).verdict in CALLED
            gap = (truth[-1] - truth[stop - 1]) / 0.05
            runs = f"step {stop} of 40 ({'every run' if which == 'every' else 'one seed'})"
            print(f"{n} | {runs} | {gap:.2f} | {calls[0] / reps:.2%} | {calls[1] / reps:.2%}")


def _ties(reps: int) -> None:
    rng = np.random.default_rng(153)
    bounded = stats.Methods(bounds=(0.0, 1.0))
    print(
        "items | p | seeds | called | zero-width diff interval | group interval covers p | "
        "groups of tied runs (no interval) | 2-seed tie: interval"
    )
    for items in (50, 10):
        for p in (0.7, 0.95):
            for n in SEEDS:
                called = zero = cover = have = tied = 0
                for _ in range(reps):
                    a, b = (list(rng.binomial(items, p, n) / items) for _ in range(2))
                    s = stats.compare(
                        [("base", b), ("arm", a)],
                        baseline="base",
                        mode="max",
                        methods=bounded,
                        seeds_needed=False,
                    )
                    c = s.comparisons[0]
                    called += c.verdict in CALLED
                    zero += c.low is not None and c.high is not None and c.high - c.low == 0
                    for g in s.groups:
                        if g.low is None:
                            tied += 1
                        else:
                            have += 1
                            cover += g.low <= p <= g.high
                print(
                    f"{items} | {p} | {n} | {called / reps:.2%} | {zero / reps:.2%} | "
                    f"{cover / max(have, 1):.2%} | {tied / (2 * reps):.2%} | {_two_tied(items, p)}"
                )


def _two_tied(items: int, p: float) -> str:
    """What the report prints for a 2-seed group whose runs tie at the grid value nearest p."""
    v = round(p * items) / items
    s = stats.compare(
        [("base", [v, v]), ("arm", [v, v + 1 / items])], baseline="base", mode="max", seeds_needed=False
    )
    g = {x.name: x for x in s.groups}["base"]
    c = s.comparisons[0]
    return f"group ({g.low}, {g.high}), diff {c.verdict} [{c.low}, {c.high}]"


def _looks(reps: int) -> None:
    del reps  # the model's own draws
    old = _old_model()
    print("schedule | arm stops that differ (3 arms) | of them earlier with Holm | level: Bonferroni / Holm")
    for per_round, top in ((1, 3), (1, 5), (1, 8), (2, 10)):
        schedule = sequential.Schedule(per_round, top)
        rng = np.random.default_rng(1)
        differ = earlier = total = 0
        for ratio in looks_level.RATIOS:
            for effect in looks_level.EFFECTS:
                base = rng.normal(size=(4000, top))
                arms = rng.normal(size=(3, 4000, top)) * ratio + effect
                a, b = old._stops(schedule, arms, base), looks_level._stops(schedule, arms, base)
                differ += int((a != b).sum())
                earlier += int((b < a).sum())
                total += a.size
        levels = f"{old.level(schedule):.4f} / {looks_level.level(schedule):.4f}"
        print(
            f"{per_round} a round to {top} | {differ / total:.2%} | {earlier / max(differ, 1):.0%} | {levels}"
        )


def _old_model():  # type: ignore[no-untyped-def]
    """looks_level as it was (Bonferroni over the open arms), read from git (the commit before
    round fifteen's change) into a temporary folder and loaded from there."""
    import subprocess
    import tempfile
    from pathlib import Path

    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:sweepgen/run/report/stats/looks_level.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent,
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "looks_old.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("looks_old", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


OLD_COMMIT = "66b58f8c"  # main before round fifteen: looks_level's Bonferroni model
PARTS = {"best": _best, "lengths": _lengths, "ties": _ties, "looks": _looks}

if __name__ == "__main__":
    cli(PARTS)
