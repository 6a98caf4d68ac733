"""Parameter importance: how much of the metric's variation each varying parameter explains.

Method (named on the page and in importance.csv): a random forest (scikit-learn
``RandomForestRegressor``, ``TREES`` trees, ``random_state=SEED``) fitted to the scored runs, and each
parameter's permutation importance (``sklearn.inspection.permutation_importance``, ``REPEATS``
repeats, the same seed) on runs the forest did not see (``FOLDS``-fold cross-fitting): the mean drop
in R² (the rise in squared error over the runs' variance) when that parameter's column is shuffled,
clipped at 0 and shown as a share of the total. On the runs it was fitted to, a forest has learnt
their noise, so shuffling a parameter that does nothing still costs it fit: measured, a pure-noise
parameter took 11-25% of the share from 40 runs, with intervals excluding 0 (benchmarks/RESULTS.md
§24); held out, it takes what chance gives it. Chosen over fANOVA through optuna.importance because
the report needs no Optuna study and scikit-learn is the lighter dependency; permutation importance
over impurity importance because impurity favours parameters with many distinct values. Categorical
values are coded by their sorted labels; log-scaled parameters enter as log10.

With its uncertainty: the forest's held-out R² (out-of-bag: each run predicted by the trees that did
not see it), so a forest that explains nothing says so; and each share's interval over ``REFITS``
refits on bootstrap resamples of the runs, each scored on the runs its resample left out (the
2.5th-97.5th percentiles of the shares), so "99%" from
seven runs of noise shows as the wide interval it is. Below ``FEW_RUNS`` scored runs the page says in
a sentence that importance cannot be told from noise. These intervals are no calibrated confidence
intervals at any size measured (27-90 runs: a do-nothing parameter's above 0 in 5-18% of sweeps);
the page says so at every size (``Importance.note``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen import escape
from sweepgen.errors import UserError
from sweepgen.run.report.stats import verdicts

TREES = 100
REPEATS = 10
SEED = 0
MIN_RUNS = 5  # fewer scored runs than this: no forest is fitted (it would explain noise)
FEW_RUNS = 20  # fewer than this: importance is shown with a sentence that it cannot be told from noise
# fewer than this: the intervals over refits are said to be rough. Measured (benchmarks/RESULTS.md
# §28, a 3 x 3 grid, one parameter doing nothing): its interval lay above 0 in 17-18% of sweeps at 27
# runs and 10% at 45, most of them with no other sentence, where a 95% interval would in 2.5%. From
# this many on, still 5/40 sweeps at 54 runs and 5/80 at 90 (round seven, benchmarks/RESULTS.md §31):
# the refits resample one sample and share its chance pattern at every size measured, so from here the
# page says the intervals are not calibrated. A permutation null per parameter would calibrate them,
# at a forest per shuffle per fold (15-30 s a parameter on every --html report): not done.
ROUGH_RUNS = 50
UNCALIBRATED = (
    "an interval over refits is not a calibrated 95% confidence interval at any number of runs (a 95% "
    "interval would lie above 0 in 1 sweep in 40): read a share whose interval starts near 0 as no evidence "
    "that the parameter matters"
)
REFITS = 10  # bootstrap refits for each share's interval
FOLDS = 5  # cross-fitting: each run's importance is measured by a forest fitted without it
METHOD = (
    f"Random forest (scikit-learn RandomForestRegressor, {TREES} trees, random_state={SEED}); importance = "
    f"permutation importance on held-out runs ({FOLDS}-fold cross-fitting; mean drop in R² over {REPEATS} "
    f"shuffles of the parameter), as a share of the total; interval: 2.5-97.5th percentiles over {REFITS} "
    "refits on bootstrap resamples of the runs, each scored on the runs it left out (not a calibrated "
    "confidence interval: a parameter that does nothing gets one above 0 more often than 1 sweep in 40); "
    "held-out R²: out-of-bag."
)
HINT = "install the plot extra: `pip install 'sweepgen[plot]'` (or `pip install scikit-learn`)"


@dataclass(frozen=True)
class Param:
    path: str
    log: bool
    categorical: bool


@dataclass(frozen=True)
class Row:
    path: str
    share: float
    low: float  # the share's interval over bootstrap refits
    high: float
    drop_mean: float  # mean drop in R² when the parameter is shuffled, and its std over shuffles
    drop_std: float


@dataclass(frozen=True)
class Importance:
    rows: tuple[Row, ...]  # largest share first
    held_out_r2: float  # out-of-bag R² of the forest: near or below 0, it explains nothing
    runs: int
    method: str = METHOD
    # per parameter, the Holm-adjusted p of whether it matters at all (``matters``); None: no test
    # (no two runs alike in every other parameter with two of its values)
    matters: tuple[tuple[str, float | None], ...] = ()

    @property
    def note(self) -> str | None:
        """The plain sentence a reader needs before the bars: why the numbers cannot carry weight, and
        at every size that the intervals are no calibrated confidence intervals (measured at 27-90 runs:
        a do-nothing parameter's interval lay above 0 in 1 sweep in 6 to 1 in 16, where a 95% interval's
        would in 1 in 40; below ``ROUGH_RUNS`` a "rough" alone once let them pass as one); then the
        calibrated answer to "does it matter" where there is one (``matters``)."""
        return f"{self._why()}; {UNCALIBRATED}" + self._matters_words()

    def _matters_words(self) -> str:
        if not self.matters:
            return ""
        said = [_matters_word(path, p) for path, p in self.matters]
        return (
            f". Whether each parameter matters at all (a calibrated test: {MATTERS_METHOD}, Holm over the "
            f"{len(self.matters)}, alpha {ALPHA:g}): " + "; ".join(said)
        )

    def _why(self) -> str:
        if self.runs < FEW_RUNS:
            return (
                f"only {self.runs} scored runs: too few to tell importance from noise (below {FEW_RUNS}, "
                "a forest gives one parameter most of the share even on pure noise)"
            )
        if self.held_out_r2 <= 0.1:
            return (
                f"the forest predicts held-out runs no better than their mean (R² {self.held_out_r2:.2f}): "
                "the parameters explain little of the metric, whatever the shares say"
            )
        if self.runs < ROUGH_RUNS:
            return (
                f"{self.runs} scored runs: the intervals over refits are rough (below {ROUGH_RUNS} runs "
                "a parameter that does nothing gets one above 0 in about 1 sweep in 6 at 27 runs, 1 in 10 "
                "at 45)"
            )
        return (
            "the intervals over refits show how the shares vary over refits of these runs: a parameter "
            "that does nothing got one above 0 in about 1 sweep in 8 at 54 runs and 1 in 16 at 90"
        )

    def csv_text(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(
            [
                "parameter",
                "importance_share",
                "share_low",
                "share_high",
                "r2_drop_mean",
                "r2_drop_std",
                "matters_p_holm",
                "held_out_r2",
                "runs",
                "method",
            ]
        )
        tested = dict(self.matters)
        for r in self.rows:
            p = tested.get(r.path)
            writer.writerow(
                [
                    escape.csv_cell(r.path),  # a config path is data, never a spreadsheet formula
                    *(f"{v:.6g}" for v in (r.share, r.low, r.high, r.drop_mean, r.drop_std)),
                    "" if p is None else f"{p:.6g}",  # empty: no test (Importance.matters)
                    f"{self.held_out_r2:.6g}",
                    self.runs,
                    self.method,
                ]
            )
        return buf.getvalue()


ALPHA = 0.05
SHUFFLES = 999  # the permutation test's shuffles: p is at least 1/1000
MATTERS_METHOD = (
    f"its values shuffled {SHUFFLES} times among runs alike in every other parameter, the statistic "
    "the spread of its values' mean scores within them; exact for a parameter that does nothing"
)


def _matters_word(path: str, p: float | None) -> str:
    if p is None:
        return f"{path}: no test (no runs alike in every other parameter at two of its values)"
    if p < ALPHA:
        return f"{path} matters (p {p:.3g})"
    return f"{path}: no evidence it matters (p {p:.3g})"


def matters(np: Any, x: Any, y: Any, seed: int = SEED) -> list[float | None]:
    """Per parameter (column of ``x``), the Holm-adjusted p of a permutation test of "it does
    nothing": its column shuffled within the runs alike in every other column (a stratum), the
    statistic the between-value sum of squares of ``y`` within strata. Under that null the runs of a
    stratum are exchangeable over the parameter's values, so p is exact whatever the metric's shape
    and however unbalanced the grid (runs lost); a seed shared across the stratum's runs makes it
    conservative. The forest's shares and their intervals over refits are no such test (a
    do-nothing parameter's interval above 0 in 1 sweep in 6 to 16). None: no stratum holds two of
    its values (a random search's sampled axes), so nothing can be tested."""
    rng = np.random.Generator(np.random.PCG64(seed))
    raw = [_permutation_p(np, rng, x, y, j) for j in range(x.shape[1])]
    return verdicts.holm(raw)


def _permutation_p(np: Any, rng: Any, x: Any, y: Any, j: int) -> float | None:
    others = np.delete(x, j, axis=1)
    _, strata = np.unique(others, axis=0, return_inverse=True)
    strata = strata.reshape(-1)
    _, level = np.unique(x[:, j], return_inverse=True)
    level = level.reshape(-1)
    cells = strata * (int(level.max()) + 1) + level
    if len(np.unique(cells)) == len(np.unique(strata)):  # one value per stratum: nothing to compare
        return None
    width = int(level.max()) + 1
    cells_n = (int(strata.max()) + 1) * width
    order = np.argsort(strata, kind="stable")
    # every shuffle at once: each row sorts the runs by stratum, then at random within a stratum
    shuffled = np.argsort(strata[None, :] + rng.random((SHUFFLES, len(y))), axis=1)
    levels = np.empty((SHUFFLES + 1, len(y)), dtype=level.dtype)
    levels[0] = level
    levels[1:, order] = level[shuffled]
    code = (strata * width)[None, :] + levels + cells_n * np.arange(SHUFFLES + 1)[:, None]
    sums = np.bincount(code.ravel(), weights=np.tile(y, SHUFFLES + 1), minlength=cells_n * (SHUFFLES + 1))
    counts = np.bincount(code.ravel(), minlength=cells_n * (SHUFFLES + 1))
    ratio = np.divide(sums**2, counts, out=np.zeros_like(sums), where=counts > 0)
    stat = ratio.reshape(SHUFFLES + 1, cells_n).sum(axis=1)
    hits = int(np.sum(stat[1:] >= stat[0] - 1e-9 * max(1.0, abs(float(stat[0])))))
    return (1 + hits) / (SHUFFLES + 1)


def params_of(values: Sequence[Mapping[str, Any]], paths: Sequence[str]) -> list[Param]:
    """Each path as an axis: categorical unless every value is a number; log when all are positive
    and span at least a factor of 100."""
    return [_param(path, [v.get(path) for v in values]) for path in paths]


def _param(path: str, column: list[Any]) -> Param:
    """One path's axis from its values (``column``): a number that is not finite, or a value that
    is no number, cannot be placed on a numeric axis."""
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in column)
    finite = numeric and all(math.isfinite(x) for x in column)
    log = bool(finite and min(column) > 0 and max(column) / min(column) >= 100)
    return Param(path, log, not finite)


