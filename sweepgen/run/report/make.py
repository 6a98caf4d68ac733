"""`sweepgen report` as one function: read the runs, group seeds, compare, build every output, and
write the outputs only when all of them were built (each file replaced atomically).

``make(Request) -> Outcome``; the CLI parses arguments, calls it, prints the outcome and returns its
exit code. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import importlib.util
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepgen import direction
from sweepgen.compile.run_api import LOCK_NAME
from sweepgen.errors import Location, UserError
from sweepgen.fs import filenames, runfs, safefs
from sweepgen.run.core.base import RunState, is_pruned_reason
from sweepgen.run.report import collect as rep
from sweepgen.run.report import committed as report_committed
from sweepgen.run.report import compared, dropout, sampled_axes, stats_files, trl_objective
from sweepgen.run.report import groups as grp
from sweepgen.run.report import html as report_html
from sweepgen.run.report import page as report_page
from sweepgen.run.report.html import PLOT_HINT as PLOT_EXTRA
from sweepgen.run.report.stats import (
    bounds,
    eval_items,
    joint,
    outliers,
    sequential_record,
    sequential_table,
    skew,
    winner,
)
from sweepgen.run.report.stats import importance as report_importance
from sweepgen.run.report.stats import verdicts as stats

TRUNCATION_WARNING = 0.5  # the share of cut completions above which a reward is mostly about cut text


@dataclass(frozen=True)
class Request:
    directory: Path
    out_dir: Path | None = None
    metric: str | None = None
    mode: str = "max"
    mode_given: bool = False
    mode_inferred: bool = False  # --metric without --mode: from the metric's name (sweepgen.direction)
    at: str | None = None
    compare: str | None = None
    seeds: str = "all"  # all | tune | test
    test: str = "welch"  # welch | permutation
    interval: str = "t"  # t | bootstrap
    plot: bool = True
    html: bool = False
    search: Any = None  # the spec of a search sweep: the page gets its trials
    search_dir: Path | None = None  # that search's sweep folder (DIR, or the one its runs name)
    search_note: str | None = None  # why a search's section cannot be shown (never left out silently)
    chosen: str | None = None  # without --metric: why sweepgen chose the metric and direction it reports


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
    removed: list[Path] = field(default_factory=list)  # an earlier report's files this one replaced by none
    exit_code: int = 0

    @property
    def rows(self) -> list[dict[str, Any]]:
        return rep.rows(self.report)

    context: dict[str, str] = field(default_factory=dict)  # metric, value, direction
    view: Any = None  # a search sweep's study as search.view reads it, loaded once
    lost: dict[str, list[str]] = field(default_factory=dict)  # per group, its runs without a value
    outliers: list[outliers.Outlier] = field(default_factory=list)  # a run far from its group's others
    unpaired: list[str] = field(default_factory=list)  # arms that share the baseline's seeds, tested unpaired
    seedless: list[str] = field(default_factory=list)  # every seed gave one value in every group
    items: list[str] = field(
        default_factory=list
    )  # an accuracy over few items: the items' draw is in no interval
    winner: list[str] = field(default_factory=list)  # the best group's interval, held for being picked
    after_looks: list[str] = field(default_factory=list)  # the verdicts are run --until-decided's
    # what the values compared are worth before any test (--at best's bias, runs compared at other
    # steps): warnings in the terminal and on the page, and statistics.json's notes, read alone
    of_values: list[str] = field(default_factory=list)
    chosen: str | None = None  # Request.chosen: the metric and direction sweepgen chose, and why
    skewed: list[str] = field(default_factory=list)  # skew.sentence: seed noise too skewed for t

    def stats_rows(self) -> list[stats_files.StatsRow]:
        if self.statistics is None:
            return []
        return stats_files.rows(self.statistics, self.context, self.caveat_columns())

    def caveat_columns(self) -> stats_files.Caveats:
        far = {o.group: f"{o.run} ({o.value!r})" for o in self.outliers}
        return stats_files.Caveats(self.lost, far, [*self.of_values, *self.caveats()])

    def caveats(self) -> list[str]:
        """What the statistics' numbers do not show: the runs each group lost (dropout.sentences),
        a run far from its group's others (outliers.sentence), seeds that changed nothing, seeds
        shared but not paired, and the
        best group's interval as the best one's (winner.sentence), what the difference intervals
        hold together (joint.sentence), that the verdicts are one metric's family (joint.family), and
        verdicts that are the sequential test's (sequential_table)."""
        if self.statistics is None:
            return []
        lost = dropout.sentences(self.lost, {g.name: g.n for g in self.statistics.groups})
        far = (outliers.sentence(o) for o in self.outliers)
        return [
            *self.seedless,
            *lost,
            *far,
            *self.unpaired,
            *self.items,
            *self.skewed,
            *self.winner,
            *joint.sentence(self.statistics),
            *joint.family(self.statistics, self._compared_words()),
            *self.after_looks,
        ]

    def _compared_words(self) -> str:
        metric = self.context.get("metric", "the metric")
        value = self.context.get("value")
        return f"{metric}, {value}," if value else metric  # as the table's title names it


