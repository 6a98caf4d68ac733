"""`sweepgen run DIR` on a search sweep as one function; what `status`, `report` and `list` show of
a search (its lines, the search a report is of, `list`'s table with each trial's state). ``run`` is
the command's one entry: a sweep whose spec has `search:` is driven by the search controller
(sweepgen.run.search.controller), any other by ``sweep_run.run_sweep``; the CLI prints the result.

A search prints one line per trial event (started, refused, pruned, complete, failed) through
``Display.say`` as it goes, and a summary; exit 0 once the study holds its ``n`` finished trials
with at least one complete (or the rest still run in another `sweepgen run`), 1 when none
completed, 2 when sweepgen could not write its records (a full or read-only disk: nothing is asked or
started after it), 130 when interrupted (the runs are stopped as a cancel stops them; the next `run`
resumes them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sweepgen import paths
from sweepgen.compile import run_api
from sweepgen.compile.run_api import LOCK_NAME, lock
from sweepgen.errors import ConfigError, Location, UserError
from sweepgen.formats import yamlio
from sweepgen.fs import filenames
from sweepgen.fs.outtree import read_inside
from sweepgen.run.core.base import STATUS_FILE, ExecutorOptions, read_status
from sweepgen.run.core.plan.tasks import check_bundled_trainer, parse_command, parse_done_file, read_lock
from sweepgen.run.core.registry import make_executor
from sweepgen.run.core.sweepfile import replay_guard, sweep_origin, sweep_state
from sweepgen.run.search import owner as search_owner
from sweepgen.run.search import study as search_study
from sweepgen.run.search import view as search_view
from sweepgen.run.search.study import journal_path
from sweepgen.run.start import command_overrides, config_where, program
from sweepgen.run.start.trl import trl_start
from sweepgen.run.sweep.grid import (
    INTERRUPTED,
    Display,
    RunRequest,
    RunResult,
    parse_gpus,
    run_sweep,
    stop_gracefully,
    stop_signals_raise_interrupt,
    time_limit,
)

if TYPE_CHECKING:  # `run --until-decided` only: its statistics load when it is asked for
    from sweepgen.run.report.stats.sequential_record import Rule
    from sweepgen.run.sweep.decide import DecideResult

POLL_S = 0.2
MAX_FAILED_SHOWN = 5  # failed trials listed with their reason by status and report
# Trials a spec alone may have running at once (`search.parallel` x `repeats`): each is a process
# here (or a job on Slurm), and a spec in a pull request asking 10^6 would start them all. Past it the
# person running the search says so with `--jobs N`, as they choose a grid's concurrency.
PARALLEL_CEILING = 64

if TYPE_CHECKING:  # annotations only: the search block loads with the pipeline, for a search sweep
    from sweepgen.compile.run_api import SearchBlock
    from sweepgen.run.search.trials import TrialRenderer


@dataclass
class SearchResult:
    code: int
    plan: str | None = None  # --dry-run: the search as it would run (nothing is started)
    summary: list[str] = field(default_factory=list)  # trials by state and the best one
    elsewhere: int = 0  # trials still running under another `sweepgen run`
    interrupted: bool = False
    resume: str = ""  # the command line that goes on with the search (the recorded one, spelled out)
    cancelled: list[str] = field(default_factory=list)  # trials left open (cancelled, or never run: errors)
    stopped: bool = False  # `sweepgen cancel` asked the search to stop
    errors: list[str] = field(default_factory=list)  # what sweepgen could not write (exit 2)


def run(
    request: RunRequest, display: Display, decide: Rule | None = None
) -> RunResult | SearchResult | DecideResult:
    """`sweepgen run DIR`: the search controller for a search sweep, ``run_sweep`` for any other
    (in rounds, with ``decide``: `run --until-decided`)."""
    spec = _search_spec(request.sweep_dir)
    if spec is not None:
        _refuse_for_search(request, decide)
    if decide is not None:
        from sweepgen.run.sweep.decide import run_until_decided  # noqa: PLC0415 - see TYPE_CHECKING above

        return run_until_decided(request, decide, display)
    if spec is None:
        return run_sweep(request, display)
    return _run_search(request, spec, display)


def _refuse_for_search(request: RunRequest, decide: Rule | None) -> None:
    """The options a search sweep refuses (exit 2), before anything is asked or started: each was
    ignored before, and the search ran runs nobody asked for or left undone what it said."""
    if decide is not None:
        raise UserError(
            "--until-decided adds seeds to a grid; a search sweep chooses its own trials",
            hint="give its search `repeats:` for seeds, and compare the best trials with `sweepgen report`",
        )
    if request.only:  # ignored, it ran every trial the search asks: runs unasked
        raise UserError(
            f"--only {' '.join(request.only)}: a search sweep's runs are the trials its controller asks, "
            "not a list to choose from",
            location=Location(str(request.sweep_dir)),
            hint="leave --only out (`sweepgen run DIR` goes on with the search to its `n` trials); "
            "to stop one trial: `sweepgen cancel DIR --only tNNNN`",
        )
    if request.rerun_failed:  # ignored, it started nothing it said it would
        raise UserError(
            "--rerun-failed: a search sweep never runs a failed trial again (its end is told to the "
            "study, which cannot take it back, and counts among the search's `n`)",
            location=Location(str(request.sweep_dir)),
            hint="leave --rerun-failed out: `sweepgen run DIR` goes on with the search, resuming the "
            "runs of trials still open (interrupted, cancelled, preempted); for more trials raise "
            "`search.n` in the spec (docs/SEARCH.md, *Changing a search*)",
        )


def _search_spec(sweep_dir: Path) -> Any:
    """The spec of ``sweep_dir`` when it is a search sweep, else None (any other sweep runs as before).
    Only a spec whose YAML has a top-level ``search`` key is loaded (and must then be valid)."""
    try:
        recorded = lock.read(str(sweep_dir), str(sweep_dir))
        if recorded is None:
            return None
        # the lock's `spec` is data: read inside the project, no `..`, no link, no FIFO (outtree)
        project = sweep_dir.resolve().parent.parent
        raw = read_inside(str(project), recorded.spec)
        if raw is None:
            return None
        data = yamlio.loads(raw.decode("utf-8"), str(project / recorded.spec)).data
    except (OSError, UnicodeDecodeError, UserError):
        return None  # the grid path reports a broken lock or spec with its own words
    if not isinstance(data, dict) or "search" not in data:
        return None
    from sweepgen.run.search.trials import spec_of  # noqa: PLC0415 - the compile pipeline (jinja2) loads only for a search sweep

    return spec_of(sweep_dir)


def _search_plan(name: str, block: SearchBlock, sweep_dir: Path, resume: str) -> str:
    """What `run --dry-run` says of a search: its trials, sampler, objective, pruner, study, command."""
    pruning = block.prune.method if block.prune else "none"
    study = f"{sweep_dir}/{filenames.SEARCH_DIR}/{filenames.SEARCH_JOURNAL}"
    return (
        f"search {name}: {block.n} trials, {block.parallel} at once, sampler "
        f"{block.sampler}, {block.mode} {block.metric}, pruning "
        f"{pruning}; study in {study}; "
        f"runs with: {resume}"
    )


def _run_search(request: RunRequest, spec: Any, display: Display) -> SearchResult:
    """Drive the search of ``spec`` until its ``n`` trials are finished; stopped as a grid is (a
    graceful stop, Ctrl-C again kills; SIGTERM and SIGHUP as Ctrl-C)."""
    from sweepgen.run.search.controller import SearchController  # noqa: PLC0415 - the controller and the compile pipeline load only for a search sweep
    from sweepgen.run.search.trials import TrialRenderer  # noqa: PLC0415 - as above

    sweep_dir = request.sweep_dir
    # the command line the search was started with, as for a grid (sweep_state): a later `run`
    # without --command runs the same trainer, never the bundled one on foreign configs
    recorded, opts = sweep_state.replayed(sweep_dir, request.options)
    if recorded is not None and request.options != opts:
        display.note(f"using the command line this search was started with: {opts.command_line(sweep_dir)}")
    executor = opts.executor or "local"
    argv = parse_command(opts.command, shell=bool(opts.shell))
    block = run_api.trials.block(spec)
    if argv is not None:  # `--lr 1e-5` on a search over lr: every trial one point
        command_overrides.check_search(argv, list(block.axes))
    resume = opts.command_line(sweep_dir)
    _check_parallel(spec, block, opts.jobs)
    _refuse_committed_study(sweep_dir)
    if request.dry_run:
        _judge_a_trial(TrialRenderer(sweep_dir, spec, command=argv, done_file=None), opts, executor, display)
        return SearchResult(0, plan=_search_plan(spec.name, block, sweep_dir, resume), resume=resume)
    if executor == "local":
        check_bundled_trainer() if argv is None else program.check_found(argv)
    options = _search_options(sweep_dir, opts, block, executor, request.started_s, display.note)
    renderer = TrialRenderer(sweep_dir, spec, command=argv, done_file=parse_done_file(opts.done_file, argv))
    controller = SearchController(sweep_dir, spec, lambda: make_executor(executor, options), renderer)
    sweep_state.write(sweep_dir, opts)  # (once the spec is known to fit the study)
    return _drive_to_end(controller, display, resume)


def _judge_a_trial(
    renderer: TrialRenderer, opts: sweep_state.RunOptions, executor: str, display: Display
) -> None:
    """`run --dry-run` of a search: the points `render` probes that the gate passes, rendered in
    memory (nothing written), through the start checks a trial meets, until one passes: a refusal
    every trial would meet is exit 2 now, as it would be before the run's first trial starts (one
    that reads a sampled value refuses only the trials drawing it, as in the run)."""
    from sweepgen.run.search.trials import Refused  # noqa: PLC0415 - loads with the pipeline, as in _run_search

    ex = make_executor(executor, _search_options(renderer.sweep_dir, opts, renderer.block, executor))
    sampled = [*renderer.block.axes, *(renderer.spec.model.derived or {})]
    planned = (renderer.planned(0, point) for _, point in run_api.trials.probe_points(renderer.spec))
    gpus_each, command = ex.gpus_each(), renderer.command
    for runs in (p for p in planned if not isinstance(p, Refused)):
        configs = [(task, config_where.read_as_trl(task, data)) for task, data in runs]
        args = (renderer.sweep_dir, command, configs, ex.name, sampled, gpus_each)
        if trl_start.planned_trial(*args, display.note):
            return


def _refuse_committed_study(sweep_dir: Path) -> None:
    """A study journal git tracks came with the repository: its trials (values a pull request wrote,
    never run) would count toward the search's ``n``, steer its sampler and may be its best."""
    journal = journal_path(sweep_dir)
    if os.path.lexists(journal):
        replay_guard.refuse_tracked_state(journal, "a search's trials (its Optuna study)")


