"""The simulated search of bench_search.py ``--part sim``: a known objective, trials of uneven length
run in virtual time on ``parallel`` slots with no batch barrier, and the regret of the best trial as
a function of the training steps used so far.

One step is one time unit per slot. Each trial's length is drawn from 20-100 steps (its own seeded
stream, so every method sees the same lengths in the same ask order); its metric at step s is its
learning curve plus Gaussian noise. The best trial at any moment is the complete trial with the
highest told (noisy, final) value, as a practitioner would pick it; its regret is ``1 - f`` at its
point. The sampler and the pruner are built by sweepgen itself (``sweepgen.run.search.study``).
"""

from __future__ import annotations

import bisect
import math
import random
import statistics
from dataclasses import dataclass, field

from sweepgen.compile.spec.sampling.search_block import SearchBlock
from sweepgen.run.search import study as search_study

BEST = (0.3, 0.7)
LENGTHS = (20, 100)


def objective(x: float, y: float) -> float:
    return 1.0 - (x - BEST[0]) ** 2 - (y - BEST[1]) ** 2


def saturating(f: float, step: int, x: float) -> float:
    """Every trial learns at the same speed: the expected ranking never changes, only the noise
    can reorder trials (the objective of every earlier measurement)."""
    return f * (1 - math.exp(-step / 15))


def crossing(f: float, step: int, x: float) -> float:
    """The speed depends on x (time constant 10 at x = 0 to 20 at x = 1, 13 at the optimum), as a
    learning rate does: trials below the optimum's x lead early and are overtaken by step 20-30, so
    early rungs favour the wrong side of the optimum. A sensitivity check, not the headline."""
    return f * (1 - math.exp(-step / (10 + 10 * x)))


CURVES = {"saturating": saturating, "crossing": crossing}


@dataclass(frozen=True)
class Method:
    """One searched configuration: the sampler, the pruner (``method:min_steps[:reduction]`` or
    None), the number of trials, and two settings sweepgen does not expose, to test them."""

    sampler: str
    prune: str | None
    n: int
    tpe_startup: int | None = None  # TPE's n_startup_trials; None: Optuna's default (10)
    pruned_as_failed: bool = False  # tell a pruned trial as failed, which TPE ignores

    @property
    def label(self) -> str:
        name = self.sampler + (f"+{self.prune}" if self.prune else "")
        if self.tpe_startup is not None:
            name += f" startup={self.tpe_startup}"
        if self.pruned_as_failed:
            name += " pruned-as-failed"
        return f"{name} n={self.n}"


@dataclass
class SearchRun:
    """One search: its final regret, the steps it used, the slot utilisation, and ``history``: after
    each completed trial, (steps used so far by all trials, regret of the best trial then);
    ``oracle``: the lowest regret of any complete trial (what a noiseless pick would have got)."""

    regret: float
    oracle: float
    steps: int
    util: float
    barrier_util: float
    history: list[tuple[int, float]] = field(default_factory=list)


def block(method: Method, parallel: int, seed: int) -> SearchBlock:
    prune = None
    if method.prune:
        name, *numbers = method.prune.split(":")
        prune = {"method": name, **dict(zip(("min_steps", "reduction"), map(int, numbers)))}
    return SearchBlock.model_validate(
        {
            "n": method.n,
            "parallel": parallel,
            "seed": seed,
            "sampler": method.sampler,
            "metric": "score",
            "axes": {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}},
            **({"prune": prune} if prune else {}),
        }
    )


def _sampler(method: Method, b: SearchBlock, salt: int):
    if method.tpe_startup is None:
        return search_study.sampler(b, salt=salt)
    import optuna

    # sweepgen's TPE (same seed rule, constant liar) with another startup count
    seed = (b.seed * 1_000_003 + salt) % 2**32
    return optuna.samplers.TPESampler(seed=seed, constant_liar=True, n_startup_trials=method.tpe_startup)