def compute(
    values: Sequence[Mapping[str, Any]], scores: Sequence[float], params: Sequence[Param]
) -> Importance | None:
    """Importance of ``params`` for ``scores`` (one entry per scored run), or None with too few runs."""
    if len(scores) < MIN_RUNS or not params:
        return None
    try:
        import numpy as np
        from sklearn.ensemble import RandomForestRegressor
    except ImportError:
        raise UserError(
            "parameter importance needs scikit-learn, which is not installed", hint=HINT
        ) from None
    x = np.asarray([_column(p, values) for p in params], dtype=float).T
    y = np.asarray(scores, dtype=float)
    forest = RandomForestRegressor(n_estimators=TREES, random_state=SEED, oob_score=True).fit(x, y)
    drops = _held_out_drops(np, x, y)
    shares = _shares(drops.mean(axis=1))
    refits = np.asarray([_refit(np, x, y, seed) for seed in range(1, REFITS + 1)])
    low, high = np.percentile(refits, [2.5, 97.5], axis=0)
    rows = [
        Row(p.path, float(sh), float(lo), float(hi), float(m), float(sd))
        for p, sh, lo, hi, m, sd in zip(params, shares, low, high, drops.mean(axis=1), drops.std(axis=1))
    ]
    tested = tuple(zip((p.path for p in params), matters(np, x, y)))
    return Importance(
        tuple(sorted(rows, key=lambda r: -r.share)), float(forest.oob_score_), len(scores), matters=tested
    )


