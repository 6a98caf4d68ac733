"""The search part of `report --html`, pure: each trial of the study with its state, value,
parameters and the steps it trained; the best-so-far curve against trial number, cumulative training
steps and wall time; the best trial and its config diff from the base.

What counts for "best": complete trials only. A pruned trial's value is the last one it reported, at
the step its pruner stopped it: an early value of a run that did not finish, not a result (for a rising
metric it is low, for a noisy one it can be lucky). A failed trial has no value. So the best-so-far
line moves only at complete trials; pruned and failed trials are drawn and listed as what they are.
It is the rule of ``search_view.SearchView.best`` and of Optuna's ``study.best_trial``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sweepgen.compile.run_api import trial_name
from sweepgen.run.search.view import SearchView, TrialRow, cut_note

ENDED = ("complete", "pruned", "failed")
RULE = (
    "Best so far: the best {metric} ({mode} is better) among the complete trials up to each point. "
    "A pruned trial's value (the last it reported, at the step it was stopped) and a failed trial "
    "never count; they are marked apart."
)


@dataclass(frozen=True)
class Trial:
    number: int
    name: str
    state: str  # complete | pruned | failed | running | waiting
    value: float | None  # the told value (complete), the last reported one (pruned), else None
    params: Mapping[str, Any]
    reason: str | None  # why it failed or was pruned
    pruned_at: int | None  # the step its pruner stopped it at (None: it reported no step)
    steps: int  # training steps its runs logged, summed over repeats; 0 for a point never run
    ended_s: float | None  # seconds from the first trial's start to this one's end; None while it runs


def running_best(values: Sequence[float | None], mode: str) -> list[float | None]:
    """For each i the best of ``values[: i + 1]`` (``max`` or ``min`` by ``mode``), None before the
    first value; a None or non-finite value (no result) is skipped."""
    sign = 1.0 if mode == "max" else -1.0
    best: float | None = None
    out: list[float | None] = []
    for value in values:
        if value is not None and math.isfinite(value) and (best is None or sign * (value - best) > 0):
            best = value
        out.append(best)
    return out


def counted(trial: Trial) -> float | None:
    """The trial's value as a finished result for "best": complete trials only (see the module)."""
    return trial.value if trial.state == "complete" else None


def trials_of(view: SearchView, steps: Mapping[str, int], repeats: int) -> list[Trial]:
    """The view's trials; ``steps`` maps a run's variant name (``t0007``, ``t0007_r1``) to the last
    step it logged."""
    starts = [r.started for r in view.rows if r.started is not None]
    first = min(starts) if starts else None
    return [_trial(row, steps, repeats, first) for row in view.rows]


def _trial(row: TrialRow, steps: Mapping[str, int], repeats: int, first: datetime | None) -> Trial:
    """One row of the study as the report shows it: its steps are all its runs' (a trial with
    repeats ran each of them), and when it ended is counted from the first trial's start."""
    names = [row.name] + [trial_name(row.number, i) for i in range(repeats)]
    return Trial(
        row.number,
        row.name,
        row.state,
        row.value,
        dict(row.params),
        row.reason,
        row.steps if row.state == "pruned" and row.steps else None,  # 0: none reported
        sum(steps.get(n, 0) for n in names),
        _ended_s(row, first),
    )


def _ended_s(row: TrialRow, first: datetime | None) -> float | None:
    """When an ended trial ended, in seconds since the first trial started (None: not ended, or
    not known)."""
    if row.state not in ENDED or row.ended is None or first is None:
        return None
    return (row.ended - first).total_seconds()


def curves(trials: Sequence[Trial], mode: str) -> list[dict[str, Any]]:
    """Best so far along each x the data has: trial number (every trial, as Optuna's optimisation
    history plots it), then training steps used and wall time (the ended trials in the order they
    ended; steps count only trials that ended, so a running trial's steps join when it ends)."""
    by_number = sorted(trials, key=lambda t: t.number)
    out = [_curve("trial", "trial number", by_number, [t.number for t in by_number], mode)]
    ended = _in_end_order(trials)
    if any(t.steps for t in ended):
        used = list(itertools.accumulate(t.steps for t in ended))
        out.append(_curve("steps", "training steps used by the trials ended so far", ended, used, mode))
    if ended:
        times = [t.ended_s for t in ended]
        out.append(_curve("time", "wall time since the first trial started (s)", ended, times, mode))
    return out


def _in_end_order(trials: Sequence[Trial]) -> list[Trial]:
    """The ended trials with a known end, in the order they ended."""
    ended = [t for t in trials if t.state in ENDED and t.ended_s is not None]
    return sorted(ended, key=lambda t: (t.ended_s, t.number))


def _curve(key: str, label: str, trials: Sequence[Trial], x: Sequence[Any], mode: str) -> dict[str, Any]:
    return {
        "key": key,
        "label": label,
        "x": list(x),
        "best": running_best([counted(t) for t in trials], mode),
        "trials": [t.name for t in trials],
    }


def section(
    trials: Sequence[Trial],
    *,
    metric: str,
    mode: str,
    best: str | None,
    diff: Sequence[tuple[str, Any, Any]],
    tied: Sequence[str] = (),
    trust: str | None = None,
    cut_line: int | None = None,
) -> dict[str, Any]:
    """The page's search section: ``best`` names the best trial, ``diff`` its (path, base value,
    trial value) differences from the base, ``tied`` the complete trials with exactly its value,
    ``trust`` what its value is worth (search/best_value.py); ``cut_line``: the study journal's cut
    last line, left out of every number here (said on the page as on the terminal)."""
    by_name = {t.name: t for t in trials}
    return {
        "metric": metric,
        "mode": mode,
        "counts": _counts(trials),
        "rule": RULE.format(metric=metric, mode=mode),
        "params": sorted({p for t in trials for p in t.params}),
        "trials": [asdict(t) for t in sorted(trials, key=lambda t: t.number)],
        "curves": curves(trials, mode),
        "cut_note": None if cut_line is None else cut_note(cut_line),
        "best": None
        if best is None
        else {
            "name": best,
            "value": by_name[best].value,
            "params": dict(by_name[best].params),
            "diff": [list(d) for d in diff],
            "tied": list(tied),
            "trust": trust,
        },
    }


def _counts(trials: Sequence[Trial]) -> str:
    """How many trials, and how many in each state they are in."""
    states = {s: sum(t.state == s for t in trials) for s in ("complete", "pruned", "failed", "running")}
    return f"{len(trials)} trials: " + ", ".join(f"{n} {s}" for s, n in states.items() if n)
