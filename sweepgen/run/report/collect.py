"""Collect a sweep's runs into rows and reward curves (pure), and write them as CSV and PNG.

A run's varying values come from the sweep's lock file (what the spec made vary), found either
directly (DIR is the generated sweep folder) or through each run's sweepgen_status.json (DIR is a
runs folder). Runs that no lock describes (trained by hand, lock moved) get their varying values by
comparing the config.yaml files the trainer wrote, and the report says so.

Reward curves: one line per variant *group*, where a group is the runs that differ only in the seed
(the one seed rule of sweepgen.run.report.groups); the line is the mean over the group's seeds at each
logged step they all share, the band their min..max.
"""

from __future__ import annotations

import csv
import difflib
import importlib.util
import io
import math
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sweepgen import escape, paths
from sweepgen.compile.run_api import LOCK_NAME, Lock, LockFile
from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import yamlio
from sweepgen.fs import filenames
from sweepgen.fs.outtree import check_rel
from sweepgen.run.core.base import (
    METRICS_FILE,
    STATUS_FILE,
    SUMMARY_FILE,
    RunState,
    RunStatus,
    effective_state,
    is_pruned_reason,
    read_status,
)
from sweepgen.run.core.plan.tasks import NAMING_PATHS, config_fingerprint, read_lock, run_dir_of
from sweepgen.run.core.runfiles import MAX_LOG_BYTES, RunFileError, read_bytes
from sweepgen.run.core.sweepfile import sweep_origin
from sweepgen.run.logs import metrics
from sweepgen.run.logs.progress import read_summary
from sweepgen.run.report import mpl_safe
from sweepgen.run.report.groups import Group, seed_plan

PLOT_HINT = "install the plot extra: `pip install 'sweepgen[plot]'` (no torch), or pass --no-plot"
SUMMARY_COLUMNS = (
    "final_reward",
    "best_reward",
    "steps",
    "wall_time_s",
    "truncated_fraction",  # share of completions cut at max_completion_length
    "diversity.unique_ratio",
    "diversity.mean_pairwise_jaccard",
    "degenerate",
)
DEFAULT_CURVE = "reward_mean"  # the bundled trainer's metrics.jsonl, plotted when no --metric is given
MODES = ("max", "min")
DIGITS = 3  # significant digits of a number in a legend, unless the spec's sample block says otherwise
ATS = ("final", "best", "last:K")
LAST = re.compile(r"last:([1-9][0-9]{0,5})")


def last_k(at: str) -> int | None:
    """K of ``last:K`` (the mean of the last K logged values), None for final and best."""
    match = LAST.fullmatch(at)
    return int(match.group(1)) if match else None


def valid_at(at: str) -> bool:
    return at in ("final", "best") or last_k(at) is not None


@dataclass(frozen=True)
class Objective:
    """What a report ranks runs by. ``metric`` None: the bundled trainer's final reward (summary.json)."""

    metric: str | None = None
    mode: str = "max"  # max | min: which direction is better
    # what is compared (separate from the direction): final: the last logged value; best: the best
    # value over the run (biased upward: the max of noisy evaluations); last:K the mean of the last K
    at: str = "final"
    # a search sweep's own objective (its metric's last logged value, as the search tells Optuna):
    # named as the search names it, so the page's header, best-so-far curve and trials table agree
    searched: bool = False

    @property
    def label(self) -> str:
        if self.metric is None:
            return "final_reward"
        if self.searched:
            return self.metric
        k = last_k(self.at)
        return f"{self.at}_{self.metric}" if k is None else f"mean_last{k}_{self.metric}"

    @property
    def value_word(self) -> str:
        """The value compared, in words: final / best over the run / mean of the last K."""
        k = last_k(self.at)
        if k is not None:
            return f"mean of the last {k} logged values"
        return "best over the run" if self.at == "best" else "final (last logged value)"


@dataclass(frozen=True)
class Score:
    """A run's value of the objective metric, and where it came from."""

    value: float | None = None
    step: int | None = None  # the step the value was logged at
    final_step: int | None = None  # the last step the run logged the metric
    gap: float | None = None  # train_<x> - eval_<x> at ``step``, for an eval_<x> metric
    source: str | None = None  # metrics.jsonl | metrics.csv | tensorboard
    read_as: str | None = None  # the name read in ``source`` where not the metric's own (`train/loss`)
    missing: str | None = None  # why there is no value