def _check_parallel(spec: Any, block: SearchBlock, jobs: int | None) -> None:
    """A search's runs at once past ``PARALLEL_CEILING`` only when the command line's ``--jobs``
    allows as many (the spec is the pull request's; the machine is the person's)."""
    at_once = block.parallel * block.repeats
    if at_once <= PARALLEL_CEILING or (jobs is not None and jobs >= at_once):
        return
    raise UserError(
        f"the search runs {at_once:,} trial runs at once (search.parallel {block.parallel:,} x repeats "
        f"{block.repeats}), more than a spec alone may start ({PARALLEL_CEILING})",
        location=spec.loc(("search", "parallel")),
        key="search.parallel",
        hint=f"lower search.parallel, or allow it on the command line: `--jobs {at_once}`",
    )


def _drive_to_end(controller: Any, display: Display, resume: str) -> SearchResult:
    """Drive the search to its end, or until stopped (its runs stopped gracefully on Ctrl-C, and on
    an error where the executor stops its runs then); the controller closed either way."""
    try:
        _drive(controller, display)
    except KeyboardInterrupt:
        if controller.executor is not None:
            stop_gracefully(controller.executor, display)
        controller.interrupted()
        return SearchResult(INTERRUPTED, interrupted=True, resume=resume)
    except BaseException:
        if controller.executor is not None and controller.executor.stop_runs_on_error:
            stop_gracefully(controller.executor, display)
        raise
    finally:
        controller.close()
    return _search_result(controller, resume)


