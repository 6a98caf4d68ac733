"""What `run`, `status`, `list` and `report` show of a search: trials by state, the best trial, and
the best trial's config as a diff from the base (what the search changed, nothing else)."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepgen import paths
from sweepgen.compile import run_api
from sweepgen.compile.run_api import lock
from sweepgen.run.core.advice import for_search
from sweepgen.run.core.plan.tasks import NAMING_PATHS
from sweepgen.run.search import best_value
from sweepgen.run.search import study as search_study

if TYPE_CHECKING:  # annotations only: `status` and `report` of a grid load no pydantic (run_api)
    from sweepgen.compile.run_api import SearchBlock

_MAX_VALUES = 10_000  # per-seed values of one trial; a longer list is no study sweepgen wrote

STATE_WORDS = {
    "COMPLETE": "complete",
    "PRUNED": "pruned",
    "FAIL": "failed",
    "RUNNING": "running",
    "WAITING": "waiting",
}


@dataclass(frozen=True)
class TrialRow:
    number: int
    name: str
    state: str  # complete | pruned | failed | running
    value: float | None  # the told metric (complete), or the last reported one (pruned)
    params: dict[str, Any]
    reason: str | None
    steps: int  # the last step reported to the pruner
    started: datetime | None = None  # when the trial was asked (Optuna's datetime_start)
    ended: datetime | None = None  # when it was told (datetime_complete); None while it runs
    values: tuple[float, ...] = ()  # a complete trial's per-seed final values (with repeats)


@dataclass
class SearchView:
    block: SearchBlock
    rows: list[TrialRow] = field(default_factory=list)
    best: TrialRow | None = None
    cut_line: int | None = None  # the journal's cut last line, left out of this view (never healed)

    def count(self, state: str) -> int:
        return sum(r.state == state for r in self.rows)

    @property
    def complete(self) -> int:
        return self.count("complete")

    @property
    def finished(self) -> int:
        return sum(r.state in ("complete", "pruned", "failed") for r in self.rows)

    def lines(self, stopped: Collection[str] = ()) -> list[str]:
        """The summary; ``stopped``: trials open in the study that nothing runs (no controller, no
        live run: cancelled, or their controller gone before starting them), not said running."""
        b = self.block
        idle = sum(r.state == "running" and r.name in stopped for r in self.rows)
        out = [
            f"search: {self.finished}/{b.n} trials finished ({self.complete} complete, "
            f"{self.count('pruned')} pruned, {self.count('failed')} failed), "
            f"{self.count('running') - idle} running"
            + (f", {idle} open (stopped: none of their runs runs)" if idle else "")
            + f"; sampler {b.sampler}, pruning {b.prune.method if b.prune else 'none'}"
        ]
        if self.best is not None:
            tied = self.tied()
            out.append(
                f"best: {self.best.name}, {b.metric} = {self.best.value:.6g} ({b.mode}) at "
                + ", ".join(f"{k}={_num(v)}" for k, v in self.best.params.items())
                + (f"; tied with {', '.join(tied[:8])}{', ...' if len(tied) > 8 else ''}" if tied else "")
            )
            out.append(f"  ({self.trust()})")
        if self.cut_line is not None:
            out.append(cut_note(self.cut_line))
        return out

    def trust(self) -> str:
        """What the best value is worth: picked among every trial asked, it is optimistic."""
        assert self.best is not None
        return best_value.words(self.best.values, self.block.repeats, len(self.rows), self.block.metric)

    def tied(self) -> list[str]:
        """The other complete trials with exactly the best one's value: with a metric of few distinct
        values (accuracy over a few eval items) the search's "best" is often one of several, and
        naming one alone would claim it beat the others (the run table says ties the same way)."""
        best = self.best
        if best is None:
            return []
        return [
            r.name for r in self.rows if r.state == "complete" and r is not best and r.value == best.value
        ]


def summarize(study: Any, block: SearchBlock) -> SearchView:
    view = SearchView(block)
    view.rows.extend(_row(t) for t in study.get_trials(deepcopy=False))
    # an infinite value (a run that diverged: the controller tells it as it is) is no result to
    # rank, as the page's best-so-far line (``search_section.running_best``) skips it too
    complete = [
        r for r in view.rows if r.state == "complete" and r.value is not None and math.isfinite(r.value)
    ]
    if complete:
        pick = max if block.mode == "max" else min
        view.best = pick(complete, key=lambda r: r.value or 0.0)
    return view


def _row(t: Any) -> TrialRow:
    """An Optuna trial as the view shows it: its value, else (pruned, running) its last reported one."""
    state = STATE_WORDS.get(t.state.name, t.state.name.lower())
    last = max(t.intermediate_values) if t.intermediate_values else 0
    value = t.value if t.value is not None else (t.intermediate_values.get(last) if last else None)
    return TrialRow(
        t.number,
        run_api.trials.trial_name(t.number),
        state,
        value,
        dict(t.params),
        _reason(t.user_attrs.get("sweepgen_reason")),
        last,
        t.datetime_start,
        t.datetime_complete,
        _values(t.user_attrs.get(best_value.VALUES_ATTR)),
    )


def _values(recorded: Any) -> tuple[float, ...]:
    """The per-seed values as the study records them; nothing when they are not a list of finite
    numbers (the journal is data: whatever it holds is only shown, never trusted)."""
    if not isinstance(recorded, list) or len(recorded) > _MAX_VALUES:
        return ()
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in recorded):
        return ()
    values = tuple(float(v) for v in recorded)
    return values if all(math.isfinite(v) for v in values) else ()


def load(sweep_dir: Path, block: SearchBlock) -> SearchView:
    """The view of a search sweep's study; empty before its first `run`. The study is read without
    writing (`status` and `report` read shared folders and backups): a cut last line is left out
    and named in the view, never healed here."""
    study = search_study.load_study(sweep_dir)
    if study is None:
        return SearchView(block)
    view = summarize(study, block)
    view.cut_line = search_study.cut_last_line(study)
    return view


def cut_note(line: int) -> str:
    return (
        f"note: the study journal's line {line} is cut (a `sweepgen run` killed while appending it, or "
        "appending it now): left out here; the search's next `sweepgen run` removes it"
    )


def best_diff(sweep_dir: Path, view: SearchView) -> list[tuple[str, Any, Any]]:
    """The best trial's config against the base: (path, base value, trial value) where they differ,
    read from the lock (the best trial's first run when it has repeats). Paths that name or place a
    run (output_dir, run_name) differ for every trial by construction and are left out."""
    if view.best is None:
        return []
    current = lock.read(str(sweep_dir), str(sweep_dir))
    if current is None:
        return []
    names = {view.best.name, run_api.trials.trial_name(view.best.number, 0)}
    entry = next((f for f in current.files if f.variant in names), None)
    if entry is None:
        return []
    config = current.config(entry)
    return [
        (p, paths.get(current.base, p), paths.get(config, p))
        for p in sorted(paths.diff_paths(current.base, config))
        if p not in NAMING_PATHS
    ]


def _num(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else repr(value)


def _reason(told: Any) -> str | None:
    """A failed trial's reason as told, its grid advice said the search's way (a study told by an
    earlier sweepgen may still say `--rerun-failed`, which a search refuses: advice.py)."""
    return for_search(told) if isinstance(told, str) else None