def _column(p: Param, values: Sequence[Mapping[str, Any]]) -> list[float]:
    """The parameter's value in each run as the forest reads it: a category's index among the
    sorted categories, a log-scaled number's log10, any other number as it is."""
    raw: list[Any] = [v.get(p.path) for v in values]
    if p.categorical:
        labels = sorted({repr(x) for x in raw})
        return [float(labels.index(repr(x))) for x in raw]
    return [math.log10(x) if p.log else float(x) for x in raw]


def _shares(drops: Any) -> list[float]:
    clipped = [max(0.0, float(d)) for d in drops]
    total = sum(clipped)
    return [d / total if total > 0 else 0.0 for d in clipped]


def _drops(np: Any, forest: Any, x: Any, y: Any, repeats: int, seed: int, variance: float) -> Any:
    """Per parameter and shuffle, the drop in R² on the runs ``x``, ``y`` (ones ``forest`` was not
    fitted to): the rise in their squared error, over the variance of every run's score."""
    from sklearn.inspection import permutation_importance

    result = permutation_importance(
        forest, x, y, n_repeats=repeats, random_state=seed, scoring="neg_mean_squared_error"
    )
    return result.importances / variance


def _held_out_drops(np: Any, x: Any, y: Any) -> Any:
    """Every run's drops measured by a forest fitted without it (``FOLDS`` folds, at least two runs
    held out in each), shuffles of all folds side by side: (parameters, folds x REPEATS)."""
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.model_selection import KFold

    variance = float(np.var(y)) or 1.0  # every score equal: nothing to explain, drops all 0
    folds = KFold(n_splits=max(2, min(FOLDS, len(y) // 2)), shuffle=True, random_state=SEED)
    out = []
    for train, test in folds.split(x):
        forest = RandomForestRegressor(n_estimators=TREES, random_state=SEED).fit(x[train], y[train])
        # weighted by the fold's share of the runs, so the mean over all columns is the mean over runs
        out.append(_drops(np, forest, x[test], y[test], REPEATS, SEED, variance) * len(test) / len(y))
    return np.concatenate(out, axis=1) * len(out)


def _refit(np: Any, x: Any, y: Any, seed: int) -> list[float]:
    """The shares of a forest fitted to a bootstrap resample of the runs, scored on the runs the
    resample left out (fewer trees and shuffles: only the spread over refits is wanted)."""
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.Generator(np.random.PCG64(seed))
    idx = rng.integers(0, len(y), len(y))
    left = np.setdiff1d(np.arange(len(y)), idx)
    if len(left) < 2:  # a resample that left out fewer than two runs: score on all (rare from 5 runs)
        left = np.arange(len(y))
    forest = RandomForestRegressor(n_estimators=TREES // 2, random_state=seed).fit(x[idx], y[idx])
    variance = float(np.var(y)) or 1.0
    return _shares(_drops(np, forest, x[left], y[left], 3, seed, variance).mean(axis=1))
