"""statistics.csv and statistics.json: one row per seed group, each row naming the metric, the value
compared (final, best, mean of the last K), the direction and the methods, so that a file read
alone, or beside a report of another metric, cannot be mistaken for something it is not."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from sweepgen import escape
from sweepgen.formats import jsonfloat
from sweepgen.run.report.stats import verdicts as stats


class StatsRow(TypedDict):
    """One row of statistics.csv / .json: a seed group, and against the baseline its comparison."""

    metric: str
    value: str  # the value compared: final, best over the run, mean of the last K
    direction: str  # "max is better" | "min is better"
    group: str
    n: int
    mean: float
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    interval: str
    baseline: str | None
    diff: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    diff_ci_level: float | None
    test: str | None
    p: float | None
    p_holm: float | None
    verdict: str | None  # better | worse | no evidence | cannot decide | baseline
    reason: str | None
    seeds_needed: int | None  # the plug-in count: at the spread the seeds show
    # the count where the true spread is at the top of its 80% interval (None beside a seeds_needed:
    # more than 1,000): the plug-in count from 2-5 seeds' spread fell short of 80% power in half of
    # simulated comparisons (benchmarks/RESULTS.md §33), so a file read alone has both
    seeds_needed_spread_top: int | None
    detectable_diff: float | None
    runs_lost: int  # the group's runs without a value (failed, pruned, metric missing): not in n
    lost: str | None  # which, and why ("x_seed2 (failed); ..."), report/dropout.py
    outlier: str | None  # a run far from the group's others, "name (value)" (report/outliers.py)


COLUMNS = tuple(StatsRow.__annotations__)


_Versus = tuple[
    float | None,  # diff
    float | None,  # its interval's low
    float | None,  # and high
    float | None,  # the interval's level
    str | None,  # test
    float | None,  # p
    float | None,  # p (Holm)
    str | None,  # reason
    int | None,  # seeds needed
    int | None,  # seeds needed where the spread is at the top of its interval
    float | None,  # detectable difference
]


def _versus(c: stats.Comparison | None) -> _Versus:
    """A group's comparison with the baseline, as the row's columns; all None for the baseline and
    without one."""
    if c is None:
        return None, None, None, None, None, None, None, None, None, None, None
    needed = (c.seeds_needed, c.seeds_needed_high)
    return (c.diff, c.low, c.high, c.level, c.test, c.p, c.p_holm, c.reason, *needed, c.detectable)


@dataclass(frozen=True)
class Caveats:
    """What a group's numbers do not show: its runs without a value (dropout.lost_runs) and a run far
    from its others (outliers.scan), each by group name."""

    lost: Mapping[str, Sequence[str]] = field(default_factory=dict)
    outliers: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()  # the sentences printed after the table (make.Outcome.caveats)


def rows(
    statistics: stats.Statistics, context: Mapping[str, str], caveats: Caveats | None = None
) -> list[StatsRow]:
    """One row per group: its mean and interval, and against the baseline the comparison.
    ``context``: metric, value and direction, as the report names them."""
    caveats = caveats or Caveats()
    by = {c.name: c for c in statistics.comparisons}
    out = []
    for g in statistics.groups:
        gone = caveats.lost.get(g.name, ())
        c = by.get(g.name)
        verdict = c.verdict if c else ("baseline" if g.name == statistics.baseline else None)
        diff, low, high, level, test, p, p_holm, reason, needed, needed_top, detectable = _versus(c)
        out.append(
            StatsRow(
                metric=context["metric"],
                value=context["value"],
                direction=_direction(statistics, context),
                group=g.name,
                n=g.n,
                mean=g.mean,
                sd=g.sd,
                ci_low=g.low,
                ci_high=g.high,
                interval=g.interval,
                baseline=statistics.baseline,
                diff=diff,
                diff_ci_low=low,
                diff_ci_high=high,
                diff_ci_level=level,
                test=test,
                p=p,
                p_holm=p_holm,
                verdict=verdict,
                reason=reason,
                seeds_needed=needed,
                seeds_needed_spread_top=needed_top,
                detectable_diff=detectable,
                runs_lost=len(gone),
                lost="; ".join(gone) if gone else None,
                outlier=caveats.outliers.get(g.name),
            )
        )
    return out


def csv_text(statistics: stats.Statistics, context: Mapping[str, str], caveats: Caveats | None = None) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    # group and metric names: data, never a formula (escape.csv_cell)
    for row in rows(statistics, context, caveats):
        writer.writerow({k: repr(v) if isinstance(v, float) else escape.csv_cell(v) for k, v in row.items()})
    return buf.getvalue()


def json_text(
    statistics: stats.Statistics, context: Mapping[str, str], caveats: Caveats | None = None
) -> str:
    body = {
        "metric": context["metric"],
        "value": context["value"],
        "direction": _direction(statistics, context),
        "mode": statistics.mode,
        **({"chosen": context["chosen"]} if context.get("chosen") else {}),
        "baseline": statistics.baseline,
        "methods": statistics.methods.describe(),
        "notes": list((caveats or Caveats()).notes),  # lost runs, outliers, shared seeds, the best group
        "groups": jsonfloat.tagged(
            rows(statistics, context, caveats)
        ),  # NaN/inf as every JSON file writes them
    }
    return json.dumps(body, indent=2, allow_nan=False) + "\n"


def _direction(statistics: stats.Statistics, context: Mapping[str, str]) -> str:
    """Which way is better, and that sweepgen chose it where no --metric did (make.CHOSEN)."""
    return f"{statistics.mode} is better" + (context.get("chosen_suffix") or "")