@dataclass(frozen=True)
class RunRecord:
    name: str
    run_dir: Path
    state: RunState
    values: Mapping[str, Any]  # varying path -> value
    summary: Mapping[str, Any] | None  # summary.json, for finished runs
    curve: Sequence[tuple[int, float]] = ()  # (step, value) of the objective metric (or reward_mean)
    score: Score = field(default_factory=Score)  # only with a metric objective
    problems: tuple[str, ...] = ()  # run files that could not be used, and why (runfiles.RunFileError)
    variant: str = ""  # the lock's variant name (groups are named after it); the run name without a lock
    diff: Mapping[str, Any] = field(default_factory=dict)  # leaf path -> value where it differs from the base
    series: Mapping[str, metrics.Points] = field(default_factory=dict)  # every logged metric (first source)
    pruned: str | None = None  # a search trial's run its pruner stopped: why ("at step 9 (asha)")
    command: tuple[str, ...] = ()  # the command its status recorded (a foreign trainer's, e.g. `trl sft`)

    @property
    def state_word(self) -> str:
        """``pruned`` for a run its search pruned (stopped on purpose, not a problem), else the state."""
        return "pruned" if self.pruned is not None else self.state.value

    @property
    def value(self) -> float | None:
        """The objective's value: the metric's score, or the bundled trainer's final reward."""
        if self.score.value is not None or self.score.missing is not None:
            return self.score.value
        final = (self.summary or {}).get("final_reward")
        return float(final) if isinstance(final, (int, float)) and not isinstance(final, bool) else None


@dataclass(frozen=True)
class Report:
    varying: tuple[str, ...]
    runs: tuple[RunRecord, ...]
    out_dir: Path  # where report.csv / report.png go: the runs folder, never the generated folder
    values_from: str  # "lock" or "config.yaml"
    objective: Objective = field(default_factory=Objective)
    sweep: str = ""
    base: Mapping[str, Any] = field(default_factory=dict)  # the lock's base config, flattened
    block: Mapping[str, Any] | None = None  # the lock's `report` entry: seed path, tune/test, digits

    @property
    def digits(self) -> int:
        return int((self.block or {}).get("digits", DIGITS))

    @property
    def finished(self) -> list[RunRecord]:
        """The runs scored: finished, and not pruned by their search (a run can finish before the
        pruner's stop lands; its trial is still pruned)."""
        return [r for r in self.runs if r.state is RunState.FINISHED and r.pruned is None]


@dataclass(frozen=True)
class Curve:
    label: str
    runs: tuple[str, ...]
    steps: tuple[int, ...]
    mean: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    notes: tuple[str, ...] = field(default=())


# -- collecting -----------------------------------------------------------------------------------


def collect(directory: Path, objective: Objective | None = None) -> Report:
    """Read every run of a generated sweep folder or a runs folder."""
    obj = objective or Objective()
    _refuse_bad_request(directory, obj)
    if (directory / LOCK_NAME).is_file():
        return _checked(_from_sweep_folder(directory, obj), directory)
    return _checked(_from_runs_folder(directory, obj), directory)


def _refuse_bad_request(directory: Path, obj: Objective) -> None:
    """An objective no run can be scored by, or a DIR that is not a folder: exit 2."""
    if obj.mode not in MODES or not valid_at(obj.at):
        raise UserError(f"unknown objective {obj}", hint=f"--mode {'|'.join(MODES)}, --at {'|'.join(ATS)}")
    if not directory.is_dir():
        raise UserError(
            f"{directory} is not a directory",
            hint="give a generated sweep folder (with sweep.lock.json) or a runs folder",
        )


def _from_runs_folder(directory: Path, obj: Objective) -> Report:
    """The runs of a runs folder: as their sweeps' locks describe them when every run names one,
    else with the varying values read from their config.yaml files."""
    run_dirs = _run_dirs(directory)
    if not run_dirs:
        raise UserError(
            f"no run directories under {directory}",
            hint="give the folder holding the runs (e.g. runs/<sweep>) or the generated sweep folder",
        )
    linked = _from_linked_runs(directory, run_dirs, obj)
    if linked is not None:
        return linked
    configs = [_config_yaml(d) for d in run_dirs]
    varying, values = varying_values(configs)
    runs = [_record(escape.fs_name(d.name), d, v, obj) for d, v in zip(run_dirs, values)]
    return Report(tuple(varying), tuple(runs), directory, filenames.CONFIG, obj)


def _from_sweep_folder(directory: Path, obj: Objective) -> Report:
    """The runs of a generated sweep folder, as its lock lists them."""
    lock = read_lock(directory)
    entries = [_entry(directory, lock, e) for e in lock.files]
    _refuse_stale([(name, run_dir, fp) for name, run_dir, _, fp in entries])
    runs = [
        _record(name, run_dir, values, obj, e.variant, _diff(lock, e))
        for (name, run_dir, values, _), e in zip(entries, lock.files)
    ]
    out_dir = Path(os.path.commonpath([r.run_dir.parent for r in runs])) if runs else directory
    varying = tuple(p for p in lock.varying if p not in NAMING_PATHS)
    return _from_lock(Report(varying, tuple(runs), out_dir, "lock", obj), lock)


