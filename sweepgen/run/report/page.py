"""The data of the HTML report page (pure): runs, seed-group curves, parameters, importance,
statistics, as one JSON-able mapping that report_html renders and the page's script draws.

Bounded so 1,000 runs x 1,000 steps stay a page that opens in seconds: curves for at most
``MAX_CURVE_GROUPS`` groups (the best by the objective; the page says how many are left out), each
curve thinned to at most ``MAX_POINTS`` evenly spaced logged steps (first and last kept), and at most
``MAX_METRICS`` metrics to choose from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from operator import itemgetter
from typing import Any

from sweepgen.run.report import undecided
from sweepgen.run.report.collect import unshared_note
from sweepgen.run.report.groups import Group
from sweepgen.run.report.page_types import Objective, PageData, PageRun
from sweepgen.run.report.stats.importance import Importance, Param
from sweepgen.run.report.stats.verdicts import Statistics, bootstrap_coverage

MAX_CURVE_GROUPS = 30
MAX_POINTS = 300
MAX_METRICS = 8
MAX_NOTED = 5  # groups named in the note on curves drawn at fewer steps than logged, per metric
MAX_PRUNED_CURVES = 100  # a search's pruned runs, one line each: the latest trials' (the page says so)


def build(
    *,
    title: str,
    objective: Mapping[str, Any],  # label, mode, metric
    runs: Sequence[Mapping[str, Any]],  # name, variant, state, values, diff, score, note, series,
    # and pruned_at: the step a search's pruner stopped the run at (None: not pruned, or not known)
    groups: Sequence[Group],
    columns: Sequence[str],
    base: Mapping[str, Any],  # the base config, flattened to leaf paths
    curve_metrics: Sequence[str],
    params: Sequence[Param],
    importance: Importance | None,
    importance_csv: str,
    statistics: Statistics | None,
    notes: Sequence[str],
    digits: int,
    sampled: bool,
    search: Mapping[str, Any] | None = None,  # report_search.section of a search sweep
) -> PageData:
    curves, pruned_curves, shown, curves_note = _curves(objective, runs, groups, curve_metrics)
    all_columns = sorted(set(base) | set(columns) | {p for r in runs for p in r["diff"]})
    return {
        "title": title,
        "subtitle": _subtitle(objective),
        "counts": _counts(runs),
        "objective": Objective(
            label=str(objective["label"]),
            mode=str(objective["mode"]),
            metric=objective.get("metric"),
            searched=bool(objective.get("searched")),
        ),
        "notes": list(notes),
        "digits": digits,
        "columns": list(columns),
        "all_columns": all_columns,
        "base": dict(base),
        "runs": _page_runs(runs, groups),
        "curve_metrics": shown,
        "curves": curves,
        "pruned_curves": pruned_curves,
        "curves_note": curves_note,
        "params": [asdict(p) for p in params],
        "has_scores": any(r["score"] is not None and r["state"] == "finished" for r in runs),
        "importance": None if importance is None else _importance(importance, importance_csv),
        "scatter": sampled,
        "stats": None if statistics is None else _stats(statistics),
        "search": None if search is None else dict(search),
    }


def _curves(
    objective: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    groups: Sequence[Group],
    curve_metrics: Sequence[str],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]], list[str], str | None]:
    """The groups' curves and the pruned runs' of each metric, the metrics that have any, and the
    note on what the curves leave out (None: nothing)."""
    curves, curves_note = _group_curves(objective, runs, groups, curve_metrics)
    pruned_curves, pruned_note = _pruned_curves(runs, curve_metrics)
    note = "; ".join(n for n in (curves_note, pruned_note) if n) or None
    shown = [m for m in curve_metrics if curves[m] or pruned_curves[m]]
    return curves, pruned_curves, shown, note


def _counts(runs: Sequence[Mapping[str, Any]]) -> str:
    """How many runs, and how many in each state."""
    states = Counter(str(r["state"]) for r in runs)
    return f"{len(runs)} runs: " + ", ".join(f"{n} {state}" for state, n in sorted(states.items()))


def _subtitle(objective: Mapping[str, Any]) -> str:
    """The objective and its direction; for a search's metric, how the search takes its value."""
    subtitle = f"objective: {objective['label']} ({objective['mode']} is better)"
    if objective.get("searched"):
        subtitle += "; the search's metric: each run's last logged value, as the search takes it"
    return subtitle


