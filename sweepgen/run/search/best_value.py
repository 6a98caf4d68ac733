"""How far a search's best value can be trusted. The best trial is picked as the best of several
noisy values, so its own value is optimistic (the winner's curse): an interval computed for that
trial alone, as if it had been chosen in advance, covers its true value less often than it says.

With ``repeats`` >= 2 the per-seed values give a t interval for each trial's mean; taken at level
1 - alpha / K for all K trials of the study (Bonferroni), the K intervals hold together with
probability >= 1 - alpha, so the one of whichever trial is picked holds too, however it was picked.
K counts every trial asked (a pruned or running trial could have been the best had it completed),
which keeps the union bound honest. With one seed per trial there is no interval to give: the
line says so and how to get one."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from sweepgen import direction

LEVEL = 0.95
# the study attribute holding a complete trial's per-seed final values (with repeats): written by
# the controller, read by the view, allowed by the journal's check (journal_file.py)
VALUES_ATTR = "sweepgen_values"


def interval(values: Sequence[float], family: int, level: float = LEVEL) -> tuple[float, float] | None:
    """The simultaneous ``level`` t interval for the mean of ``values`` (one trial's per-seed final
    values) among ``family`` trials; None with fewer than two values, a non-finite one, or no spread
    (two equal seeds say nothing of the seed noise)."""
    if len(values) < 2 or not all(math.isfinite(v) for v in values):
        return None
    spread = statistics.stdev(values)
    if not spread > 0:
        return None
    from scipy import stats  # lazy: only `status` of a search with repeats needs it

    quantile = float(stats.t.ppf(1.0 - (1.0 - level) / (2 * max(family, 1)), len(values) - 1))
    half = quantile * spread / math.sqrt(len(values))
    mean = statistics.fmean(values)
    return mean - half, mean + half


def words(values: Sequence[float], repeats: int, family: int, metric: str | None = None) -> str:
    """What the best value is worth, in the words `status` and `report` print after it; the interval
    of a proportion (``metric`` named so, its values in [0, 1]) kept inside [0, 1], said so."""
    picked = f"the best of {family} trial(s)"
    if repeats < 2:
        return (
            f"1 seed, {picked}: optimistic, and no interval without repeats (set `repeats:` in the "
            "search block, or re-run this trial over seeds, to know its value)"
        )
    bounds = interval(values, family) if len(values) == repeats else None
    if bounds is None:
        why = "its seeds gave one value" if len(set(values)) == 1 else "its per-seed values are not recorded"
        return f"mean of {repeats} seeds, {picked}: optimistic, and no interval ({why})"
    (low, high), within = _kept(bounds, metric, values)
    return (
        f"mean of {repeats} seeds; {LEVEL:.0%} interval [{low:.6g}, {high:.6g}]{within}, wide "
        f"enough for all {family} trials at once, so it holds for the one picked as best" + _curse(family)
    )


def _curse(family: int) -> str:
    """The mean itself, beside the interval that holds for it: the best of ``family`` trials is the
    one whose seeds landed high, so its mean is biased toward better (its own 95% t interval, read
    as the best's, covered 83-94% at 3-10 trials of 2-5 seeds alike: benchmarks/RESULTS.md, round
    fourteen). Nothing to say of one trial: nothing was picked."""
    if family < 2:
        return ""
    return (
        f"; the mean itself is optimistic (the winner's curse: the best of {family} trials is the one "
        "whose seeds landed high)"
    )


def _kept(
    bounds: tuple[float, float], metric: str | None, values: Sequence[float]
) -> tuple[tuple[float, float], str]:
    """The interval inside [0, 1] for a proportion (the true mean lies there: what lies past it
    covers nothing), and the words that say so; any other metric's as it is."""
    unit = direction.proportion_range(metric, values)
    if unit is None:
        return bounds, ""
    kept = (max(bounds[0], unit[0]), min(bounds[1], unit[1]))
    return kept, f" (within [0, 1]: `{metric}` is a proportion)"