def _from_linked_runs(directory: Path, run_dirs: Sequence[Path], obj: Objective) -> Report | None:
    """A runs folder whose every run a sweep lock describes (its status names the sweep folder);
    None when some run has no lock."""
    sweeps: dict[Path, _SweepIndex] = {}  # each sweep's lock read once, however many runs point to it
    linked = _all_linked(run_dirs, sweeps)
    if linked is None:
        return None
    _refuse_stale([(name, d, fp) for d, (name, _, fp, _) in zip(run_dirs, linked)])
    varying = sorted({path for _, values, _, _ in linked for path in values} - NAMING_PATHS)
    runs = [
        _record(name, d, values, obj, entry.variant, _diff(sweeps[Path(sd)].lock, entry))
        for d, (name, values, _, (sd, entry)) in zip(run_dirs, linked)
    ]
    report = Report(tuple(varying), tuple(runs), directory, "lock", obj)
    if len(sweeps) == 1:  # one sweep's runs: its base, seed path and digits apply
        report = _from_lock(report, next(iter(sweeps.values())).lock)
    return report


def _all_linked(
    run_dirs: Sequence[Path], sweeps: dict[Path, _SweepIndex]
) -> list[tuple[str, dict[str, Any], str, tuple[str, LockFile]]] | None:
    """Each run's values from its sweep's lock (as _linked_values), or None when some run has
    none: a folder reported partly by lock and partly by config.yaml would mix two sources."""
    maybe_linked = [_linked_values(d, sweeps) for d in run_dirs]
    linked = [v for v in maybe_linked if v is not None]
    return linked if len(linked) == len(maybe_linked) else None


def _from_lock(report: Report, lock: Lock) -> Report:
    return replace(report, sweep=lock.sweep, base=paths.flatten(lock.base), block=lock.report)


def _diff(lock: Lock, entry: LockFile) -> dict[str, Any]:
    """The entry's leaf values that differ from the base (a version-1 lock: its varying values)."""
    if entry.full_config is not None:
        diff = lock.values(entry)
    else:
        diff = {**paths.flatten(entry.set), **dict.fromkeys(entry.deleted, "(deleted)")}
    return {p: v for p, v in diff.items() if p not in NAMING_PATHS}


def _checked(report: Report, directory: Path) -> Report:
    if not report.finished:
        states = [f"{r.name} {r.state}" for r in report.runs]
        more = f", and {len(states) - 10} more" if len(states) > 10 else ""
        raise UserError(
            f"no finished run in {directory} (a run is finished once it exited 0 and left its done "
            "file: summary.json for the bundled trainer)",
            hint="run the sweep first: `sweepgen run <generated sweep folder>`; states: "
            + ", ".join(states[:10])
            + more,
        )
    return report


def _status(run_dir: Path, problems: list[str] | None = None) -> RunStatus | None:
    """The run's status file, or None when it is missing or cannot be used (a FIFO, garbage, a
    link to a device): then the reason goes to ``problems``, listed with the run, never fatal to
    the whole report."""
    try:
        return read_status(run_dir)
    except ConfigError as err:
        if problems is not None:
            problems.append(f"{STATUS_FILE} {err.reason if isinstance(err, RunFileError) else err.message}")
        return None


def _refuse_stale(runs: Sequence[tuple[str, Path, str]]) -> None:
    """A run directory started from another version of its config would be reported under the
    lock's current values: the one silent lie a report must never tell."""
    stale = []
    for name, run_dir, fingerprint in runs:
        status = _status(run_dir)
        if status and status.config_fingerprint and status.config_fingerprint != fingerprint:
            stale.append(f"{name} ({run_dir})")
    if stale:
        raise UserError(
            f"{len(stale)} run(s) were made from another version of their config: {', '.join(stale)}",
            hint="the spec changed since they ran: report them with the spec they ran with (render it "
            "again from version control), or re-run them into new output_dirs",
        )


def _entry(sweep_dir: Path, lock: Lock, entry: LockFile) -> tuple[str, Path, dict[str, Any], str]:
    """(run name, run dir, varying values, config fingerprint) of one lock entry: reads its file."""
    check_rel(str(sweep_dir), entry.path)  # the lock is data: its paths never leave the sweep folder
    config_path = sweep_dir / entry.path
    data = read_bytes(config_path, limit=MAX_LOG_BYTES)  # never a FIFO or device: no hang
    if data is None:
        raise UserError(
            f"{config_path} is in the lock but missing",
            location=Location(str(sweep_dir / LOCK_NAME)),
            hint="render the spec again with `sweepgen render SPEC`",
        ) from None
    run_dir = run_dir_of(config_path, data, lock.config(entry), entry.run_dir)
    return entry.run_name or entry.variant, run_dir, lock.values(entry), config_fingerprint(config_path, data)


