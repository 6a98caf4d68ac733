"""The group with the best mean, and what its interval is worth once it was picked as the best.

Each group's t interval covers that group's true mean 95% of the time; the group whose mean came out
best is, among groups alike, the one whose seeds happened to land high, so its interval read as the
winner's value covers far less (simulated, normal runs, every group alike: at 5 groups of 3 seeds
91%, at 20 groups of 5 seeds 75%, at 100 groups of 5 seeds 52%; benchmarks/RESULTS.md §28). The
statistics table and the page sort groups best first, inviting that reading. So a sentence names the
best group with the interval that holds for whichever group is picked: the t interval at level
1 - alpha / K for each of the K groups (Bonferroni), as a search's best trial gets
(sweepgen/run/search/best_value.py, whose interval this is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sweepgen.run.report import bounds, stats
from sweepgen.run.search import best_value


def sentence(statistics: stats.Statistics, values: Mapping[str, Sequence[float]]) -> list[str]:
    """The best group's simultaneous interval, in one sentence (none: fewer than two groups, or the
    best one has no interval of its own: one run, or runs that all gave one value)."""
    groups = statistics.groups
    if len(groups) < 2:
        return []
    best = (max if statistics.mode == "max" else min)(groups, key=lambda g: g.mean)
    held = best_value.interval(values.get(best.name, ()), len(groups))
    if best.low is None or held is None:
        return []
    low, high = bounds.clip(*held, statistics.methods.bounds)
    return [
        f"{best.name}{_ties(groups, best)} has the best mean of {len(groups)} groups; read as the best "
        f"one's value its {best_value.LEVEL:.0%} interval is optimistic (the winner's curse): "
        f"[{low:.6g}, {high:.6g}] holds for whichever of the {len(groups)} is picked (Bonferroni, each "
        f"at {1 - (1 - best_value.LEVEL) / len(groups):.4%})"
    ]


def _ties(groups: Sequence[stats.GroupStats], best: stats.GroupStats) -> str:
    tied = [g.name for g in groups if g.mean == best.mean and g is not best]
    return f" (tied with {', '.join(tied)})" if tied else ""