def make(request: Request) -> Outcome:
    """Everything `sweepgen report` shows and writes, for ``request``."""
    report, request, guessed, view = _collect(request)
    plan = grp.seed_plan(report.block, report.varying)
    groups = _groups(report, plan, request)
    warnings, notes = _messages(report, plan, request)
    unlike = compared.steps_warning(report, groups) or compared.window_warning(report, groups)
    warnings.extend(unlike)
    if guessed is not None:
        notes.append(guessed)
    missing = _missing_libraries(request, warnings)
    comparing = "scipy" not in missing and _compares(request, groups)
    statistics = _statistics(report, groups, request) if comparing else None
    statistics, after_looks = _after_looks(statistics, report, request)
    statistics = _no_verdict_at_best(statistics, report, groups)
    best = rep.best_run(report, grouped_runs(groups)) if request.metric else None
    outcome = Outcome(report, groups, plan, statistics, best, warnings, notes)
    outcome.chosen = request.chosen
    outcome.of_values = [*_best_bias(report), *unlike]
    outcome.context = stats_context(request, report)
    outcome.view = view
    if statistics is not None:
        _add_caveats(outcome, statistics, request, after_looks)
    outcome.notes.extend(_sequential_lines(report, request))
    files = _outputs(outcome, request, draw_png=request.plot and "matplotlib" not in missing)
    _write(files, request.out_dir or report.out_dir, outcome)
    return outcome


def _no_verdict_at_best(
    statistics: stats.Statistics | None, report: rep.Report, groups: Sequence[grp.Group]
) -> stats.Statistics | None:
    """At ``--at best`` no comparison is a verdict on the configurations (compared.AT_BEST_REASON),
    nor at ``--at last:K`` one of runs whose last K values start at different steps
    (compared.no_verdict_across_windows)."""
    if statistics is None:
        return None
    if report.objective.at == "best":
        return compared.no_verdict_at_best(statistics)
    statistics = compared.no_verdict_across_windows(statistics, report, groups)
    return compared.no_verdict_across_lengths(statistics, report, groups)  # the plainer reason, last


def _add_caveats(
    outcome: Outcome, statistics: stats.Statistics, request: Request, after_looks: list[str]
) -> None:
    """What the statistics' numbers do not show (Outcome.caveats), found only once there are
    statistics: without them there is no group to have lost runs or to be far from."""
    report, groups, plan = outcome.report, outcome.groups, outcome.plan
    outcome.lost = dropout.lost_runs(report, groups, plan, request.seeds)
    runs = _group_runs(report, groups)
    outcome.outliers = outliers.scan(runs, statistics.methods.bounds)
    outcome.unpaired = compared.unpaired(report, groups, plan.path, statistics.baseline)
    outcome.seedless = compared.seed_changed_nothing(report, groups, plan.path)
    configurations = dropout.configurations(report, plan, request.seeds)
    values = {g: [v for _, v in r] for g, r in runs.items()}
    untested = compared.best_untested(report, groups) or sequential_table.best_untested(after_looks)
    outcome.winner = winner.sentence(statistics, values, configurations, untested=untested)
    k = rep.last_k(report.objective.at)
    scored = values if k is None else _each_logged(report, runs, k)
    outcome.items = eval_items.sentence(report.objective.metric, scored, statistics.methods.bounds)
    outcome.skewed = skew.sentence(values)
    outcome.after_looks = after_looks


def _each_logged(
    report: rep.Report, runs: Mapping[str, Sequence[tuple[str, float]]], k: int
) -> dict[str, list[float]]:
    """Each group's values as each was scored on the eval items at --at last:K: each of the K logged
    values a run's value averages. Their mean is a count out of K x m, yet the same m items scored
    K times are m items, not K x m: read from the means, the eval-items sentence said "100 items" of
    a 20-item eval at --at last:5 and bounded the draw's reach sqrt(5) too tight."""
    last = {r.name: r.curve[-k:] for r in report.finished}
    return {g: [v for name, _ in r for _, v in last[name]] for g, r in runs.items()}


def _collect(request: Request) -> tuple[rep.Report, Request, str | None, Any]:
    """The runs, by the objective asked for; a foreign trainer's runs by the reward they logged
    (never a table of dashes), with the request naming it and the name guessed (else None); and a
    search sweep's study view (else None)."""
    report = rep.collect(request.directory, _objective(request))
    guessed = _likely_metric(report, request)
    if guessed is not None:
        request = dataclasses.replace(request, metric=guessed.metric, mode=guessed.mode, chosen=guessed.note)
        report = rep.collect(request.directory, _objective(request))
    _require_logged(report, request)
    said = guessed.note if guessed is not None else None
    if request.search is None:
        return report, request, said, None
    view = _search_view(request)
    return _pruned_by_the_study(report, request, view), request, said, view