def _run_dirs(directory: Path) -> list[Path]:
    marks = (STATUS_FILE, SUMMARY_FILE, METRICS_FILE, filenames.METRICS_CSV)
    # a run folder that is a link is never followed: it may lead anywhere (a shared runs folder)
    found = {p.parent for mark in marks for p in directory.glob(f"*/{mark}") if not p.parent.is_symlink()}
    if any((directory / m).is_file() for m in marks):
        found.add(directory)  # DIR is itself one run
    return sorted(found)


@dataclass
class _SweepIndex:
    """One sweep's lock entries by run directory and by config path, built once per sweep so that
    finding a run's entry costs the same however many runs the sweep has."""

    sweep_dir: Path
    lock: Lock
    by_run_dir: dict[str, int]  # normalised run dir -> entry index
    by_config: dict[str, int]  # generated config path (posix, as status files name it) -> entry index

    @classmethod
    def build(cls, sweep_dir: Path) -> _SweepIndex:
        lock = read_lock(sweep_dir)
        by_run_dir: dict[str, int] = {}
        by_config: dict[str, int] = {}
        for i, entry in enumerate(lock.files):
            run_dir = entry.run_dir
            if run_dir is None:  # a lock from before entries recorded it: the file says
                run_dir = str(_entry(sweep_dir, lock, entry)[1])
            by_run_dir.setdefault(os.path.normpath(run_dir), i)
            by_config.setdefault((sweep_dir / entry.path).as_posix(), i)
        return cls(sweep_dir, lock, by_run_dir, by_config)

    def find(self, run_dirs: Sequence[str], config: str | None) -> LockFile | None:
        """The first entry (in lock order) whose run dir is one of ``run_dirs`` (spellings of one
        directory) or whose file is ``config`` (as the status file names it, from the sweep's root)."""
        hits = [self.by_run_dir.get(os.path.normpath(run_dir)) for run_dir in run_dirs]
        if config:
            hits.append(self.by_config.get(config))
        found = [i for i in hits if i is not None]
        return self.lock.files[min(found)] if found else None


def _linked_values(
    run_dir: Path, sweeps: dict[Path, _SweepIndex]
) -> tuple[str, dict[str, Any], str, tuple[str, LockFile]] | None:
    """(run name, varying values, config fingerprint, (sweep dir, lock entry)) from the lock the
    run's status points to."""
    status = _status(run_dir)
    if status is None or not status.sweep_dir:
        return None
    origin = sweep_origin.locate(run_dir, status.sweep_dir)
    if origin is None:
        return None
    sweep_dir = origin.sweep_dir
    if sweep_dir not in sweeps:
        sweeps[sweep_dir] = _SweepIndex.build(sweep_dir)
    index = sweeps[sweep_dir]
    config = None if status.config is None else (origin.root / status.config).as_posix()
    # the lock names a run dir as the sweep's output_dir wrote it: from the root, or absolute
    entry = index.find([origin.relative(run_dir), os.path.abspath(run_dir)], config)
    if entry is None:
        return None
    name, _, values, fingerprint = _entry(sweep_dir, index.lock, entry)
    return name, values, fingerprint, (str(sweep_dir), entry)


def _config_yaml(run_dir: Path) -> Mapping[str, Any]:
    path = run_dir / filenames.CONFIG
    raw = read_bytes(path, limit=MAX_LOG_BYTES)  # a FIFO or /dev/zero link: an error, never a hang
    if raw is None:
        status = _status(run_dir)
        recorded = status.sweep_dir if status is not None else None
        raise UserError(
            f"{run_dir} has no config.yaml and no sweep lock describes it",
            location=Location(str(run_dir)),
            hint="report runs started by `sweepgen run`, or give the generated sweep folder"
            if recorded is None
            else sweep_origin.lost_note(recorded),
        )
    # the one YAML reader (YAML 1.2, duplicate keys refused, errors with their line), as for configs
    shown = str(path)
    data = yamlio.loads(yamlio.decode_utf8(raw, shown), shown, string_keys=False).data
    return data if isinstance(data, dict) else {}


