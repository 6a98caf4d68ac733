"""Report statistics, round nine (benchmarks/RESULTS.md §36): what `report` prints, checked against
simulated sweeps with the truth known, through the report's own functions (fixed seeds).

Parts (``--part``):
- ``proportion``: two arms of the same accuracy over m items (binomial counts), 2-5 seeds a side,
  equal and unequal: how often the report's test calls a difference, how often its difference
  interval (at its Holm level) holds 0, how often it cannot decide (both arms without spread);
- ``bernoulli``: each seed's value 0 or 1 (one episode, a pass/fail): the same false-verdict rate;
- ``arms``: 4-6 groups of the same mean, unequal seeds (2-5) and spreads (0.3-3x): how often any
  arm is called different from the baseline (Holm's family-wise rate);
- ``last``: `--at last:K` on AR(1) curves (phi 0.9, 100 steps, K = 10) plus a seed effect: the 95%
  t interval of the group mean over the per-run means of the last K values, its coverage;
- ``other``: `run --until-decided` on metric A (Pocock, a seed a round, up to 10), then a fixed-n
  `report` of metric B (null; run noise correlated 0.9 with A's): B's false-verdict rate;
- ``stopped``: the 95% t interval of a group's mean on the seeds the looks ran (Pocock, up to 8):
  its coverage of the arm's and the baseline's true means.

    OMP_NUM_THREADS=1 nice python benchmarks/bench_stats_round9.py --part proportion --reps 4000
"""

from __future__ import annotations

import numpy as np
from bench_stats_round8 import cli  # run as a script: benchmarks/ is on the path

from sweepgen.run.report.stats import sequential
from sweepgen.run.report.stats import verdicts as stats

UNIT = stats.Methods(bounds=(0.0, 1.0))


def _verdict(a: list[float], b: list[float], methods: stats.Methods = UNIT) -> stats.Comparison:
    statistics = stats.compare(
        [("b", b), ("a", a)], baseline="b", mode="max", methods=methods, seeds_needed=False
    )
    return statistics.comparisons[0]


def _proportion(reps: int) -> None:
    rng = np.random.default_rng(1)
    print("p items n_arm n_base | false verdicts | cannot decide | diff interval holds 0")
    for p in (0.5, 0.9, 0.97):
        for m in (10, 30):
            for na, nb in ((3, 3), (2, 5), (5, 2), (5, 5)):
                wrong = undecided = held = shown = 0
                for _ in range(reps):
                    c = _verdict(list(rng.binomial(m, p, na) / m), list(rng.binomial(m, p, nb) / m))
                    wrong += c.verdict in ("better", "worse")
                    undecided += c.verdict == stats.UNDECIDABLE
                    if c.low is not None and c.high is not None:
                        shown += 1
                        held += c.low <= 0 <= c.high
                rates = f"{wrong / reps:.2%} | {undecided / reps:.2%} | {held / max(shown, 1):.2%}"
                print(f"{p} {m} {na} {nb} | {rates}")


def _bernoulli(reps: int) -> None:
    rng = np.random.default_rng(5)
    print("p n_arm n_base | false verdicts")
    for p in (0.5, 0.8, 0.95):
        for na, nb in ((3, 3), (2, 5), (5, 5), (4, 8)):
            wrong = sum(
                _verdict(
                    [float(x) for x in rng.binomial(1, p, na)], [float(x) for x in rng.binomial(1, p, nb)]
                ).verdict
                in ("better", "worse")
                for _ in range(reps)
            )
            print(f"{p} {na} {nb} | {wrong / reps:.2%}")


def _arms(reps: int) -> None:
    rng = np.random.default_rng(3)
    print("seeds per group (baseline first) | sds | any arm called")
    for sizes in ((3, 3, 3, 3), (2, 5, 5, 5), (5, 2, 3, 4), (3, 2, 2, 2, 2, 2)):
        for sds in ((1.0,) * 6, (1.0, 3.0, 0.3, 1.0, 2.0, 1.0)):
            called = 0
            for _ in range(reps):
                groups = [(f"g{i}", list(rng.normal(0, sds[i], n))) for i, n in enumerate(sizes)]
                s = stats.compare(groups, baseline="g0", mode="max", seeds_needed=False)
                called += any(c.verdict in ("better", "worse") for c in s.comparisons)
            print(f"{sizes} | {sds[: len(sizes)]} | {called / reps:.2%}")


def _last(reps: int) -> None:
    rng = np.random.default_rng(4)
    phi, steps, k = 0.9, 100, 10
    print("seeds | coverage of the 95% mean interval, --at last:10 of AR(1) curves")
    for n in (2, 3, 5):
        covered = 0
        for _ in range(reps):
            e = rng.normal(size=(n, steps))
            x = np.zeros((n, steps))
            x[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
            for t in range(1, steps):
                x[:, t] = phi * x[:, t - 1] + e[:, t]
            low, high = stats.t_mean(list(x[:, -k:].mean(1) + rng.normal(0, 0.5, n)))
            covered += low is not None and high is not None and low <= 0 <= high
        print(f"{n} | {covered / reps:.2%}")


def _other(reps: int) -> None:
    rng = np.random.default_rng(11)
    schedule = sequential.Schedule(per_round=1, max_seeds=10, spending="pocock")
    print("A's effect (sd) | B's false verdicts | the looks stopped early")
    for effect in (0.0, 1.5):
        wrong = early = 0
        for _ in range(reps):
            z = rng.normal(size=(2, 10, 2))
            a = z[..., 0]
            b = 0.9 * z[..., 0] + np.sqrt(1 - 0.9**2) * z[..., 1]
            out = sequential.simulate({"base": list(a[0]), "arm": list(a[1] + effect)}, "base", schedule)
            n = out.seeds["arm"]
            early += n < 10
            c = _verdict(list(b[1][:n]), list(b[0][:n]), stats.Methods())
            wrong += c.verdict in ("better", "worse")
        print(f"{effect} | {wrong / reps:.2%} | {early / reps:.2%}")


def _stopped(reps: int) -> None:
    rng = np.random.default_rng(12)
    print("spending effect | arm's mean covered | baseline's | stopped early")
    for spending in ("pocock", "obf"):
        schedule = sequential.Schedule(per_round=1, max_seeds=8, spending=spending)
        for effect in (0.0, 1.0, 2.0):
            arm = base = early = 0
            for _ in range(reps):
                z = rng.normal(size=(2, 8))
                out = sequential.simulate({"base": list(z[0]), "arm": list(z[1] + effect)}, "base", schedule)
                na, nb = out.seeds["arm"], out.seeds["base"]
                early += na < 8
                low, high = stats.t_mean(list(z[1][:na] + effect))
                arm += low is not None and high is not None and low <= effect <= high
                low, high = stats.t_mean(list(z[0][:nb]))
                base += low is not None and high is not None and low <= 0 <= high
            print(f"{spending} {effect} | {arm / reps:.2%} | {base / reps:.2%} | {early / reps:.2%}")


PARTS = {
    "proportion": _proportion,
    "bernoulli": _bernoulli,
    "arms": _arms,
    "last": _last,
    "other": _other,
    "stopped": _stopped,
}


if __name__ == "__main__":
    cli(PARTS)