def _search_view(request: Request) -> Any:
    from sweepgen.compile.run_api import trials as search  # noqa: PLC0415 - lazy: only a search sweep's report needs it
    from sweepgen.run.search import view as search_view  # noqa: PLC0415 - lazy: as above

    return search_view.load(request.search_dir or request.directory, search.block(request.search))


def _trial_runs(name: str, number: int, repeats: int) -> list[str]:
    """The variant names a trial's runs may have: the trial's own, and one per repeat."""
    from sweepgen.compile.run_api import trials as search  # noqa: PLC0415 - lazy: as _search_view

    return [name, *(search.trial_name(number, i) for i in range(repeats))]


def _pruned_by_the_study(report: rep.Report, request: Request, view: Any) -> rep.Report:
    """A trial its pruner stopped whose run finished before the stop landed: the study holds it as
    pruned (no value, never the best), so the report does too, instead of scoring it as finished."""
    repeats = view.block.repeats
    notes = {
        name: f"{_prune_words(row.reason, row.steps)}; the run finished before its stop landed"
        for row in view.rows
        if row.state == "pruned"
        for name in _trial_runs(row.name, row.number, repeats)
    }
    runs = tuple(
        dataclasses.replace(r, pruned=notes[r.variant])
        if r.state is RunState.FINISHED and r.variant in notes
        else r
        for r in report.runs
    )
    return dataclasses.replace(report, runs=runs)


def _prune_words(reason: str | None, step: int) -> str:
    """The pruner's words without the leading ``pruned`` (as a stopped run's note has them)."""
    return rep.pruner_words(str(reason)) if is_pruned_reason(reason) else f"at step {step}"


def _groups(report: rep.Report, plan: grp.SeedPlan, request: Request) -> list[grp.Group]:
    """The seed groups of the finished runs (with --metric, of those that logged it), over the
    seeds --seeds chose."""
    members = [
        grp.Member(r.name, r.variant, r.values)
        for r in report.finished
        if r.value is not None or not request.metric
    ]
    chosen = grp.select_seeds(members, plan, request.seeds)
    return grp.group(chosen, plan, report.varying, report.sweep or request.directory.name)


def grouped_runs(groups: Sequence[grp.Group]) -> set[str]:
    """The runs the report's groups hold: under `--seeds tune|test`, those seeds' runs only."""
    return {n for g in groups for n in g.members}


def _compares(request: Request, groups: Sequence[grp.Group]) -> bool:
    """Statistics are made when asked for a baseline, or when some group has seeds to average."""
    return request.compare is not None or any(len(g.members) > 1 for g in groups)


def _sequential_lines(report: rep.Report, request: Request) -> list[str]:
    """What a sequential test recorded in the sweep folder decided (nothing outside a sweep folder)."""
    if not (request.directory / LOCK_NAME).is_file():
        return []
    return sequential_record.report_lines(
        request.directory, request.metric, report.objective.at, request.mode, request.compare
    )


def _after_looks(
    statistics: stats.Statistics | None, report: rep.Report, request: Request
) -> tuple[stats.Statistics | None, list[str]]:
    """The statistics of a sweep `run --until-decided` added seeds to, with the sequential test's
    verdicts (sequential_table), and the sentence saying so; as they are elsewhere, and under
    `--seeds tune|test` (the looks tested every seed they ran, not that set)."""
    if statistics is None or statistics.baseline is None or request.seeds != "all":
        return statistics, []
    if not (request.directory / LOCK_NAME).is_file():
        return statistics, []
    compared_as = (request.directory, request.metric, report.objective.at, request.mode, request.compare)
    decided = sequential_record.decided(*compared_as)
    if decided is None:
        return statistics, []
    return sequential_table.adjusted(
        statistics,
        decided,
        sequential_record.intervals(*compared_as),
        sequential_record.schedule(*compared_as),
    )


def _missing_libraries(request: Request, warnings: list[str]) -> list[str]:
    """scipy and matplotlib where absent (what they would make is skipped, with a warning); an
    asked-for --compare or --html without its library is an error."""
    missing = [m for m in ("scipy", "matplotlib") if importlib.util.find_spec(m) is None]
    _require_asked_for(request, missing)
    warnings.extend(_skipped_warning(request, missing))
    return missing


def _require_asked_for(request: Request, missing: Sequence[str]) -> None:
    """--compare without scipy and --html without plotly are errors, never a silent skip."""
    if request.compare is not None and "scipy" in missing:
        raise UserError("--compare needs scipy, which is not installed", hint=PLOT_EXTRA)
    if request.html and importlib.util.find_spec("plotly") is None:
        raise UserError("--html needs plotly, which is not installed", hint=PLOT_EXTRA)


def _skipped_warning(request: Request, missing: Sequence[str]) -> list[str]:
    """One warning naming the outputs skipped for a missing library, and the libraries."""
    skipped = [
        (what, lib)
        for what, lib, wanted in (
            (filenames.REPORT_PNG, "matplotlib", request.plot),
            ("statistics", "scipy", True),
        )
        if wanted and lib in missing
    ]
    if not skipped:
        return []
    return [
        f"{' and '.join(w for w, _ in skipped)} skipped: {', '.join(lib for _, lib in skipped)} "
        f"not installed; {PLOT_EXTRA}"
    ]


