"""What a seed interval of an accuracy over few eval items leaves out: the items.

An eval accuracy over m fixed items (20 prompts) varies across seeds by the training's noise and by
each run's luck on those items; every interval and test the report draws is over seeds, so it holds
both. It does not hold the draw of the m items themselves from the task: every run answered the same
ones, so a hard or easy draw moves every group alike and no seed shows it. Read as the accuracy on
the task (what "eval_acc 0.70 [0.66, 0.74]" looks like it says), a 95% mean interval covered it in
79% of sweeps at 5 seeds and 89% at 3 (items of varying difficulty, Beta(1.4, 0.6), at any m:
between-seed and item noise both shrink as 1/m; benchmarks/RESULTS.md §33). The report cannot tell
whether the items were fixed (an RL environment may draw new episodes each eval, whose noise the
seeds then hold), so the sentence says "where every run scored the same items", with the most the
draw of m items alone can move a mean (the binomial bound: items either always or never solved).

Said only for a proportion (sweepgen.direction) whose every value is a count out of at most
``FEW_ITEMS`` items (outliers.items: the fewest m that fits, so "or a multiple"); past that the
bound is under 0.07 and values logged with 3-4 decimals would pass for counts of a continuous share.
With ``--at last:K`` the values given are each logged value averaged (make._scored): the mean of K
evals of the same m items is a count out of K x m, and no more items than m.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from sweepgen.run.report.stats import outliers

FEW_ITEMS = 200
Z95 = 1.959963984540054  # the normal's 97.5th percentile


def sentence(
    metric: str | None, values: Mapping[str, Sequence[float]], bounds: tuple[float, float] | None
) -> list[str]:
    """The sentence for a proportion over few items (``values``: each group's runs' values), or none."""
    every = [v for group in values.values() for v in group]
    if bounds != (0.0, 1.0) or len(every) < 2:
        return []
    m = outliers.items(every)
    if m is None or m < 2 or m > FEW_ITEMS:  # every value 0 or 1: of how many items, nothing says
        return []
    p = math.fsum(every) / len(every)
    share = min(max(p, 0.5 / m), 1 - 0.5 / m)  # every run at 0 or 1: half an item's worth, never ±0
    reach = Z95 * math.sqrt(share * (1 - share) / m)
    return [
        f"`{metric}` is a count out of {m} items (or a multiple) in every run: where every run scored the "
        "same items, the intervals and tests are over seeds on those items, not over the task they were "
        f"drawn from: the draw of {m} items alone can move a mean near {p:.2g} by up to ±{reach:.2g} "
        "(95%), which no interval here holds (a 95% mean interval at 5 seeds covered a task's accuracy "
        "in 79% of simulated sweeps); evaluate on more items before claiming more than these items show"
    ]
