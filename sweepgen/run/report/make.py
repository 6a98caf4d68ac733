"""`sweepgen report` as one function: read the runs, group seeds, compare, build every output, and
write the outputs only when all of them were built (each file replaced atomically).

``make(Request) -> Outcome``; the CLI parses arguments, calls it, prints the outcome and returns its
exit code. Nothing here prints.
"""

from __future__ import annotations

import csv
import difflib
import importlib.util
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepgen import jsonfloat
from sweepgen.errors import Location, UserError
from sweepgen.run.report import collect as rep
from sweepgen.run.report import groups as grp
from sweepgen.run.report import html as report_html
from sweepgen.run.report import importance as report_importance
from sweepgen.run.report import page as report_page
from sweepgen.run.report import stats
from sweepgen.run.report.html import PLOT_HINT as PLOT_EXTRA
from sweepgen.safefs import write_atomic

TRUNCATION_WARNING = 0.5  # the share of cut completions above which a reward is mostly about cut text
STATS_COLUMNS = (
    "group",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "baseline",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "test",
    "p",
    "p_holm",
    "verdict",
)


@dataclass(frozen=True)
class Request:
    directory: Path
    out_dir: Path | None = None
    metric: str | None = None
    mode: str = "max"
    mode_given: bool = False
    at: str | None = None
    compare: str | None = None
    seeds: str = "all"  # all | tune | test
    plot: bool = True
    html: bool = False
    search: Any = None  # the spec of a search sweep: the page gets its trials
    search_dir: Path | None = None  # that search's sweep folder (DIR, or the one its runs name)
    search_note: str | None = None  # why a search's section cannot be shown (never left out silently)


@dataclass
class Outcome:
    report: rep.Report
    groups: list[grp.Group]
    plan: grp.SeedPlan
    statistics: stats.Statistics | None
    best: rep.RunRecord | None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: list[tuple[str, Path]] = field(default_factory=list)  # (what, path)
    exit_code: int = 0

    @property
    def rows(self) -> list[dict[str, Any]]:
        return rep.rows(self.report)

    def stats_rows(self) -> list[dict[str, Any]]:
        return stats_rows(self.statistics) if self.statistics is not None else []


def make(request: Request) -> Outcome:
    """Everything `sweepgen report` shows and writes, for ``request``."""
    objective = _objective(request)
    report = rep.collect(request.directory, objective)
    _require_logged(report, request)
    plan = grp.seed_plan(report.block, report.varying)
    members = [
        grp.Member(r.name, r.variant, r.values)
        for r in report.finished
        if r.value is not None or not request.metric
    ]
    chosen = grp.select_seeds(members, plan, request.seeds)
    groups = grp.group(chosen, plan, report.varying, report.sweep or request.directory.name)
    warnings, notes = _messages(report, plan, request)
    missing = [m for m in ("scipy", "matplotlib") if importlib.util.find_spec(m) is None]
    if request.compare is not None and "scipy" in missing:
        raise UserError("--compare needs scipy, which is not installed", hint=PLOT_EXTRA)
    if request.html and importlib.util.find_spec("plotly") is None:
        raise UserError("--html needs plotly, which is not installed", hint=PLOT_EXTRA)
    statistics = None
    if "scipy" not in missing and (request.compare is not None or any(len(g.members) > 1 for g in groups)):
        statistics = _statistics(report, groups, request)
    skipped = [
        (what, lib)
        for what, lib, wanted in (("report.png", "matplotlib", request.plot), ("statistics", "scipy", True))
        if wanted and lib in missing
    ]
    if skipped:
        warnings.append(
            f"{' and '.join(w for w, _ in skipped)} skipped: {', '.join(lib for _, lib in skipped)} "
            f"not installed; {PLOT_EXTRA}"
        )
    outcome = Outcome(
        report, groups, plan, statistics, rep.best_run(report) if request.metric else None, warnings, notes
    )
    files = _outputs(outcome, request, draw_png=request.plot and "matplotlib" not in missing)
    out_dir = request.out_dir or report.out_dir
    for what, name, data in files:  # every output built: now they replace the old ones
        write_atomic(out_dir / name, data)
        outcome.written.append((what, out_dir / name))
    return outcome


def _objective(request: Request) -> rep.Objective:
    if request.metric is None and (request.mode_given or request.at is not None):
        raise UserError("--mode and --at need --metric", hint="e.g. --metric eval_acc --mode max")
    if request.seeds not in grp.SEED_SETS:
        raise UserError(f"--seeds {request.seeds}", hint=f"one of {', '.join(grp.SEED_SETS)}")
    at = request.at or ("best" if request.mode_given else "final")
    searched = False
    if request.search is not None:  # the search's metric, taken as the search takes it: one name
        from sweepgen.compile.spec import trials as search  # noqa: PLC0415 - lazy: only a search sweep's report needs it

        block = search.block(request.search)
        searched = (request.metric, request.mode, at) == (block.metric, block.mode, "final")
    return rep.Objective(request.metric, request.mode, at, searched)