def _search_options(
    sweep_dir: Path,
    opts: sweep_state.RunOptions,
    block: SearchBlock,
    executor: str,
    started_s: float | None = None,
    note: Callable[[str], None] | None = None,
) -> ExecutorOptions:
    """The executor's options for the search's trials (a local executor's checked before anything
    is asked of the study). ``started_s``: when this `run` started, as a grid's: a `cancel` landing
    after the controller's last look at the stop request, before a trial's run took its lock, asked
    the executor to drop the run (queue_cancel.py), and the executor honours that under the lock."""
    options = ExecutorOptions(
        sweep_dir=sweep_dir,
        lock=read_lock(sweep_dir),
        jobs=block.parallel * block.repeats,
        gpus=parse_gpus(opts.gpus),
        per_gpu=opts.per_gpu or 1,
        stop_timeout_s=opts.stop_timeout,
        time_limit_s=time_limit(executor, opts.time_limit, read_lock(sweep_dir), sweep_dir, None),
        wait=True,  # the controller follows every trial, on Slurm too
        started_s=started_s,
        note=note,
    )
    if executor == "local":
        make_executor(executor, options)
    return options


def _search_result(controller: Any, resume: str) -> SearchResult:
    """How a driven search ended: its trials by state, those left open or run elsewhere, and exit 1
    when it was cancelled or no trial completed (and none runs elsewhere); exit 2 when sweepgen could
    not write its records (the trials that never ran left open)."""
    view = search_view.summarize(controller.study, controller.block)
    cancelled = controller.left_open
    cut_short = controller.stopping or controller.faulted
    elsewhere = max(controller.block.n - view.finished - len(cancelled), 0) if not cut_short else 0
    code = 1 if controller.stopping or not (elsewhere or view.complete) else 0
    return SearchResult(
        2 if controller.faults else code,
        summary=view.lines(stopped=cancelled),  # this controller's stopped trials are not running
        elsewhere=elsewhere,
        resume=resume,
        cancelled=list(cancelled),
        stopped=controller.stopping,
        errors=list(controller.faults),
    )