def _write(files: Sequence[tuple[str, str, bytes]], out_dir: Path, outcome: Outcome) -> None:
    """Every output built: now they replace the old ones, an earlier report's others go, and the
    record of what this one wrote replaces the earlier one."""
    earlier = _earlier_record(out_dir)
    for what, name, data in files:
        runfs.write_atomic(out_dir / name, data)  # no linked folder on the way followed
        outcome.written.append((what, out_dir / name))
    _remove_stale(out_dir, {name for _, name, _ in files}, earlier, outcome)
    record = {name: hashlib.sha256(data).hexdigest() for _, name, data in files}
    runfs.write_atomic(out_dir / filenames.REPORT_RECORD, json.dumps(record, sort_keys=True).encode())


_RECORD_MAX = 64 * 1024  # bytes of a report record: six names and their digests


def _earlier_record(out_dir: Path) -> dict[str, str]:
    """What the last report in ``out_dir`` wrote (name -> sha256), from the record it left; nothing
    where there is none (an older sweepgen's report), or where it is not this user's own file that
    nobody else can write (``runfs.is_own``): in a shared folder anyone may have written it."""
    raw = _own_bytes(out_dir / filenames.REPORT_RECORD, _RECORD_MAX)
    try:
        data = json.loads(raw) if raw is not None else None
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if k in filenames.REPORT_FILES and isinstance(v, str)}