def varying_values(configs: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Leaf paths whose value differs between the configs (a path missing from some counts as
    differing), and each config's value at them; NAMING_PATHS left out."""
    flat = [paths.flatten(dict(c)) for c in configs]
    leaves = sorted({p for f in flat for p in f} - NAMING_PATHS)
    missing = object()
    varying = [p for p in leaves if len({repr(f.get(p, missing)) for f in flat}) > 1]
    return varying, [{p: f.get(p) for p in varying} for f in flat]


def _record(
    name: str,
    run_dir: Path,
    values: Mapping[str, Any],
    objective: Objective,
    variant: str | None = None,
    diff: Mapping[str, Any] | None = None,
) -> RunRecord:
    problems: list[str] = []
    summary = _summary(run_dir, problems)
    status = _status(run_dir, problems)
    state = _state(run_dir, status, summary)
    sources, series, refused = _logged_series(run_dir, objective, problems)
    curve = series.points if series is not None else ()
    score = _score(sources, series, objective) if objective.metric is not None else Score()
    if refused is not None and score.missing is not None:  # a file refused is no file missing
        score = Score(missing=refused)
    if score.value is not None and series is not None and series.non_finite:
        score = _unless_diverged(run_dir, series, objective, score)
    return RunRecord(
        name,
        run_dir,
        state,
        dict(values),
        summary,
        curve,
        score,
        tuple(problems),
        variant=variant or name,
        diff=dict(diff or {}),
        series=_by_first_source(sources),
        pruned=_pruned(state, status),
        command=tuple(status.command) if status is not None else (),
    )


def _summary(run_dir: Path, problems: list[str]) -> dict[str, Any] | None:
    """The run's summary.json, or None: a broken one is listed with the run (in ``problems``),
    never fatal to the whole report."""
    try:
        return read_summary(run_dir)
    except RunFileError as err:
        problems.append(f"{SUMMARY_FILE} {err.reason}")
        return None


def _by_first_source(sources: Mapping[str, Mapping[str, metrics.Points]]) -> dict[str, metrics.Points]:
    """Every series the run logged, once: where sources share a name, the first in SOURCES order
    wins, as in metrics.find()."""
    logged: dict[str, metrics.Points] = {}
    for source in reversed(metrics.SOURCES):
        logged.update(sources.get(source, {}))
    return logged


def _state(run_dir: Path, status: RunStatus | None, summary: Any) -> RunState:
    """The rule `run` and `status` use (done file, or exit 0 for a foreign trainer); a report asks no
    executor whether a `running` run is alive: it shows what the run last recorded."""
    state, _ = effective_state(run_dir, status, lambda _status: True)
    if state is not None:
        return state
    return RunState.FINISHED if summary is not None else RunState.PENDING


def _logged_series(
    run_dir: Path, objective: Objective, problems: list[str]
) -> tuple[Mapping[str, Any], metrics.Series | None, str | None]:
    """Every source's metrics, the objective's series (without --metric only the bundled trainer's
    metrics.jsonl curve: no event files read) and why a file was refused (None: none was);
    unreadable files and non-finite values go to ``problems``."""
    metric = objective.metric or DEFAULT_CURVE
    refused = None
    try:
        sources, series = metrics.find_in_run(run_dir, metric, tensorboard=objective.metric is not None)
    except RunFileError as err:
        sources, series, refused = {}, None, f"{err.path.name} {err.reason}"
        problems.append(refused)
    bad = metrics.non_finite_count(sources, metric)
    if bad:
        problems.append(f"{bad} NaN or infinite value(s) of `{metric}` left out (the run diverged?)")
    return sources, series, refused


def _pruned(state: RunState, status: RunStatus | None) -> str | None:
    """The pruner's words for a search trial's run it stopped, without the leading ``pruned``."""
    if state is not RunState.CANCELLED or status is None or not is_pruned_reason(status.reason):
        return None
    return pruner_words(str(status.reason))


def pruner_words(reason: str) -> str:
    """A pruning reason without its leading ``pruned`` ("at step 9 (asha)")."""
    return reason.removeprefix("pruned").strip()


def _score(sources: Mapping[str, Any], series: metrics.Series | None, objective: Objective) -> Score:
    if series is None:
        return Score(missing=_not_logged(sources, objective))
    k = last_k(objective.at)
    if k is not None and len(series.points) < k:
        return Score(
            missing=f"logged {len(series.points)} value(s) of `{objective.metric}`, fewer than "
            f"--at last:{k} averages"
        )
    step, value = _at(series, objective, k)
    gap = _train_eval_gap(sources, series, str(objective.metric), step, value)
    read_as = series.name if series.name != objective.metric else None
    return Score(value, step, series.final[0], gap, series.source, read_as)


def _unless_diverged(run_dir: Path, series: metrics.Series, objective: Objective, score: Score) -> Score:
    """No value where a value --at final or last:K reads was NaN or infinite: the finite points skip
    it, and the "final" value would be one from before the run diverged (a run that blew up would
    rank as if it had not). The run is then missing from the statistics, said so with the reason."""
    k = last_k(objective.at) or (1 if objective.at == "final" else None)
    if k is None:  # best: the best of the finite values, warned as skipping the others
        return score
    try:
        raw, _ = metrics.find_in_run(run_dir, series.name, tensorboard=False, keep_non_finite=True)
    except RunFileError as err:  # changed since it was read (a shared runs folder): this run's problem
        return Score(missing=f"{err.path.name} {err.reason}")
    points = raw.get(series.source, {}).get(series.name, ())
    bad = [step for step, value in points[-k:] if not math.isfinite(value)]
    if not bad:
        return score
    what = "final value" if objective.at == "final" else f"last {k} values"
    return Score(
        missing=f"`{series.name}` is NaN or infinite at step {bad[-1]}, among its {what} (the run "
        f"diverged): no {objective.at} value; --at best ranks its best finite value"
    )


def _not_logged(sources: Mapping[str, Any], objective: Objective) -> str:
    """Why a run has no value of the objective: no metrics at all, or not this one (and the close names)."""
    if not sources:
        return "no metrics.jsonl, metrics.csv or TensorBoard events"
    close = difflib.get_close_matches(str(objective.metric), metrics.names(sources), n=3)
    return f"no `{objective.metric}` logged" + (f" (did you mean {', '.join(close)}?)" if close else "")


def _at(series: metrics.Series, objective: Objective, k: int | None) -> tuple[Any, float]:
    """(step, value) of the series that --at compares: the mean of the last K (at the final step),
    the final value, or the best."""
    if k is not None:
        return series.final[0], math.fsum(v for _, v in series.points[-k:]) / k
    if objective.at == "final":
        return series.final
    return series.best(objective.mode)


def _train_eval_gap(
    sources: Mapping[str, Any], series: metrics.Series, metric: str, step: Any, value: float
) -> float | None:
    """For an eval_<x> metric, train_<x> minus it at the chosen step, from the same source
    (overfitting shows as a large gap); None when there is no such train value."""
    if not metric.startswith("eval_"):
        return None
    train = dict(sources.get(series.source, {}).get("train_" + metric.removeprefix("eval_"), ()))
    return train[step] - value if step in train else None


# -- rows and CSV ---------------------------------------------------------------------------------


def rows(report: Report) -> list[dict[str, Any]]:
    """One row per run: name, state, the varying values, then the summary columns."""
    out = []
    if report.objective.metric is not None:
        return _metric_rows(report)
    sections = _section_columns(report)
    for run in report.runs:
        row: dict[str, Any] = {"run": run.name, "state": run.state_word}
        row.update({path: run.values.get(path) for path in report.varying})
        row.update({col: paths.get(run.summary, col, None) for col in SUMMARY_COLUMNS})
        row.update({col: paths.get(run.summary, col, None) for col in sections})
        out.append(row)
    return out


def _metric_rows(report: Report) -> list[dict[str, Any]]:
    """One row per run for a metric objective: the value, the step it was logged at, the last
    step, the train-eval gap (for eval_<x>), its source, and why a run has no value."""
    obj = report.objective
    with_gap = any(r.score.gap is not None for r in report.runs)
    out = []
    for run in report.runs:
        row: dict[str, Any] = {"run": run.name, "state": run.state_word}
        row.update({path: run.values.get(path) for path in report.varying})
        row[obj.label] = run.score.value
        row["at_step"] = run.score.step
        if with_gap:
            row["train_eval_gap"] = run.score.gap
        row["final_step"] = run.score.final_step
        row["source"] = run.score.source
        row["note"] = run.score.missing or run.pruned
        out.append(row)
    return out


def logged_metrics(report: Report) -> list[str]:
    """The metric names the finished runs logged, in any source: a TRL run that saved no checkpoint
    logged only to TensorBoard or W&B (`train/reward`), which the choice of a metric and the hint
    must see too. Read only when no --metric is given or the given one was not found."""
    return metrics.names(
        {f"{r.name}:{k}": v for r in report.finished for k, v in _all_sources(r.run_dir).items()}
    )


def _all_sources(run_dir: Path) -> metrics.Sources:
    """Every source of a run; its metric files only when its event or W&B files cannot be read
    (tensorboard not installed, a file over the limit): a list of names, where a report that
    needs those files says why it cannot read them. A run whose metric files cannot be read either
    (a garbage trainer_state.json) gives no names: one spoiled run folder never ends the report."""
    try:
        return metrics.read_all(run_dir)
    except UserError:
        pass
    try:
        return metrics.read_all(run_dir, tensorboard=False)
    except RunFileError:  # listed with its run already (`_record` read the same files): no names
        return metrics.Sources()


def best_run(report: Report, among: Collection[str] | None = None) -> RunRecord | None:
    """The finished run with the best objective value (metric objectives only), among the runs
    named in ``among`` where given (the runs the statistics use: `--seeds test` picks from the test
    seeds, never from the tune seeds the configurations were chosen on)."""
    scored = [r for r in _among(report, among) if r.score.value is not None]
    if not scored:
        return None
    pick = max if report.objective.mode == "max" else min
    return pick(scored, key=lambda r: r.score.value or 0.0)


def tied_with(report: Report, best: RunRecord, among: Collection[str] | None = None) -> list[str]:
    """The other finished runs (named in ``among`` where given) with exactly the best run's value: a
    tie is said as a tie."""
    return [r.name for r in _among(report, among) if r is not best and r.score.value == best.score.value]


def _among(report: Report, among: Collection[str] | None) -> list[RunRecord]:
    """The finished runs named in ``among`` (all of them without it)."""
    return [r for r in report.finished if among is None or r.name in among]


# -- summary sections of optional trainer parts (debate, routing) -------------------------------
# A part that writes a mapping under its name into summary.json gets these columns, only in reports
# where some run has that section (reports of other sweeps keep their columns).
SECTION_COLUMNS = {
    "debate": ("team_accuracy", "reward_solver", "reward_critic", "zero_advantage_groups", "length_tokens"),
    # gradient routing: the final three-mode eval, summary.json's routing.<mode>.<metric>;
    # a baseline run has only `both`, so its retain_only/forget_only cells stay empty
    "routing": tuple(
        f"{mode}.{metric}"
        for mode in ("both", "retain_only", "forget_only")
        for metric in ("task_reward", "hack_rate", "unique_ratio", "mean_pairwise_jaccard")
    ),
}


def _section_columns(report: Report) -> list[str]:
    present = {
        name
        for run in report.runs
        for name in SECTION_COLUMNS
        if isinstance((run.summary or {}).get(name), Mapping)
    }
    return [f"{name}.{key}" for name, keys in SECTION_COLUMNS.items() if name in present for key in keys]


def csv_text(report: Report) -> str:
    table = rows(report)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    # run names, metric names and config values are data a spreadsheet must not read as a formula,
    # headers included (escape.csv_cell); no raw NUL or other C0 control in a cell either
    writer.writerow([escape.csv_cell(k) for k in table[0]])
    for row in table:
        writer.writerow([escape.csv_cell(v) for v in row.values()])
    return buf.getvalue()


# -- curves ---------------------------------------------------------------------------------------


def curves(report: Report, groups: Sequence[Group] | None = None) -> list[Curve]:
    """Mean and min..max band over seeds, per group of finished runs: the seed groups given (labelled
    by their names), or else the runs equal in every non-seed value (labelled by those values, numbers
    at the report's ``digits`` significant digits)."""
    labelled = _given_groups(report, groups) if groups is not None else _value_groups(report)
    return [_curve(label, members) for label, members in labelled]


def _given_groups(report: Report, groups: Sequence[Group]) -> list[tuple[str, list[RunRecord]]]:
    """The seed groups' finished runs, under the groups' names (a group with none is left out)."""
    by_name = {r.name: r for r in report.finished}
    labelled = []
    for g in groups:
        members = [by_name[n] for n in g.members if n in by_name]
        if members:
            labelled.append((g.name, members))
    return labelled


def _value_groups(report: Report) -> list[tuple[str, list[RunRecord]]]:
    """The finished runs equal in every non-seed value, labelled by those values."""
    seed = seed_plan(report.block, report.varying).path  # the one seed rule, as grouping's
    keys = [p for p in report.varying if p != seed and p not in NAMING_PATHS]
    buckets: dict[tuple[Any, ...], list[RunRecord]] = {}
    for run in report.finished:
        buckets.setdefault(tuple(repr(run.values.get(p)) for p in keys), []).append(run)
    return [(_label(members[0], keys, report.digits), members) for members in buckets.values()]


def _label(run: RunRecord, keys: Sequence[str], digits: int) -> str:
    """A value group's label: its values at ``keys`` (a path this group does not have at all, a
    parameter of another strategy, says nothing)."""
    shown = [f"{p}={_short(run.values[p], digits)}" for p in keys if run.values.get(p) is not None]
    return ", ".join(shown) or "all runs"


def _curve(label: str, members: Sequence[RunRecord]) -> Curve:
    """One group's mean and band, at the steps all its runs logged (a note when some logged more)."""
    shared = set.intersection(*(set(dict(m.curve)) for m in members))
    note = unshared_note(label, [len(dict(m.curve)) for m in members], len(shared))
    notes = () if note is None else (note,)
    steps = sorted(shared)
    by_run = [dict(m.curve) for m in members]
    values = [[r[s] for r in by_run] for s in steps]
    mean, low, high = _band(values)
    return Curve(label, tuple(m.name for m in members), tuple(steps), mean, low, high, notes)


def unshared_note(label: str, logged: Sequence[int], shared: int) -> str | None:
    """What a group's curve leaves out (None: every run logged the same steps). The curve is the mean
    over the group's seeds at each step, so it is drawn at the steps every seed logged; where the
    seeds logged at disjoint steps (evals offset per seed, a logging interval changed) there is none,
    and an empty line would read as "no data" (its values are in the table)."""
    if all(n == shared for n in logged):
        return None
    if shared == 0:
        return (
            f"{label}: no curve: its {len(logged)} runs logged the metric at no step in common, and a "
            "mean over seeds needs every seed at a step (each run's values are in the table); log "
            "every run at the same steps"
        )
    return f"{label}: plotted at the {shared} steps logged by all {len(logged)} runs (of {max(logged)})"


def _band(values: Sequence[Sequence[float]]) -> tuple[tuple[float, ...], ...]:
    """Per step: the mean, min and max over the runs' values."""
    return (
        tuple(sum(v) / len(v) for v in values),
        tuple(min(v) for v in values),
        tuple(max(v) for v in values),
    )


def _short(value: Any, digits: int) -> str:
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


NO_SHARED_STEP = "no curve: no group's runs logged the metric at a step in common (see the notes)"
PLOT_LIMIT = 1e300  # beyond this, an axis range (high - low) overflows a float: left out of the PNG


def _plottable(values: Sequence[float]) -> list[float]:
    """Values a plot can span: those beyond ``PLOT_LIMIT`` (a diverged run's 1e308) become gaps."""
    return [v if isinstance(v, (int, float)) and abs(v) <= PLOT_LIMIT else math.nan for v in values]


def _matplotlib_missing() -> bool:
    return importlib.util.find_spec("matplotlib") is None


def plot_png(lines: Sequence[Curve], title: str, ylabel: str = DEFAULT_CURVE) -> bytes:
    """Curves with their seed bands; the legend outside the axes (a sweep of many groups would
    cover the curves), the title saying over how many seeds a line is a mean."""
    if _matplotlib_missing():
        raise UserError("the curve PNG needs matplotlib, which is not installed", hint=PLOT_HINT)
    # never the checkout's ./matplotlibrc; names drawn as written, no mathtext or LaTeX (mpl_safe)
    plt = mpl_safe.pyplot()
    with mpl_safe.plain_text():
        return _draw(plt, lines, title, ylabel)


def _drawable(curve: Curve) -> bool:
    """A group whose runs share no logged step has no line (its note says so, unshared_note)."""
    return bool(curve.steps)


def _legend_or_why(ax: Any, groups: int, lines: Sequence[Curve]) -> None:
    """The legend of the lines; where there were groups yet none has a line, that said in the plot
    (empty axes read as "no data"; a legend of no line, matplotlib warns of)."""
    if lines:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    elif groups:
        ax.text(0.5, 0.5, NO_SHARED_STEP, ha="center", va="center", transform=ax.transAxes)


def _draw(plt: Any, curves: Sequence[Curve], title: str, ylabel: str) -> bytes:
    lines = list(filter(_drawable, curves))
    fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
    try:
        for curve in lines:
            n = len(curve.runs)
            mean, low, high = (_plottable(v) for v in (curve.mean, curve.low, curve.high))
            # names are data: escaped, so no control character reaches the PNG or a font warning
            (line,) = ax.plot(curve.steps, mean, label=f"{escape.line(curve.label)} (n={n})")
            if n > 1:
                ax.fill_between(curve.steps, low, high, color=line.get_color(), alpha=0.2)
        ax.set_xlabel("step")
        ax.set_ylabel(escape.line(ylabel))
        seeded = any(len(c.runs) > 1 for c in lines)
        title = escape.line(title)
        ax.set_title(f"{title}: mean over seeds, band min..max" if seeded else f"{title}: one run per line")
        ax.grid(alpha=0.3)
        _legend_or_why(ax, len(curves), lines)
        buf = io.BytesIO()
        # fixed metadata: the same runs give the same bytes; tight: the legend beside the axes fits
        try:
            fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight")
        except (ValueError, OverflowError) as err:  # axes no float can span
            raise UserError(
                f"the curve PNG cannot be drawn: {err}",
                hint="a logged value is too extreme to plot; report without the PNG (--no-plot)",
            ) from None
        return buf.getvalue()
    finally:
        plt.close(fig)
