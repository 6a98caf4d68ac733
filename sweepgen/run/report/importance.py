"""Parameter importance: how much of the metric's variation each varying parameter explains.

Method (named on the page and in importance.csv): a random forest (scikit-learn
``RandomForestRegressor``, ``TREES`` trees, ``random_state=SEED``) fitted to the scored runs, and each
parameter's permutation importance (``sklearn.inspection.permutation_importance``, ``REPEATS``
repeats, the same seed): the mean drop in the forest's R² when that parameter's column is shuffled,
clipped at 0 and shown as a share of the total. Chosen over fANOVA through optuna.importance because
the report needs no Optuna study and scikit-learn is the lighter dependency; permutation importance
over impurity importance because impurity favours parameters with many distinct values. Categorical
values are coded by their sorted labels; log-scaled parameters enter as log10.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sweepgen.errors import UserError

TREES = 100
REPEATS = 10
SEED = 0
MIN_RUNS = 5  # fewer scored runs than this: no forest is fitted (it would explain noise)
METHOD = (
    f"Random forest (scikit-learn RandomForestRegressor, {TREES} trees, random_state={SEED}); importance = "
    f"permutation importance (mean drop in R² over {REPEATS} shuffles of the parameter), "
    "as a share of the total."
)
HINT = "install the plot extra: `pip install 'sweepgen[plot]'` (or `pip install scikit-learn`)"


@dataclass(frozen=True)
class Param:
    path: str
    log: bool
    categorical: bool


@dataclass(frozen=True)
class Importance:
    rows: tuple[tuple[str, float, float, float], ...]  # (path, share, mean R² drop, its std), largest first
    method: str = METHOD

    def csv_text(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["parameter", "importance_share", "r2_drop_mean", "r2_drop_std", "method"])
        for path, share, mean, std in self.rows:
            writer.writerow([path, f"{share:.6g}", f"{mean:.6g}", f"{std:.6g}", self.method])
        return buf.getvalue()


def params_of(values: Sequence[Mapping[str, Any]], paths: Sequence[str]) -> list[Param]:
    """Each path as an axis: categorical unless every value is a number; log when all are positive
    and span at least a factor of 100."""
    out = []
    for path in paths:
        column: list[Any] = [v.get(path) for v in values]
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in column)
        finite = numeric and all(math.isfinite(x) for x in column)
        log = bool(finite and min(column) > 0 and max(column) / min(column) >= 100)
        out.append(Param(path, log, not finite))
    return out


def compute(
    values: Sequence[Mapping[str, Any]], scores: Sequence[float], params: Sequence[Param]
) -> Importance | None:
    """Importance of ``params`` for ``scores`` (one entry per scored run), or None with too few runs."""
    if len(scores) < MIN_RUNS or not params:
        return None
    try:
        import numpy as np
        from sklearn.ensemble import RandomForestRegressor
        from sklearn.inspection import permutation_importance
    except ImportError:
        raise UserError(
            "parameter importance needs scikit-learn, which is not installed", hint=HINT
        ) from None
    columns: list[list[float]] = []
    for p in params:
        raw: list[Any] = [v.get(p.path) for v in values]
        if p.categorical:
            labels = sorted({repr(x) for x in raw})
            columns.append([float(labels.index(repr(x))) for x in raw])
        else:
            columns.append([math.log10(x) if p.log else float(x) for x in raw])
    x = np.asarray(columns, dtype=float).T
    y = np.asarray(scores, dtype=float)
    forest = RandomForestRegressor(n_estimators=TREES, random_state=SEED).fit(x, y)
    result = permutation_importance(forest, x, y, n_repeats=REPEATS, random_state=SEED)
    drops = [max(0.0, float(m)) for m in result.importances_mean]
    total = sum(drops)
    rows = [
        (p.path, (d / total) if total > 0 else 0.0, float(m), float(s))
        for p, d, m, s in zip(params, drops, result.importances_mean, result.importances_std)
    ]
    return Importance(tuple(sorted(rows, key=lambda r: -r[1])))
