"""The range a proportion's mean lies in, and intervals kept inside it.

A t interval of the mean of accuracies near 1 runs past 1 at the seeds people run: measured on
binomial accuracies (20-100 items, true accuracy 0.9-0.99), the upper end passes 1 in 17-100% of
groups at 2-3 seeds and in up to 88% at 5 (benchmarks/RESULTS.md, "proportions"), while its coverage
stays at or above 95%. "[0.93, 1.04]" for an accuracy states a value the metric cannot take; the
true mean lies in [0, 1], so intersecting the interval with [0, 1] (and a difference's with
[-1, 1]) keeps every true value it covered, and so its coverage and verdict, and drops only the
impossible part. A metric is taken for a proportion only when a word of its name says so and every
run's value lies in [0, 1]; the statistics' title says the intervals are clipped.
"""

from __future__ import annotations

from sweepgen import direction

# which metric is a proportion, by its name and values: direction.proportion_range (a search's best
# line, below report in the layers, asks it too)
of_metric = direction.proportion_range


def clip(
    low: float | None, high: float | None, bounds: tuple[float, float] | None
) -> tuple[float | None, float | None]:
    """The interval (low, high) intersected with ``bounds`` (None: as it is)."""
    if bounds is None or low is None or high is None:  # no bound, or no interval
        return low, high
    return max(low, bounds[0]), min(high, bounds[1])


def said(clipped: bool, bounds: tuple[float, float] | None) -> str:
    """What an interval's label gains where ``bounds`` cut it (nothing where they did not)."""
    if not clipped or bounds is None:
        return ""
    return f", clipped to [{bounds[0]:g}, {bounds[1]:g}]"


def of_difference(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    """The range a difference of two means in ``bounds`` lies in."""
    if bounds is None:
        return None
    return bounds[0] - bounds[1], bounds[1] - bounds[0]
