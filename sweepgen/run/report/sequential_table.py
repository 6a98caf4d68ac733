"""The statistics table of a sweep whose seeds `run --until-decided` added: its verdicts are the
sequential test's.

The table's own test is a fixed-n one: it holds its level when the seeds were fixed before the
runs. Under `--until-decided` they were not: an arm stops getting seeds once its look crosses, the
baseline goes on, and what each group ran depends on the values seen. A fixed-n verdict on those
seeds has no error rate it is known to keep (4.25-5.2% of null sweeps at alpha 0.05 where the looks
called 0.9-2%: benchmarks/RESULTS.md §28), and it can call an arm the sequential test left open, or
leave open one it called, beside the lines that say the opposite. The sequential test's verdict is
the one whose error rate is proven (sweepgen.run.report.sequential: at most alpha over every look and
comparison), so each arm the record holds takes it: ``better`` / ``worse`` where it crossed, ``no
evidence`` where it did not. The p-values and difference intervals stay the fixed-n ones, said so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sweepgen.run.report import sequential, stats

FIXED_N = ("better", "worse", "no evidence")  # a "cannot decide" says why the seeds cannot: kept


def adjusted(statistics: stats.Statistics, decided: Mapping[str, str]) -> tuple[stats.Statistics, list[str]]:
    """``statistics`` with each arm in ``decided`` (its sequential verdict) given that verdict, and
    the sentence saying so and naming the arms whose fixed-n verdict differed."""
    changed: list[str] = []
    comparisons = []
    for c in statistics.comparisons:
        looks = decided.get(c.name)
        if looks is None or c.verdict not in FIXED_N:
            comparisons.append(c)
            continue
        word = "no evidence" if looks == sequential.OPEN else looks
        if word != c.verdict:
            changed.append(f"{c.name} (fixed-n: {c.verdict})")
        comparisons.append(replace(c, verdict=word))
    if not any(c.name in decided for c in comparisons):  # a record of other arms: nothing to say
        return statistics, []
    return replace(statistics, comparisons=tuple(comparisons)), [_sentence(changed)]


def _sentence(changed: list[str]) -> str:
    out = (
        "the verdicts are the sequential test's (run --until-decided): a fixed-n verdict on seeds "
        "added until a look crossed keeps no known error rate; the p-values and difference intervals "
        "are fixed-n and do not account for the looks (an interval's coverage after stopping may be "
        "below its level)"
    )
    if changed:
        out += f"; the fixed-n test alone would have said otherwise for {', '.join(changed)}"
    return out