def simulate(method: Method, parallel: int, seed: int, noise: float, curve: str) -> SearchRun:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    b = block(method, parallel, seed)
    pruning = b.prune is not None
    study = optuna.create_study(direction="maximize", pruner=search_study.pruner(b))
    dists = search_study.distributions(b)
    shape = CURVES[curve]
    lengths, rng = random.Random(seed + 1000), random.Random(seed + 2000)
    pruned_state = optuna.trial.TrialState.FAIL if method.pruned_as_failed else optuna.trial.TrialState.PRUNED
    running: list[dict] = []
    lens: list[int] = []
    asked = steps = now = 0
    best: tuple[float, float] | None = None  # (told value, regret)
    oracle = math.inf
    history: list[tuple[int, float]] = []
    while asked < method.n or running:
        while len(running) < parallel and asked < method.n:
            study.sampler = _sampler(method, b, asked)
            trial = study.ask(dists)
            lens.append(lengths.randint(*LENGTHS))
            f = objective(trial.params["x"], trial.params["y"])
            running.append({"trial": trial, "step": 0, "length": lens[-1], "f": f})
            asked += 1
        now += 1
        for r in list(running):
            r["step"] += 1
            steps += 1
            trial = r["trial"]
            value = shape(r["f"], r["step"], trial.params["x"]) + rng.gauss(0, noise)
            if pruning:
                trial.report(value, r["step"])
            if r["step"] == r["length"]:
                study.tell(trial, value)
                running.remove(r)
                if best is None or value > best[0]:
                    best = (value, 1.0 - r["f"])
                history.append((steps, best[1]))
                oracle = min(oracle, 1.0 - r["f"])
            elif pruning and trial.should_prune():
                study.tell(trial, state=pruned_state)
                running.remove(r)
    # the same trial lengths run batch-synchronously (Hydra's sweeper: ask n_jobs, wait for all)
    batches = [lens[i : i + parallel] for i in range(0, len(lens), parallel)]
    return SearchRun(
        regret=best[1] if best else math.inf,
        oracle=oracle,
        steps=steps,
        util=steps / (parallel * now),
        barrier_util=sum(lens) / (parallel * sum(max(bt) for bt in batches)),
        history=history,
    )


def regret_at(run: SearchRun, budget: float) -> float:
    """The regret of the best trial once ``budget`` steps were used (inf before any trial ended)."""
    i = bisect.bisect_right([s for s, _ in run.history], budget)
    return run.history[i - 1][1] if i else math.inf


def median_regret_at(runs: list[SearchRun], budget: float) -> float:
    return statistics.median(regret_at(r, budget) for r in runs)


def _budgets(runs: list[SearchRun], upto: float) -> list[int]:
    # the median only changes where some run's best trial changes: those steps are all to check
    return sorted({s for r in runs for s, _ in r.history if s <= upto})


def first_reaching(runs: list[SearchRun], target: float, upto: float = math.inf) -> int | None:
    """The fewest steps at which the median over ``runs`` of the best-so-far regret is at most
    ``target``; None if it never is within ``upto`` steps."""
    for budget in _budgets(runs, upto):
        if median_regret_at(runs, budget) <= target:
            return budget
    return None


def first_staying(runs: list[SearchRun], target: float, upto: float = math.inf) -> int | None:
    """The fewest steps from which the median stays at most ``target`` up to ``upto`` steps: the
    best-so-far trial is picked by its noisy value, so a run's regret can rise again when a worse
    trial's lucky value overtakes, and the median can dip under the target and leave it."""
    staying = None
    for budget in _budgets(runs, upto):
        if median_regret_at(runs, budget) <= target:
            staying = budget if staying is None else staying
        else:
            staying = None
    return staying


def reach_ratio(pruned: list[SearchRun], reference: list[SearchRun]) -> float:
    """Steps for ``pruned``'s median regret to reach ``reference``'s final median regret, as a
    share of ``reference``'s median steps (inf: never within its trials)."""
    target = statistics.median(r.regret for r in reference)
    first = first_reaching(pruned, target)
    return first / statistics.median(r.steps for r in reference) if first is not None else math.inf


def subset_shares(
    pruned: list[SearchRun], reference: list[SearchRun], size: int, count: int, limit: float
) -> tuple[float, float, float]:
    """``count`` random subsets of ``size`` search seeds (the same seeds for both methods): the share
    of subsets in which the reach ratio is at most ``limit``, and the 10th and 90th percentile of
    the ratio, i.e. how often a benchmark run with ``size`` seeds would report the target met."""
    rng = random.Random(0)
    ratios = []
    for _ in range(count):
        idx = rng.sample(range(len(reference)), size)
        ratios.append(reach_ratio([pruned[i] for i in idx], [reference[i] for i in idx]))
    ratios.sort()
    return (
        sum(r <= limit for r in ratios) / count,
        ratios[count // 10],
        ratios[min(count - 1, count * 9 // 10)],
    )