def _require_logged(report: rep.Report, request: Request) -> None:
    """A metric no finished run logged is a typo or the wrong run folder: exit 2, write nothing."""
    if request.metric is None or any(r.score.value is not None for r in report.finished):
        return
    logged = rep.logged_metrics(report)
    close = difflib.get_close_matches(request.metric, logged, n=3)
    hint = f"did you mean {', '.join(close)}?" if close else "give a metric the runs logged"
    if logged:
        hint += f" (logged: {', '.join(logged[:12])}{', ...' if len(logged) > 12 else ''})"
    raise UserError(
        f"no finished run logged `{request.metric}`",
        location=Location(str(request.directory)),
        hint=hint,
    )


def _messages(report: rep.Report, plan: grp.SeedPlan, request: Request) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    notes: list[str] = []
    # run files a foreign trainer left that could not be used, with the reason (in every format)
    warnings.extend(f"run {run.name}: {problem}" for run in report.runs for problem in run.problems)
    cut = [
        r.name
        for r in report.finished
        if isinstance((r.summary or {}).get("truncated_fraction"), (int, float))
        and (r.summary or {})["truncated_fraction"] > TRUNCATION_WARNING
    ]
    if cut:
        warnings.append(
            f"{len(cut)} run(s) had more than {TRUNCATION_WARNING:.0%} of their completions cut at "
            f"max_completion_length and scored on the cut text ({', '.join(cut[:8])}"
            f"{', ...' if len(cut) > 8 else ''}); raise grpo.max_completion_length if that is not intended"
        )
    if request.metric is None and not any(r.summary for r in report.finished):
        logged = rep.logged_metrics(report)
        notes.append(
            "no run has the bundled trainer's summary.json; report a metric the runs logged with "
            "--metric NAME" + (f" (logged: {', '.join(logged[:12])})" if logged else "")
        )
    if report.values_from != "lock":
        notes.append(
            f"no sweep lock describes these runs; varying values come from their config.yaml "
            f"files ({len(report.varying)} paths differ)"
        )
    # a search without repeats runs each point once: "every run is its own group" is its design
    single = request.search is not None and request.search.model.search.repeats == 1
    if plan.note and not single:
        notes.append(plan.note)
    if request.search_note is not None:
        notes.append(request.search_note)
    if request.seeds != "all":
        chosen = plan.tune if request.seeds == "tune" else plan.test
        notes.append(f"statistics over the {request.seeds} seeds only: {', '.join(map(str, chosen or ()))}")
    return warnings, notes


def _statistics(report: rep.Report, groups: Sequence[grp.Group], request: Request) -> stats.Statistics:
    values = {r.name: r.value for r in report.finished}
    named = [(g.name, [v for n in g.members if (v := values.get(n)) is not None]) for g in groups]
    named = [(n, v) for n, v in named if v]
    if request.compare is not None and request.compare not in dict(named):
        names = [n for n, _ in named]
        close = difflib.get_close_matches(request.compare, names, n=3)
        raise UserError(
            f"--compare {request.compare}: no group of that name",
            hint=(f"did you mean {', '.join(close)}? " if close else "")
            + f"groups: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''}",
        )
    return stats.compare(named, baseline=request.compare, mode=request.mode)


def stats_rows(statistics: stats.Statistics) -> list[dict[str, Any]]:
    """One row per group: its mean and interval, and against the baseline the comparison."""
    by = {c.name: c for c in statistics.comparisons}
    out = []
    for g in statistics.groups:
        c = by.get(g.name)
        out.append(
            {
                "group": g.name,
                "n": g.n,
                "mean": g.mean,
                "ci_low": g.low,
                "ci_high": g.high,
                "baseline": statistics.baseline,
                "diff": c.diff if c else None,
                "diff_ci_low": c.low if c else None,
                "diff_ci_high": c.high if c else None,
                "test": c.test if c else None,
                "p": c.p if c else None,
                "p_holm": c.p_holm if c else None,
                "verdict": c.verdict if c else ("baseline" if g.name == statistics.baseline else None),
            }
        )
    return out


