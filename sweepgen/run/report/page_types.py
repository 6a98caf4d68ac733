"""The contract between report.html's data (sweepgen.run.report.page.build, in Python) and the page's
script (page.js) and template (page.html.j2): the keys each may use, as TypedDicts. A test reads the
script and the template and fails on a key these types do not define."""

from __future__ import annotations

from typing import Any, TypedDict


class Objective(TypedDict):
    label: str  # the value compared, as the page names it (e.g. final_eval_acc)
    mode: str  # max | min
    metric: str | None
    searched: bool  # a search's own objective (its metric's last logged value)


class PageRun(TypedDict):
    name: str
    variant: str
    group: str
    state: str  # finished | failed | pruned | ...
    values: dict[str, Any]  # varying path -> value
    diff: dict[str, Any]  # leaf path -> value where it differs from the base
    score: float | None
    note: str | None  # why there is no score, or why a search pruned it


class PageData(TypedDict):
    title: str
    subtitle: str
    counts: str
    objective: Objective
    notes: list[str]
    digits: int  # significant digits of a drawn number
    columns: list[str]  # the varying paths
    all_columns: list[str]  # every leaf path of any run
    base: dict[str, Any]  # the base config, flattened
    runs: list[PageRun]
    curve_metrics: list[str]
    curves: dict[str, list[dict[str, Any]]]  # metric -> one curve per group shown
    pruned_curves: dict[str, list[dict[str, Any]]]
    curves_note: str | None
    params: list[dict[str, Any]]  # importance.Param as a dict: path, log, categorical
    has_scores: bool
    importance: dict[str, Any] | None
    scatter: bool  # a sample sweep: scatter plots instead of lines
    stats: dict[str, Any] | None
    search: dict[str, Any] | None  # report_search.section of a search sweep