def _drive(controller: Any, display: Display) -> None:
    with stop_signals_raise_interrupt():
        while controller.step():
            _say(controller, display)
            controller.wait(POLL_S)
        _say(controller, display)


def _say(controller: Any, display: Display) -> None:
    for line in controller.events:
        display.say(line)
    controller.events.clear()


def search_failed(sweep_dir: Path) -> bool:
    """A search sweep whose trials have all ended (none running, as many as it asks for) without
    one complete: what makes `run` exit 1 makes `status` exit 1 too. False for any other sweep."""
    try:
        spec = _search_spec(sweep_dir)
    except UserError:
        return False
    if spec is None:
        return False
    view = search_view.load(sweep_dir, run_api.trials.block(spec))
    return view.finished >= view.block.n and view.count("running") == 0 and not view.complete


def search_lines(
    sweep_dir: Path,
    *,
    diff: bool,
    view: search_view.SearchView | None = None,
    live: Collection[str] | None = None,
) -> list[str]:
    """For `status` and `report` on a search sweep: trials by state and the best trial, with (for
    `report`, ``diff``) its config's differences from the base; nothing for any other sweep.
    ``view``: the study as the caller already loaded it (`report` reads it once). ``live``: the
    names of the runs that are queued or running (`status`): a trial open in the study that no
    `run` drives and none of whose runs is live is said open, not running."""
    if view is None:
        loaded = _loaded_view(sweep_dir)
        if isinstance(loaded, list):
            return loaded
        view = loaded
    block = view.block
    driven = search_owner.any_alive(search_study.state_dir(sweep_dir))
    stopped = () if live is None or driven else _without_live_runs(view, live)
    lines = [*view.lines(stopped), *_undriven(sweep_dir, view, block), *_failed_trials(view)]
    if diff and view.best is not None:
        lines.append(f"{view.best.name} differs from the base in:")
        lines += [
            f"  {path}: {old!r} -> {new!r}" for path, old, new in search_view.best_diff(sweep_dir, view)
        ]
    return lines