def _own_bytes(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` when it is this user's own file (``runfs.is_own``) of at most ``limit``
    bytes, opened without following a link; None otherwise."""
    try:
        fd = runfs.open_file(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = os.read(fd, limit + 1) if runfs.is_own(os.fstat(fd)) else b""
    finally:
        os.close(fd)
    return raw if 0 < len(raw) <= limit else None


def _remove_stale(out_dir: Path, written: set[str], earlier: dict[str, str], outcome: Outcome) -> None:
    """Remove the files of an earlier report that this one did not write: only a file the earlier
    report's record names with the very content it wrote, this user's, with no other name, found
    in the report folder's own descriptor. Anything else of that name (a link, a folder, a hard
    link, another user's file, a file edited since or an older sweepgen's output) is left and named:
    a removal is never of a file sweepgen did not write."""
    # a later report removes what it does not write, so no file of a report for another metric (or
    # another --at, or before --no-plot) is left beside it
    try:
        folder = runfs.open_dir(out_dir)
    except FileNotFoundError:
        return
    try:
        for name in filenames.REPORT_FILES:
            if name not in written:
                _remove_one(folder, out_dir / name, earlier.get(name), outcome)
    finally:
        os.close(folder)


def _remove_one(folder: int, path: Path, digest: str | None, outcome: Outcome) -> None:
    """Remove ``path`` (in ``folder``) when it is the earlier report's file, else name it."""
    why = _not_removable(folder, path.name, digest)
    if why is None:
        os.unlink(path.name, dir_fd=folder)
        outcome.removed.append(path)
    elif why:
        outcome.warnings.append(f"{path} is {why}: left as it is ({_BY_HAND})")


def _not_removable(folder: int, name: str, digest: str | None) -> str | None:
    """Why ``name`` in ``folder`` is not the earlier report's file to remove; None when it is, ""
    when there is nothing of that name."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return ""
    why = _not_a_report_file(info, digest)
    if why is not None or digest is None:
        return why
    return _other_content(folder, name, info, digest)


def _not_a_report_file(info: os.stat_result, digest: str | None) -> str | None:
    """What makes the entry ``info`` no file a report wrote, before its content is read."""
    if not stat.S_ISREG(info.st_mode):
        return f"a {safefs.kind_of(info.st_mode)}, not an earlier report's file"
    if info.st_nlink != 1 or info.st_uid != os.geteuid():
        return "a file with another name (a hard link) or of another user, not an earlier report's"
    if digest is None:
        return "not named by an earlier report's record (an older sweepgen's output, or not a report's)"
    return None


def _other_content(folder: int, name: str, info: os.stat_result, digest: str) -> str | None:
    """Why the file ``name`` (``info`` as looked at) is not what the record's ``digest`` says; None
    when it is: opened in ``folder`` without following a link, the same file, hashed whole."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
    except OSError as err:
        return f"not readable ({err.strerror})"
    try:
        seen = os.fstat(fd)
        if (seen.st_dev, seen.st_ino) != (info.st_dev, info.st_ino) or seen.st_size > _REPORT_MAX:
            return "changed while it was looked at"
        body = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            body.update(chunk)
    finally:
        os.close(fd)
    return None if body.hexdigest() == digest else "not the file the earlier report wrote (changed since)"


_BY_HAND = "remove it by hand if it is an earlier report's"
_REPORT_MAX = 1 << 30  # bytes of an earlier report's file read to compare with its record


def _objective(request: Request) -> rep.Objective:
    if request.metric is None and (request.mode_given or request.at is not None):
        raise UserError("--mode and --at need --metric", hint="e.g. --metric eval_acc --mode max")
    if request.seeds not in grp.SEED_SETS:
        raise UserError(f"--seeds {request.seeds}", hint=f"one of {', '.join(grp.SEED_SETS)}")
    # --mode is the direction only: the value compared is --at's, final unless asked
    at = request.at or "final"
    if not rep.valid_at(at):
        raise UserError(
            f"--at {at}", hint="one of final, best, last:K (K >= 1: the mean of the last K values)"
        )
    searched = False
    if request.search is not None:  # the search's metric, taken as the search takes it: one name
        from sweepgen.compile.run_api import trials as search  # noqa: PLC0415 - lazy: only a search sweep's report needs it

        block = search.block(request.search)
        searched = (request.metric, request.mode, at) == (block.metric, block.mode, "final")
    return rep.Objective(request.metric, request.mode, at, searched)


NO_SOURCES = "metrics.jsonl, metrics.csv, trainer_state.json, TensorBoard events or W&B run files"
# what to do when the runs wrote no metric file at all: a trl (HF Trainer) run's metrics go only to
# its terminal unless a checkpoint keeps trainer_state.json or `report_to` names a tracker
NOTHING_LOGGED = (
    f"the finished runs wrote none of {NO_SOURCES}; a trl or other Hugging Face Trainer run writes its "
    'metrics to a file only in a checkpoint\'s trainer_state.json (`save_strategy: "no"` keeps none) '
    "or through `report_to: tensorboard` (or `wandb`, offline too): set one in the config and run again"
)
UNREAD = "put the file itself where a refused one is (not a link to it), or remove it, and report again"
# what a run's reward is called by the trainers whose logs `report` reads, most likely first
LIKELY_METRICS = ("reward", "reward_mean", "rewards/mean", "train/reward")


@dataclass(frozen=True)
class Guessed:
    """The metric `report` chose without --metric, its direction, and the note that says so."""

    metric: str
    mode: str
    note: str


def _likely_metric(report: rep.Report, request: Request) -> Guessed | None:
    """With no --metric and no bundled-trainer summary: a TRL trainer's natural objective where
    every run's recorded command is that trainer's (trl_objective), else the reward the runs logged
    (TRL's GRPO and RLOO log `reward`); exit 2 listing every metric they logged when there is none.
    None: nothing to pick (--metric given, a bundled-trainer run, or no finished run)."""
    if request.metric is not None or not report.finished or any(r.summary for r in report.finished):
        return None
    logged = rep.logged_metrics(report)
    guessed = _trl_objective(report, logged) or _logged_reward(logged)
    if guessed is not None:
        return guessed
    raise UserError(
        "no run has the bundled trainer's summary.json, and no logged metric is a reward: say which "
        f"metric to report{_unread(report)}",
        location=Location(str(request.directory)),
        hint=f"--metric NAME; logged: {', '.join(logged)}" if logged else NOTHING_LOGGED,
    )


def _trl_objective(report: rep.Report, logged: Sequence[str]) -> Guessed | None:
    """The natural objective of the TRL trainer every finished run's recorded command runs; where no
    command names a TRL trainer (a script of the person's own), the one the spec's ``schema: trl:X``
    named (recorded in the lock's report block)."""
    commands = [r.command for r in report.finished]
    trainer = trl_objective.trainer(commands)
    told = "their recorded command"
    if trainer is None and not trl_objective.any_trainer(commands):
        trainer, told = (report.block or {}).get("trl"), "the spec's `schema: trl:X`"
    chosen = trl_objective.choose(trainer, logged)
    if trainer is None or chosen is None:
        return None
    mode = direction.default_mode(chosen)
    return Guessed(chosen, mode, trl_objective.why(trainer, chosen, mode, told))


def _logged_reward(logged: Sequence[str]) -> Guessed | None:
    """The reward the runs logged, by the names LIKELY_METRICS lists."""
    name = next((n for n in LIKELY_METRICS if n in logged), None)
    if name is None:
        return None
    note = (
        f"no run has the bundled trainer's summary.json: reporting `{name}`, the reward the "
        "runs logged (TRL's name), max is better; choose another with --metric NAME"
    )
    return Guessed(name, "max", note)


def _require_logged(report: rep.Report, request: Request) -> None:
    """A metric no finished run logged is a typo or the wrong run folder: exit 2, write nothing."""
    if request.metric is None or any(r.score.value is not None for r in report.finished):
        return
    logged = rep.logged_metrics(report)
    close = difflib.get_close_matches(request.metric, logged, n=3)
    hint = f"did you mean {', '.join(close)}?" if close else "give a metric the runs logged"
    unread = _unread(report)
    hint = f"{hint} (logged: {_listed(logged, 12)})" if logged else (UNREAD if unread else NOTHING_LOGGED)
    raise UserError(
        f"no finished run logged `{request.metric}`{unread}",
        location=Location(str(request.directory)),
        hint=hint,
    )


def _unread(report: rep.Report) -> str:
    """What a refusal for want of a metric adds when finished runs' files were refused (a link, a
    FIFO, a damaged file): the metric may be in them, so "logged none" alone would mislead."""
    unread = [f"run {r.name}: {p}" for r in report.finished for p in r.problems]
    if not unread:
        return ""
    more = f", and {len(unread) - 1} more" if len(unread) > 1 else ""
    return f" that sweepgen could read ({unread[0]}{more}; a link, FIFO or damaged file is never read)"


def _best_bias(report: rep.Report) -> list[str]:
    """``--at best``'s bias toward better (compared.best_warning), where it is the value compared."""
    return [compared.best_warning(report.objective.mode)] if report.objective.at == "best" else []


def _messages(report: rep.Report, plan: grp.SeedPlan, request: Request) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    # run files a foreign trainer left that could not be used, with the reason (in every format)
    warnings.extend(f"run {run.name}: {problem}" for run in report.runs for problem in run.problems)
    warnings.extend(_truncation_warning(report))
    warnings.extend(report_committed.warning([(r.name, r.run_dir) for r in report.runs]))
    warnings.extend(_best_bias(report))
    lacking = missing_value(report)
    if lacking and report.finished:
        warnings.append(
            f"{report.objective.label} is missing from {len(lacking)} of {len(report.finished)} finished "
            f"runs ({_listed(lacking, 8)}): the statistics are "
            "over the others, so those groups have fewer seeds"
        )
    return warnings, _notes(report, plan, request)


def _listed(names: Sequence[str], most: int) -> str:
    """The first ``most`` names, comma-separated, and ", ..." when there are more."""
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "")


def _mostly_cut(run: rep.RunRecord) -> bool:
    """A run scored on completions mostly cut at max_completion_length: the bundled trainer's
    summary says so (unless its config declared the cut the task's own), a `trl` run's logged
    ``completions/clipped_ratio`` says so on average over the run."""
    if run.summary:
        fraction = run.summary.get("truncated_fraction")
        expected = run.summary.get("truncation") == "expected"
    else:
        fraction, expected = _mean_clipped(run.series), False
    return isinstance(fraction, (int, float)) and fraction > TRUNCATION_WARNING and not expected


# TRL's share of a step's completions cut at max_completion_length (TensorBoard and W&B: `train/`)
CLIPPED_RATIO = ("completions/clipped_ratio", "train/completions/clipped_ratio")


def _mean_clipped(series: Mapping[str, Any]) -> float | None:
    points = next((series[name] for name in CLIPPED_RATIO if series.get(name)), None)
    return sum(value for _, value in points) / len(points) if points else None


def _truncation_warning(report: rep.Report) -> list[str]:
    """Runs that scored too many completions cut at max_completion_length: one warning naming them."""
    cut = [r.name for r in report.finished if _mostly_cut(r)]
    if not cut:
        return []
    return [
        f"{len(cut)} run(s) had more than {TRUNCATION_WARNING:.0%} of their completions cut at "
        f"max_completion_length and scored on the cut text ({_listed(cut, 8)}); "
        "raise max_completion_length (a TRL config's top-level key; grpo.max_completion_length in the "
        "bundled trainer's) if that is not intended"
    ]


def _notes(report: rep.Report, plan: grp.SeedPlan, request: Request) -> list[str]:
    """What the report was made from: the metric's source, where values came from, the seeds."""
    return [*_source_notes(report, request), *_seed_notes(plan, request)]


def _source_notes(report: rep.Report, request: Request) -> list[str]:
    """Where the metric and the varying values came from, when not from the bundled trainer and a lock."""
    notes = _no_summary_note(report, request)
    read_as = sorted({f"`{r.score.read_as}`" for r in report.finished if r.score.read_as})
    if read_as:
        notes.append(
            f"`{report.objective.metric}` read as {' and '.join(read_as)} from TensorBoard or W&B files "
            "(the name the Hugging Face Trainer's callbacks give it there)"
        )
    if report.values_from != "lock":
        notes.append(
            f"no sweep lock describes these runs; varying values come from their config.yaml "
            f"files ({len(report.varying)} paths differ)"
        )
    return notes


def _no_summary_note(report: rep.Report, request: Request) -> list[str]:
    """Without --metric the report reads the bundled trainer's summary.json: where no run has one,
    the metrics the runs did log, to choose from."""
    if request.metric is not None or any(r.summary for r in report.finished):
        return []
    logged = rep.logged_metrics(report)
    return [
        "no run has the bundled trainer's summary.json; report a metric the runs logged with "
        "--metric NAME" + (f" (logged: {', '.join(logged[:12])})" if logged else "")
    ]


def _seed_notes(plan: grp.SeedPlan, request: Request) -> list[str]:
    """How seeds were grouped and chosen, and why a search's section is missing."""
    notes: list[str] = []
    # a search without repeats runs each point once: "every run is its own group" is its design
    single = request.search is not None and request.search.model.search.repeats == 1
    if plan.note and not single:
        notes.append(plan.note)
    if request.search_note is not None:
        notes.append(request.search_note)
    if request.seeds != "all":
        chosen = plan.tune if request.seeds == "tune" else plan.test
        notes.append(f"statistics over the {request.seeds} seeds only: {', '.join(map(str, chosen or ()))}")
    return notes


def missing_value(report: rep.Report) -> list[str]:
    """The finished runs without a value of the objective (a metric some runs did not log)."""
    return [r.name for r in report.finished if r.value is None]


def _statistics(report: rep.Report, groups: Sequence[grp.Group], request: Request) -> stats.Statistics:
    named = [(g, [v for _, v in runs]) for g, runs in _group_runs(report, groups).items() if runs]
    baseline = _baseline(request.compare, groups, [n for n, _ in named])
    limits = bounds.of_metric(report.objective.metric, [v for _, vs in named for v in vs])
    methods = stats.Methods(interval=request.interval, test=request.test, bounds=limits)
    return stats.compare(named, baseline=baseline, mode=request.mode, methods=methods)


def _group_runs(report: rep.Report, groups: Sequence[grp.Group]) -> dict[str, list[tuple[str, float]]]:
    """Each group's runs with a value, as (name, value)."""
    values = {r.name: r.value for r in report.finished}
    return {g.name: [(n, v) for n in g.members if (v := values.get(n)) is not None] for g in groups}


def _baseline(compare: str | None, groups: Sequence[grp.Group], names: Sequence[str]) -> str | None:
    """The group ``--compare`` names: a group's name, or the name of a run in it (the per-run table
    shows run names: `--compare beta0.0_seed1` means that run's seed group)."""
    if compare is None or compare in names:
        return compare
    holding = [g.name for g in groups if compare in g.members and g.name in names]
    if len(holding) == 1:
        return holding[0]
    raise _no_such_group(compare, groups, names)


def _no_such_group(compare: str, groups: Sequence[grp.Group], names: Sequence[str]) -> UserError:
    """--compare named neither a group nor a run of one: the names closest to it, and the groups.
    A group that exists but has no run with a value (the metric missing, or NaN at the end, in each)
    is said as that: "no group of that name" would send the user looking for a typo."""
    empty = [g.name for g in groups if compare == g.name or compare in g.members]
    if empty:
        return UserError(
            f"--compare {compare}: no run of group {empty[0]} has a value to compare (each run's reason "
            "is in the report's table and warnings)",
            hint=f"compare against a group with values: {_listed(names, 20)}",
        )
    runs = [m for g in groups if g.name in names for m in g.members]
    close = difflib.get_close_matches(compare, [*names, *runs], n=3)
    return UserError(
        f"--compare {compare}: no group or run of that name",
        hint=(f"did you mean {', '.join(close)}? " if close else "")
        + f"groups: {_listed(names, 20)}; a run's name "
        "stands for its seed group",
    )


def stats_context(request: Request, report: rep.Report) -> dict[str, str]:
    """The metric, value and direction every statistics output names."""
    obj = report.objective
    return {
        "metric": obj.metric or "final_reward",
        "value": obj.value_word if obj.metric else "final (summary.json final_reward)",
        "direction": f"{obj.mode} is better" + (CHOSEN if request.chosen else ""),
        **({"chosen": request.chosen, "chosen_suffix": CHOSEN} if request.chosen else {}),
    }


# what the direction says wherever it is written when sweepgen chose the metric (no --metric)
CHOSEN = " (metric and direction chosen by sweepgen: --metric NAME --mode max|min to choose another)"


def _outputs(outcome: Outcome, request: Request, *, draw_png: bool) -> list[tuple[str, str, bytes]]:
    """(what, file name, bytes) of every output, all built before any is written."""
    files = [("CSV", filenames.REPORT_CSV, rep.csv_text(outcome.report).encode())]
    if outcome.statistics is not None:
        files += [
            (
                "statistics",
                filenames.STATISTICS_CSV,
                stats_files.csv_text(outcome.statistics, outcome.context, outcome.caveat_columns()).encode(),
            ),
            (
                "statistics",
                filenames.STATISTICS_JSON,
                stats_files.json_text(outcome.statistics, outcome.context, outcome.caveat_columns()).encode(),
            ),
        ]
    if draw_png:
        files.append(("PNG", filenames.REPORT_PNG, _png(outcome, request)))
    if request.html:
        page, importance = _html(outcome, request)
        if importance is not None:
            files.append(("importance", filenames.IMPORTANCE_CSV, importance.csv_text().encode()))
        files.append(("HTML", filenames.REPORT_HTML, page.encode()))
    return files


def _png(outcome: Outcome, request: Request) -> bytes:
    """report.png: the curves of the best groups only, as on the page (a legend of hundreds of lines
    reads as nothing); the notes say what was left out and what the curves could not show."""
    report = outcome.report
    best = _best_groups(report, outcome.groups)
    lines = rep.curves(report, best)
    if len(best) < len(outcome.groups):
        outcome.notes.append(
            f"{filenames.REPORT_PNG} shows the {len(best)} best groups by {report.objective.label} "
            f"of {len(outcome.groups)}"
        )
    for curve in lines:
        outcome.notes.extend(curve.notes)
    title = report.sweep or request.directory.name
    return rep.plot_png(lines, title, request.metric or rep.DEFAULT_CURVE)


def _best_groups(report: rep.Report, groups: Sequence[grp.Group]) -> list[grp.Group]:
    scores = {r.name: r.value for r in report.finished}
    return report_page.best_first(groups, scores, report.objective.mode)[: report_page.MAX_CURVE_GROUPS]


def _html(outcome: Outcome, request: Request) -> tuple[str, Any]:
    """report.html and the parameter importance it shows (None with too few runs or parameters)."""
    report = outcome.report
    obj = report.objective
    params, importance = _importance(outcome, request)
    search = None if request.search is None else _search_part(report, request, outcome.view)
    stopped = {} if search is None else _pruned_at(search, request.search)
    runs = _page_runs(report, stopped)
    page = report_page.build(
        title=f"sweepgen report: {report.sweep or request.directory.name}",
        objective={"label": obj.label, "mode": obj.mode, "metric": request.metric, "searched": obj.searched},
        runs=runs,
        groups=outcome.groups,
        columns=list(report.varying),
        base=report.base,
        curve_metrics=_curve_metrics(report, request),
        params=params,
        importance=importance,
        importance_csv=filenames.IMPORTANCE_CSV,
        statistics=outcome.statistics,
        notes=[*outcome.warnings, *outcome.caveats(), *outcome.notes],
        digits=report.digits,
        sampled=bool((report.block or {}).get("digits")),
        search=search,
    )
    return report_html.render(page), importance


def _importance(outcome: Outcome, request: Request) -> tuple[list[report_importance.Param], Any]:
    """The swept parameters (the seed is not one; log-sampled axes on log axes) and their importance
    for the scored runs (None with too few runs or parameters)."""
    report = outcome.report
    swept = [p for p in report.varying if p != outcome.plan.path]
    scored = [(r.values, v) for r in report.finished if (v := r.value) is not None]
    params = _log_sampled(
        report_importance.params_of([r.values for r in report.runs], swept), request, outcome.notes
    )
    return params, report_importance.compute([v for v, _ in scored], [s for _, s in scored], params)


def _curve_metrics(report: rep.Report, request: Request) -> list[str]:
    """The page's curves: the metric reported, then every other metric all finished runs logged."""
    metric = request.metric or rep.DEFAULT_CURVE
    logged_by_all = set.intersection(*(set(r.series) for r in report.finished)) - {metric, "step"}
    return [metric, *sorted(logged_by_all)][: report_page.MAX_METRICS]


def _page_runs(report: rep.Report, stopped: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each run as the page's builder takes it; ``stopped``: the step a search's pruner stopped a
    variant's run at."""
    return [
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


def _log_sampled(
    params: list[report_importance.Param], request: Request, notes: list[str]
) -> list[report_importance.Param]:
    """The log_uniform axes of a search or of a `sample:` sweep drawn on log axes whatever their span
    (params_of only guesses from the values: positive and spanning 100x or more)."""
    if request.search is None:
        logged, note = sampled_axes.log_axes(request.directory)
        if note is not None:
            notes.append(note)
    else:
        from sweepgen.compile.run_api import trials as search  # noqa: PLC0415 - lazy: only a search sweep's page needs it

        logged = {k for k, d in search.block(request.search).axes.items() if d.log_uniform is not None}
    return [dataclasses.replace(p, log=True) if p.path in logged and not p.categorical else p for p in params]


def _pruned_at(search: dict[str, Any], spec: Any) -> dict[str, int]:
    """The step each pruned trial's pruner stopped it at, by the names of the trial's runs (one per
    repeat)."""
    from sweepgen.compile.run_api import trials as search_block  # noqa: PLC0415 - lazy: as _search_part

    repeats = search_block.block(spec).repeats
    return {
        name: t["pruned_at"]
        for t in search["trials"]
        if t["pruned_at"] is not None
        for name in _trial_runs(t["name"], t["number"], repeats)
    }


def _search_part(report: rep.Report, request: Request, view: Any) -> dict[str, Any]:
    """The page's search section, from the study's ``view`` and the runs' logged steps."""
    from sweepgen.compile.run_api import trials as search  # noqa: PLC0415 - lazy: only a search sweep's page needs it
    from sweepgen.run.report import search_section as report_search  # noqa: PLC0415 - lazy: as above
    from sweepgen.run.search import view as search_view  # noqa: PLC0415 - lazy: as above

    block = search.block(request.search)
    sweep_dir = request.search_dir or request.directory
    steps = {r.variant: max((step for step, _ in r.curve), default=0) for r in report.runs}
    return report_search.section(
        report_search.trials_of(view, steps, block.repeats),
        metric=block.metric,
        mode=block.mode,
        best=None if view.best is None else view.best.name,
        diff=search_view.best_diff(sweep_dir, view),
        tied=view.tied(),
        trust=None if view.best is None else view.trust(),
        cut_line=view.cut_line,
    )