def _group_curves(
    objective: Mapping[str, Any],
    runs: Sequence[Mapping[str, Any]],
    groups: Sequence[Group],
    curve_metrics: Sequence[str],
) -> tuple[dict[str, list[dict[str, Any]]], str | None]:
    """Each metric's curves of the best groups (at most MAX_CURVE_GROUPS), and a note when some
    groups are left out."""
    ordered = best_first(groups, {r["name"]: r["score"] for r in runs}, str(objective["mode"]))
    shown = ordered[:MAX_CURVE_GROUPS]
    drawn = _drawn(shown, {r["name"]: r for r in runs}, curve_metrics)
    notes = [n for m in curve_metrics for n in _unshared(m, drawn[m])]
    if len(ordered) > len(shown):
        notes.insert(
            0,
            f"curves of the {len(shown)} best groups by {objective['label']} of {len(ordered)} "
            "(every run is in the table and in parallel coordinates)",
        )
    # a group whose runs share no logged step has no line: said in the note, never drawn empty
    return {m: _with_steps(drawn[m]) for m in curve_metrics}, "; ".join(notes) or None


def _drawn(
    shown: Sequence[Group], by_name: Mapping[str, Mapping[str, Any]], metrics: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """Each metric's curve of each shown group whose runs logged it."""
    return {m: [c for g in shown if (c := _curve(g, by_name, m)) is not None] for m in metrics}


def _with_steps(curves: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(filter(itemgetter("steps"), curves))


def _unshared(metric: str, drawn: Sequence[Mapping[str, Any]]) -> list[str]:
    """The notes of a metric's curves drawn at fewer steps than their runs logged, or not at all
    (the runs share no logged step: collect.unshared_note), at most MAX_NOTED groups named."""
    notes = [n for c in drawn if (n := c["note"]) is not None]
    if not notes:
        return []
    more = f" (and {len(notes) - MAX_NOTED} more groups)" if len(notes) > MAX_NOTED else ""
    return [f"{metric}: " + "; ".join(notes[:MAX_NOTED]) + more]


def _page_runs(runs: Sequence[Mapping[str, Any]], groups: Sequence[Group]) -> list[PageRun]:
    """The table's rows, each run with its seed group's name."""
    group_of = {run: g.name for g in groups for run in g.members}
    return [
        PageRun(
            name=r["name"],
            variant=r["variant"],
            group=group_of.get(r["name"], ""),
            state=r["state"],
            values=dict(r["values"]),
            diff=dict(r["diff"]),
            score=r["score"],
            note=r["note"],
        )
        for r in runs
    ]


def _importance(importance: Importance, csv_text: str) -> dict[str, Any]:
    """The importance section: shares with their intervals over refits, and the held-out R²."""
    return {
        "method": importance.method,
        "csv": csv_text,
        "rows": [[r.path, r.share, r.low, r.high] for r in importance.rows],
        "held_out_r2": importance.held_out_r2,
        "runs": importance.runs,
        "note": importance.note,
    }


def best_first(groups: Sequence[Group], scores: Mapping[str, float | None], mode: str) -> list[Group]:
    def key(g: Group) -> float:
        vals = [s for r in g.members if (s := scores.get(r)) is not None]
        if not vals:
            return float("inf")
        mean = sum(vals) / len(vals)
        return -mean if mode == "max" else mean

    return sorted(groups, key=key)


def _curve(group: Group, runs: Mapping[str, Mapping[str, Any]], metric: str) -> dict[str, Any] | None:
    series = [dict(s) for r in group.members if (s := runs[r]["series"].get(metric))]
    if not series:
        return None
    shared = set.intersection(*(set(s) for s in series))
    steps = _thinned(sorted(shared))
    values = [[s[step] for s in series] for step in steps]
    return {
        "group": group.name,
        "n": len(series),
        "steps": steps,
        **_band(values),
        "note": unshared_note(group.name, [len(s) for s in series], len(shared)),
    }


def _band(values: Sequence[Sequence[float]]) -> dict[str, list[float]]:
    """Each step's mean over the group's runs and their range: the page draws the range as a band
    (seeds are few: a standard deviation would claim a spread they cannot show)."""
    return {
        "mean": [sum(v) / len(v) for v in values],
        "low": [min(v) for v in values],
        "high": [max(v) for v in values],
    }


def _pruned_curves(
    runs: Sequence[Mapping[str, Any]], metrics: Sequence[str]
) -> tuple[dict[str, list[dict[str, Any]]], str | None]:
    """Each pruned run's curve per metric (the latest MAX_PRUNED_CURVES runs), and the note saying
    how many are left out."""
    pruned = [r for r in runs if r["state"] == "pruned"]
    shown = pruned[-MAX_PRUNED_CURVES:]
    note = None
    if len(shown) < len(pruned):
        note = f"curves of the last {len(shown)} pruned runs of {len(pruned)}"
    return {m: [c for r in shown if (c := _stopped_curve(r, m)) is not None] for m in metrics}, note


def _stopped_curve(run: Mapping[str, Any], metric: str) -> dict[str, Any] | None:
    """A pruned run's own curve, and where its pruner stopped it: the step the pruner decided at
    when that step was logged, else the run's last logged step (it may log a step or two more
    before the stop reaches it)."""
    series = dict(run["series"].get(metric) or ())
    if not series:
        return None
    steps = _thinned(sorted(series))
    stop = run.get("pruned_at")
    stop = stop if stop in series else steps[-1]
    return {
        "run": run["name"],
        "steps": steps,
        "values": [series[s] for s in steps],
        "stop": [stop, series[stop]],
    }


def _thinned(steps: list[int]) -> list[int]:
    """At most MAX_POINTS evenly spaced steps, the first and the last kept."""
    if len(steps) <= MAX_POINTS:
        return steps
    last = len(steps) - 1
    return [steps[round(i * last / (MAX_POINTS - 1))] for i in range(MAX_POINTS)]


def _stats(statistics: Statistics) -> dict[str, Any]:
    m = statistics.methods.describe()
    method = (
        f"Group intervals: {m['mean_interval']}. Differences: {m['diff_interval']} (Holm's step-down "
        f"tests the r-th smallest p at alpha/(m-r); each interval is drawn at the level its comparison "
        f"was tested at). Test: {m['test']}, Holm-adjusted, alpha {m['alpha']}; verdict better/worse "
        f"({statistics.mode} is better) exactly when the interval excludes zero"
        + (
            "."
            if statistics.methods.test == "welch" and statistics.methods.interval == "t"
            else " for the test; the interval comes from another method and can disagree."
        )
    )
    covers = bootstrap_coverage(statistics)
    return {
        "method": method if covers is None else f"{method} Note: {covers}.",
        "methods": m,
        "forest": forest(statistics),
        "verdicts": dict(Counter(c.verdict for c in statistics.comparisons)),
        "tied_best": tied_best(statistics),
        "baseline": statistics.baseline,
        "groups": [asdict(g) for g in statistics.groups],
        "comparisons": [asdict(c) for c in statistics.comparisons],
        # the terminal's own sentences (why undecided, seeds needed), not the script's rewording of them
        "undecided": undecided.sentences(statistics),
    }


def forest(statistics: Statistics) -> list[dict[str, Any]]:
    """The forest plot's rows, sorted by effect (best first in the objective's direction): each
    group's difference from the baseline with its interval and verdict; without a baseline, each
    group's mean with its interval."""
    sign = 1 if statistics.mode == "max" else -1
    if statistics.baseline is None:
        rows = [
            {"name": g.name, "value": g.mean, "low": g.low, "high": g.high, "n": g.n, "verdict": None}
            for g in statistics.groups
        ]
    else:
        n_of = {g.name: g.n for g in statistics.groups}
        rows = [
            {
                "name": c.name,
                "value": c.diff,
                "low": c.low,
                "high": c.high,
                "n": n_of.get(c.name),
                "verdict": c.verdict,
                "level": c.level,
            }
            for c in statistics.comparisons
        ]
    return sorted(rows, key=lambda r: (-sign * r["value"], r["name"]))


def tied_best(statistics: Statistics) -> list[str]:
    """Every group whose mean equals the best mean: a tie is shown as a tie, never as one "best"."""
    if not statistics.groups:
        return []
    pick = max if statistics.mode == "max" else min
    best = pick(g.mean for g in statistics.groups)
    return [g.name for g in statistics.groups if g.mean == best]