def search_cut_line(sweep_dir: Path) -> tuple[int | None, str] | None:
    """For `status --format json|csv`: a search sweep's study journal's cut last line (None when it
    has none) and the note naming it; None for a sweep that is no search (or whose spec does not
    load: the table's note says why)."""
    loaded = _loaded_view(sweep_dir)
    if isinstance(loaded, list):
        return None
    line = loaded.cut_line
    return line, "" if line is None else search_view.cut_note(line)


def _without_live_runs(view: search_view.SearchView, live: Collection[str]) -> set[str]:
    """The running trials none of whose runs (``t0007``, or ``t0007_r0``... with repeats) is live."""
    busy = {name.split("_r", 1)[0] for name in live}
    return {row.name for row in view.rows if row.state == "running" and row.name not in busy}


def _loaded_view(sweep_dir: Path) -> search_view.SearchView | list[str]:
    """The search's study as its spec's search block reads it; else the lines to show instead
    (none for a sweep that is no search, a note for a spec that does not load)."""
    try:
        spec = _search_spec(sweep_dir)
    except UserError as err:
        return [f"note: search not shown: {err.message}"]
    return [] if spec is None else search_view.load(sweep_dir, run_api.trials.block(spec))


def _undriven(sweep_dir: Path, view: search_view.SearchView, block: SearchBlock) -> list[str]:
    """An unfinished search no live `run` drives: how to go on with it (the recorded command line:
    a plain `run` would start the bundled trainer on these configs)."""
    if view.finished >= block.n or not view.rows:
        return []
    if search_owner.any_alive(search_study.state_dir(sweep_dir)):
        return []
    return [
        f"no `sweepgen run` drives this search now: `{sweep_state.recorded_line(sweep_dir)}` goes on with it"
    ]


def _failed_trials(view: search_view.SearchView) -> list[str]:
    """The failed trials with their reasons, the first MAX_FAILED_SHOWN of them."""
    failed = [r for r in view.rows if r.state == "failed"]
    lines = [f"  {r.name} failed: {r.reason}" for r in failed[:MAX_FAILED_SHOWN]]
    if len(failed) > MAX_FAILED_SHOWN:
        lines.append(f"  ... and {len(failed) - MAX_FAILED_SHOWN} more failed trial(s)")
    return lines


@dataclass(frozen=True)
class ReportTarget:
    search_dir: Path | None  # the search sweep `report DIR` is of (None: not a search)
    spec: Any  # its spec (None: not a search, or its spec does not load now)
    metric: str | None  # the metric to report: as given, else the search's own
    mode: str  # as given, else the search's own
    note: str | None = None  # why a search's section cannot be shown (never left out silently)


def report_target(directory: Path, metric: str | None, mode: str, *, mode_given: bool) -> ReportTarget:
    """The search `report DIR` is of, and the metric and mode it reports by: a search sweep is
    reported by the metric it optimised and its mode unless --metric (or --mode) says otherwise."""
    search_dir, spec, note = _search_of(directory)
    if spec is not None and metric is None:
        block = run_api.trials.block(spec)
        metric, mode = block.metric, mode if mode_given else block.mode
    return ReportTarget(search_dir, spec, metric, mode, note)


def _search_of(directory: Path) -> tuple[Path | None, Any, str | None]:
    """(sweep folder, spec, note) of the search DIR reports: DIR itself, or the one sweep every run
    of a runs folder names in its status file (found from here: sweep_origin); (None, None, None)
    for any other sweep, (folder, None, why) for a search whose spec does not load now, and
    (None, None, why) when the sweep the runs name is found nowhere. A folder without a study is
    no search to show (nor a search before its first `run`): its lock is not read here."""
    if (directory / LOCK_NAME).is_file():
        found: str | None = str(directory)
    else:
        found, lost = _sweep_the_runs_name(directory)
        if lost is not None:
            return None, None, lost
    if found is None or not _has_study(found):
        return None, None, None
    try:
        return Path(found), _search_spec(Path(found)), None
    except UserError as err:  # a spec that no longer loads: the report goes on and says why
        why = f"no search section on the page: the search's spec does not load ({err.message})"
        return Path(found), None, why