def stats_csv(statistics: stats.Statistics) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(STATS_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for row in stats_rows(statistics):
        writer.writerow(
            {k: "" if v is None else repr(v) if isinstance(v, float) else v for k, v in row.items()}
        )
    return buf.getvalue()


def stats_json(statistics: stats.Statistics) -> str:
    body = {
        "baseline": statistics.baseline,
        "mode": statistics.mode,
        "bootstrap": {"resamples": statistics.resamples, "seed": statistics.seed, "level": stats.LEVEL},
        "groups": jsonfloat.tagged(stats_rows(statistics)),
    }
    return json.dumps(body, indent=2, allow_nan=False)


def _outputs(outcome: Outcome, request: Request, *, draw_png: bool) -> list[tuple[str, str, bytes]]:
    """(what, file name, bytes) of every output, all built before any is written."""
    report = outcome.report
    files = [("CSV", "report.csv", rep.csv_text(report).encode())]
    if outcome.statistics is not None:
        files.append(("statistics", "statistics.csv", stats_csv(outcome.statistics).encode()))
    metric = request.metric or rep.DEFAULT_CURVE
    if draw_png:
        # the best groups only, as on the page: a legend of hundreds of lines reads as nothing
        best = _best_groups(report, outcome.groups)
        lines = rep.curves(report, best)
        if len(best) < len(outcome.groups):
            outcome.notes.append(
                f"report.png shows the {len(best)} best groups by {report.objective.label} "
                f"of {len(outcome.groups)}"
            )
        for curve in lines:
            outcome.notes.extend(curve.notes)
        title = report.sweep or request.directory.name
        files.append(("PNG", "report.png", rep.plot_png(lines, title, metric)))
    if request.html:
        page, importance = _html(outcome, request)
        if importance is not None:
            files.append(("importance", "importance.csv", importance.csv_text().encode()))
        files.append(("HTML", "report.html", page.encode()))
    return files


def _best_groups(report: rep.Report, groups: Sequence[grp.Group]) -> list[grp.Group]:
    scores = {r.name: r.value for r in report.finished}
    return report_page.best_first(groups, scores, report.objective.mode)[: report_page.MAX_CURVE_GROUPS]


def _html(outcome: Outcome, request: Request) -> tuple[str, Any]:
    """report.html and the parameter importance it shows (None with too few runs or parameters)."""
    report = outcome.report
    obj = report.objective
    seed = outcome.plan.path
    swept = [p for p in report.varying if p != seed]
    scored = [(r.values, v) for r in report.finished if (v := r.value) is not None]
    params = report_importance.params_of([r.values for r in report.runs], swept)
    importance = report_importance.compute([v for v, _ in scored], [s for _, s in scored], params)
    metric = request.metric or rep.DEFAULT_CURVE
    logged_by_all = set.intersection(*(set(r.series) for r in report.finished)) - {metric, "step"}
    search = None if request.search is None else _search_part(report, request)
    stopped = {} if search is None else _pruned_at(search, request.search)
    runs = [
        {
            "name": r.name,
            "variant": r.variant,
            "state": r.state_word,
            "values": r.values,
            "diff": r.diff,
            "score": r.value,
            "note": r.score.missing or r.pruned,
            "series": r.series,
            "pruned_at": stopped.get(r.variant),
        }
        for r in report.runs
    ]
    page = report_page.build(
        title=f"sweepgen report: {report.sweep or request.directory.name}",
        objective={"label": obj.label, "mode": obj.mode, "metric": request.metric, "searched": obj.searched},
        runs=runs,
        groups=outcome.groups,
        columns=list(report.varying),
        base=report.base,
        curve_metrics=[metric, *sorted(logged_by_all)][: report_page.MAX_METRICS],
        params=params,
        importance=importance,
        importance_csv="importance.csv",
        statistics=outcome.statistics,
        notes=[*outcome.warnings, *outcome.notes],
        digits=report.digits,
        sampled=bool((report.block or {}).get("digits")),
        search=search,
    )
    return report_html.render(page), importance


def _pruned_at(search: dict[str, Any], spec: Any) -> dict[str, int]:
    """The step each pruned trial's pruner stopped it at, by the names of the trial's runs (one per
    repeat)."""
    from sweepgen.compile.spec import trials as search_block  # noqa: PLC0415 - lazy: as _search_part

    repeats = search_block.block(spec).repeats
    return {
        name: t["pruned_at"]
        for t in search["trials"]
        if t["pruned_at"] is not None
        for name in [t["name"], *(search_block.trial_name(t["number"], i) for i in range(repeats))]
    }


def _search_part(report: rep.Report, request: Request) -> dict[str, Any]:
    """The page's search section, from the study in the sweep folder and the runs' logged steps."""
    from sweepgen.compile.spec import trials as search  # noqa: PLC0415 - lazy: only a search sweep's page needs it
    from sweepgen.run.report import search_section as report_search  # noqa: PLC0415 - lazy: as above
    from sweepgen.run.search import view as search_view  # noqa: PLC0415 - lazy: as above

    block = search.block(request.search)
    sweep_dir = request.search_dir or request.directory
    view = search_view.load(sweep_dir, block)
    steps = {r.variant: max((step for step, _ in r.curve), default=0) for r in report.runs}
    return report_search.section(
        report_search.trials_of(view, steps, block.repeats),
        metric=block.metric,
        mode=block.mode,
        best=None if view.best is None else view.best.name,
        diff=search_view.best_diff(sweep_dir, view),
    )