def _sweep_the_runs_name(directory: Path) -> tuple[str | None, str | None]:
    """(the one sweep folder every run of a runs folder names, None when they name none, several, or
    one without a study; the note when a sweep they name is found nowhere)."""
    named: set[str | None] = set()
    for path in directory.glob(f"*/{STATUS_FILE}"):
        found = _sweep_named_by(path.parent)
        if found is None:
            continue
        sweep, lost = found
        if lost is not None:
            return None, lost
        named.add(sweep)
        if not _has_study(next(iter(named))) or len(named) > 1:
            return None, None  # a grid's runs (one status read), or runs of several sweeps
    return (named.pop() if len(named) == 1 else None), None


def _sweep_named_by(run_dir: Path) -> tuple[str | None, str | None] | None:
    """(the sweep folder a run's status names, None when none; the note when that folder is found
    nowhere); None for an unusable status file (the report lists it with its run)."""
    try:
        status = read_status(run_dir)
    except ConfigError:
        return None
    recorded = status.sweep_dir if status is not None else None
    origin = None if recorded is None else sweep_origin.locate(run_dir, recorded)
    if recorded is not None and origin is None:
        return None, sweep_origin.lost_note(recorded)
    return (None if origin is None else str(origin.sweep_dir)), None


def _has_study(sweep_dir: str | None) -> bool:
    return sweep_dir is not None and journal_path(Path(sweep_dir)).is_file()


@dataclass(frozen=True)
class Matrix:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    doc: dict[str, Any]  # --format json


def list_matrix(spec_path: str, out_root: str) -> Matrix:
    """`list SPEC`'s table: one row per variant, one column per varying path (``api.matrix``). A
    search spec's variants are its trials so far (from the lock of its sweep folder under
    ``out_root``); each row also gets the trial's state and value from the study, and the title the
    search's counts."""
    from sweepgen.compile.run_api import api  # noqa: PLC0415 - the compile pipeline (jinja2) loads for `list`, not for `report` or `status`

    expansion, varying = api.matrix(spec_path, out_root)
    values = [
        {p: val for p in varying if (val := paths.get(v.config, p)) is not paths.MISSING}
        for v in expansion.variants
    ]
    rows = [[v.name] + [vals.get(p) for p in varying] for v, vals in zip(expansion.variants, values)]
    doc: dict[str, Any] = {
        "varying": varying,
        "variants": [{"name": v.name, "values": vals} for v, vals in zip(expansion.variants, values)],
    }
    title = f"{expansion.spec.path}: {len(rows)} variant(s)"
    columns = ["variant", *varying]
    if run_api.trials.is_search(expansion.spec):
        title, metric = _add_trials(expansion.spec, Path(out_root), rows, doc["variants"])
        columns += ["state", metric]
    return Matrix(title, columns, rows, doc)


def _add_trials(
    spec: Any, out_root: Path, rows: list[list[Any]], variants: list[dict[str, Any]]
) -> tuple[str, str]:
    """A search's rows (and their JSON variants) get each trial's state and value from its study
    (a trial's runs share its name before ``_r``); (the title with the search's counts, its metric)."""
    block = run_api.trials.block(spec)
    counts, trials = _trial_states(out_root / spec.name, block)
    for row, variant in zip(rows, variants):
        state, value = trials.get(str(row[0]).partition("_r")[0], ("not in the study", None))
        row += [state, value]
        variant.update(state=state, value=value)
    return f"{spec.path}: {len(rows)} trial run(s) rendered; " + counts, block.metric


def _trial_states(sweep_dir: Path, block: Any) -> tuple[str, dict[str, tuple[str, Any]]]:
    """For `list` on a search spec: the search's one-line counts, and trial name -> (state, value)
    from the study. A pruned trial shows the step it was stopped at and no value: its last reported
    value is no result."""
    view = search_view.load(sweep_dir, block)
    found: dict[str, tuple[str, Any]] = {
        r.name: (f"pruned at step {r.steps}" if r.steps else "pruned", None)
        if r.state == "pruned"
        else (r.state, r.value)
        for r in view.rows
    }
    return view.lines()[0], found
