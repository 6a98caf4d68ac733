"""`status` and `cancel` as functions: a sweep's runs found (wherever `sweepgen run` was started),
looked at or followed until none is live, or cancelled through the executor that runs them. The
CLI prints what these return and exits with their code: 0 no run failed or was cancelled (`status`)
or every live run was cancelled (`cancel`); 1 otherwise.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from sweepgen.errors import SweepgenError, UserError
from sweepgen.fs import confine, filenames, runfs
from sweepgen.run.core import registry, runlock
from sweepgen.run.core.advice import for_search
from sweepgen.run.core.base import RunState, RunStatus, RunTask, read_status
from sweepgen.run.core.plan.tasks import load_sweep, select
from sweepgen.run.core.registry import cancel_runs, settle_for_cancel, wait_for_an_end
from sweepgen.run.core.run_view import RunView
from sweepgen.run.core.stopping import queue_cancel
from sweepgen.run.core.stopping.stop_request import CANCELLED_ALONE, CANCELLED_BY_COMMAND
from sweepgen.run.core.sweepfile import sweep_state
from sweepgen.run.search import stop as search_stop
from sweepgen.run.sweep.only import with_groups
from sweepgen.run.sweep.start import search_failed
from sweepgen.run.sweep.status import collect, problems

FOLLOW_POLL_S = 2.0
# how long `cancel` waits for a run whose start is under way (its lock taken, `running` not yet
# recorded) to be recorded started, so it is cancelled instead of left to run
STARTING_WAIT_S = 30.0
STARTING_POLL_S = 0.05
LOCAL = "local"  # the local executor's name (registry.EXECUTORS): its statuses name a supervisor


@dataclass(frozen=True)
class Located:
    """The runs asked for; ``under`` is the folder their relative run directories were found in
    when that is not the current directory (None when they are where they say)."""

    tasks: list[RunTask]
    under: Path | None = None


@dataclass(frozen=True)
class StatusOutcome:
    views: list[RunView]
    under: Path | None  # as Located.under
    warnings: list[str]  # what is not known (e.g. sacct down), once each
    search_failed: bool = False  # a search whose trials all ended, none complete (start.search_failed)

    @property
    def exit_code(self) -> int:
        return 1 if problems(self.views) or self.search_failed else 0


@dataclass(frozen=True)
class CancelOutcome:
    views: list[RunView]
    under: Path | None  # as Located.under
    cancelled: int  # runs cancelled
    resume: str | None  # the command line that resumes them (the sweep's own, --rerun-failed)
    elsewhere: list[RunView]  # live runs no executor reaches from here (another machine's processes)
    search_stopped: bool = False  # a search: its controllers were asked to stop (search_stop)
    ended: list[RunView] = field(default_factory=list)  # runs that ended by themselves meanwhile
    # a live local `sweepgen run` holding runs of it queued was asked to drop them (queue_cancel)
    queued_asked: bool = False
    # ... or could not be asked (its request could not be written): such runs, if a live `run` has
    # them queued, still start; not cancelled, as a run on another machine is not (exit 1)
    queued_unasked: bool = False
    # runs whose start was still under way when `cancel` stopped waiting for it (a `run` stopped or
    # slow between taking a run's lock and its supervisor recording it): a grid's `run` drops them
    # before their trainer starts ...
    held_starting: list[str] = field(default_factory=list)
    # ... a search's controller hears no such request: not cancelled (exit 1)
    held_unheard: list[str] = field(default_factory=list)
    # live runs started again (another attempt, by another `sweepgen run`) after this `cancel` looked
    # at them and before it stopped them (it was stopped, SIGSTOP, meanwhile): not stopped (exit 1)
    restarted: list[RunView] = field(default_factory=list)

    @property
    def nothing_live(self) -> bool:
        return not self.cancelled and not self.elsewhere and not self.ended and not self.restarted

    @property
    def exit_code(self) -> int:
        return 1 if self.elsewhere or self.restarted or self.queued_unasked or self.held_unheard else 0


def locate(sweep_dir: Path, only: Sequence[str]) -> Located:
    """The sweep's runs named in ``only`` (all when empty). Run directories are relative to where
    `sweepgen run` was started: from another directory they are looked for under each folder above
    the sweep folder (the project root, usually). If they are nowhere and the sweep folder is outside
    this directory, that is an error saying why, instead of every run shown as never started."""
    # the command is irrelevant here (nothing is run); a placeholder keeps non-YAML sweeps loadable
    sweep = load_sweep(sweep_dir, command=("{config}",))
    tasks = select(sweep.tasks, with_groups(sweep, only))
    relative = [t for t in tasks if not t.run_dir.is_absolute()]
    if not relative or any(t.run_dir.exists() for t in tasks):
        return Located(tasks)
    above = _found_above(sweep_dir, tasks, relative)
    if above is not None:
        return above
    if Path.cwd() not in Path(sweep_dir).resolve().parents:
        raise UserError(
            f"none of the {len(tasks)} run directories of {sweep_dir} exists here ({Path.cwd()}) nor "
            "under any folder above the sweep folder",
            hint="run directories are relative to where `sweepgen run` was started; run `sweepgen "
            "status` from there",
        )
    return Located(tasks)


def _found_above(sweep_dir: Path, tasks: Sequence[RunTask], relative: Sequence[RunTask]) -> Located | None:
    """The runs under the nearest folder above the sweep folder that holds one of their relative
    run directories; None when no folder does."""
    for base in Path(sweep_dir).resolve().parents:
        if any((base / t.run_dir).exists() for t in relative):
            moved = [t if t.run_dir.is_absolute() else replace(t, run_dir=base / t.run_dir) for t in tasks]
            return Located(moved, base)
    return None


def status(
    sweep_dir: Path,
    only: Sequence[str] = (),
    *,
    wait: bool = False,
    show: Callable[[list[RunView]], None] | None = None,
    poll_s: float = FOLLOW_POLL_S,
) -> StatusOutcome:
    """Every run's view; with ``wait``, collected again every ``poll_s`` until none is queued or
    running, each collection handed to ``show`` (the first one too) as it comes."""
    located = locate(sweep_dir, only)
    searched = search_stop.state_dir_of(sweep_dir) is not None

    def look() -> list[RunView]:
        return _as_searched(collect(located.tasks, persist=False), searched)  # a reader: writes nothing

    views = look()
    if wait:
        views = _until_settled(look, views, show or _show_nothing, poll_s)
    warnings = list(dict.fromkeys(v.note for v in views if v.note))
    failed = not only and search_failed(sweep_dir)
    return StatusOutcome(views, located.under, warnings, failed)


def _until_settled(
    look: Callable[[], list[RunView]],
    views: list[RunView],
    show: Callable[[list[RunView]], None],
    poll_s: float,
) -> list[RunView]:
    """The views once none is queued or running, collected (``look``) every ``poll_s``, and at once
    when a local run's supervisor ends (registry.wait_for_an_end: its end is shown as it comes, not
    up to ``poll_s`` later); each collection (the first, ``views``, too) is shown as it comes."""
    show(views)
    while any(v.live for v in views):
        if not wait_for_an_end([v.status for v in views if v.live and v.status is not None], poll_s):
            time.sleep(poll_s)
        views = look()
        show(views)
    return views


def _as_searched(views: list[RunView], searched: bool) -> list[RunView]:
    """A search sweep's views with their reasons' advice said the search's way (search.advice: a
    search refuses `--rerun-failed`); any other sweep's as they are."""
    if not searched:
        return views
    return [
        replace(v, status=replace(v.status, reason=for_search(v.status.reason)))
        if v.status and v.status.reason
        else v
        for v in views
    ]


def _show_nothing(views: list[RunView]) -> None:
    """`status --wait` with nobody to show the collections to: only the last is returned."""


def _stop_search(search: Path | None, only: Sequence[str]) -> Path | None:
    """Ask the search's controller (``search``: its state folder; None: no search) to stop, before
    any run is stopped: it then reads a cancelled trial as the search stopping, never as a failed
    trial to replace with a new one. The folder asked; None where none was (`--only RUN` stops that
    run; its search goes on)."""
    stopped = search if not only else None
    if stopped is not None:
        search_stop.request(stopped)
    return stopped


def cancel(
    sweep_dir: Path, only: Sequence[str] = (), say: Callable[[str], None] | None = None
) -> CancelOutcome:
    """Stop the sweep's queued and running runs, whichever executor runs them and whether or not
    the `sweepgen run` that started them lives, and return once each has ended and recorded its end
    (cancelled). Runs no executor can reach from here (a process on another machine) are returned
    in ``elsewhere``, untouched."""
    located = locate(sweep_dir, only)
    search = search_stop.state_dir_of(sweep_dir)
    stopped = _stop_search(search, only)
    # before the settle and the look: a start after them finds the request (a Slurm submission
    # reads it under the submission lock the settle waits for), one before them is seen running
    queued, unasked = _drop_queued(located.tasks, say, alone=bool(only))
    for line in settle_for_cancel(sweep_dir, located.tasks):  # a start under way, or one left unrecorded
        (say or _say_nothing)(line)
    views, held = _after_starts(located.tasks, collect(located.tasks), say, alone=bool(only))
    views = _as_searched(views, search is not None)
    # a grid's `run` drops them before their trainer starts; a search's controller hears no drop
    dropped, unheard = ([], held) if search else (held, [])
    by_executor = _live_by_executor(views)
    unreachable: set[str] = set()
    reason = CANCELLED_ALONE if only else CANCELLED_BY_COMMAND
    for executor, runs in by_executor.items():
        unreachable.update(cancel_runs(executor, runs, reason))
    if not by_executor:
        # a search resumes its open trials with a plain `run`
        resume = None if search is None else sweep_state.recorded_line(sweep_dir)
        searched = stopped is not None
        return CancelOutcome(
            views,
            located.under,
            0,
            resume,
            [],
            searched,
            queued_asked=queued,
            queued_unasked=unasked,
            held_starting=dropped,
            held_unheard=unheard,
        )
    views = _as_searched(collect(located.tasks), search is not None)
    looked = {task.name: status for runs in by_executor.values() for task, status in runs}
    elsewhere, restarted, ended = _not_cancelled(views, looked, unreachable)
    cancelled = len(looked) - len(elsewhere) - len(ended) - len(restarted)
    resume = _resume_line(sweep_dir, by_executor, searched=search is not None, only=only)
    return CancelOutcome(
        views,
        located.under,
        cancelled,
        resume,
        elsewhere,
        stopped is not None,
        ended,
        queued_asked=queued,
        queued_unasked=unasked,
        held_starting=dropped,
        held_unheard=unheard,
        restarted=restarted,
    )


def _started_again(view: RunView, looked: RunStatus) -> bool:
    """A run not reached by the stop asked of the attempt ``looked`` at, that runs now as another
    attempt (another supervisor, another job): started again after the look, by another `sweepgen
    run` (this `cancel` stopped meanwhile). Before, it was said to run on another machine."""
    return view.status is not None and _attempt(view.status) != _attempt(looked)


def _attempt(status: RunStatus) -> tuple[object, ...]:
    """What tells one attempt of a run from another: its number, supervisor and job."""
    return (status.attempt, status.ids.get("pid"), status.ids.get("job_id"))


def _say_nothing(line: str) -> None:
    """`cancel` with nobody to tell what it did before it looked."""


def _drop_queued(
    tasks: Sequence[RunTask], say: Callable[[str], None] | None, *, alone: bool
) -> tuple[bool, bool]:
    """Ask each live local `sweepgen run` to drop the runs of ``tasks`` it has queued and not
    started (queue_cancel.py; ``alone``: for `--only`), in every runs folder that exists (a `run`
    makes its own at its start); whether it was asked anywhere, and whether a folder's request
    could not be written (said)."""
    asked = unasked = False
    by_folder: dict[Path, list[str]] = {}
    for task in tasks:
        if not _finished_on_file(task):  # a finished run is never started again: nothing to ask
            by_folder.setdefault(task.run_dir.parent, []).append(task.run_dir.name)
    for folder, names in by_folder.items():
        try:
            if not _request_folder(folder):
                continue  # a link is not followed; nothing else holds queued runs
            queue_cancel.ask(folder, names, alone=alone)
            asked = True
        except (FileNotFoundError, NotADirectoryError):
            continue  # not made, and not ours to make: no `run` from here has runs queued there
        except OSError as err:
            unasked = True
            if say is not None:
                say(
                    f"warning: could not write {folder / queue_cancel.REQUEST_FILE}: {err.strerror or err}; "
                    "a live `sweepgen run` still starts the runs it has queued there (stop it with Ctrl-C)"
                )
    return asked, unasked


def _request_folder(folder: Path) -> bool:
    """Whether ``folder`` (a runs folder) is one to leave a request in: a folder, not a link. One
    not made yet is made where it lies inside this directory, as a `sweepgen run` from here makes
    it: a `run` just started, still loading when this `cancel` came, has not made it yet, and
    makes and fills its queue from it next (before, such a `run` heard nothing and started every
    run this `cancel` had said nothing about). FileNotFoundError where it is not made."""
    try:
        return stat.S_ISDIR(runfs.lstat(folder).st_mode)
    except FileNotFoundError:
        if confine.resolve_inside(os.getcwd(), os.path.relpath(folder)) is None:
            raise
    runfs.makedirs(folder)  # never through a link (ELOOP), as `run` makes it
    return True


def _finished_on_file(task: RunTask) -> bool:
    try:
        status = read_status(task.run_dir)
    except (OSError, SweepgenError):
        return False  # unreadable: it may well be queued
    return status is not None and status.state is RunState.FINISHED


def _not_cancelled(
    views: list[RunView], looked: Mapping[str, RunStatus], unreachable: set[str]
) -> tuple[list[RunView], list[RunView], list[RunView]]:
    """Of the runs asked to stop (each with the status it was asked by): those no executor could
    reach from here (still live), those started again since (_started_again), and those that ended
    by themselves meanwhile."""
    live = [v for v in views if v.task.name in unreachable and v.live]
    ended = [v for v in views if v.task.name in looked and _ended_by_itself(v, v.task.name in unreachable)]
    return (*_apart(live, lambda v: not _started_again(v, looked[v.task.name])), ended)


def _apart(views: list[RunView], keep: Callable[[RunView], bool]) -> tuple[list[RunView], list[RunView]]:
    """``views`` that ``keep`` keeps, and the others."""
    kept = [v for v in views if keep(v)]
    return kept, [v for v in views if v not in kept]


def _ended_by_itself(view: RunView, unreached: bool) -> bool:
    """A run that ended by itself while `cancel` stopped it: between the look and the stop (its
    supervisor gone: ``unreached``), or as the stop came (too late to stop anything): finished, or
    a local run in any end but cancelled (its supervisor records every stop it acts on so)."""
    if view.live or view.status is None:
        return False
    local_end = view.status.executor == LOCAL and view.state is not RunState.CANCELLED
    return unreached or view.state is RunState.FINISHED or local_end


def _after_starts(
    tasks: Sequence[RunTask], views: list[RunView], say: Callable[[str], None] | None, *, alone: bool
) -> tuple[list[RunView], list[str]]:
    """``views``, collected again once each run whose start is under way (a live process holds its
    lock, its status does not say it runs yet: a `sweepgen run` between taking the lock and its
    supervisor recording `running`) is recorded started or let go, for at most STARTING_WAIT_S;
    and the runs still starting then. Without this wait such a run would be left out of the cancel
    and run to its end. Each is asked to be dropped first, now that its starter is known to have
    started before this request (queue_cancel.py): a `run` held up past the wait (SIGSTOP) records
    it cancelled before its trainer starts (supervise.py), so saying so is true."""
    starting = [v.task for v in views if _starting(v)]
    if not starting:
        return views, []
    _drop_queued(starting, say, alone=alone)
    if say is not None:
        say(f"waiting for the start of {', '.join(t.name for t in starting)} to be recorded, to cancel it")
    _wait_started(starting)
    views = collect(tasks)
    return views, [v.task.name for v in views if _starting(v)]


def _wait_started(starting: Sequence[RunTask]) -> None:
    """Until no run of ``starting`` is still starting, for at most STARTING_WAIT_S: a start that
    never gets recorded (a wedged `sweepgen run`) must not hold the cancel for ever."""
    deadline = time.monotonic() + STARTING_WAIT_S
    while any(_starting(v) for v in collect(starting)) and time.monotonic() < deadline:
        time.sleep(STARTING_POLL_S)


def _starting(view: RunView) -> bool:
    """A live process holds the run's lock, and its status names no live process: not started
    yet (never started, or an earlier attempt that ended), or `running` from an earlier attempt
    whose process is gone (a `--rerun-failed` of a lost run, between its lock and its supervisor's
    `running`). That status's pid is nobody's now: asking it to stop stops nothing."""
    if view.unreadable is not None or not runlock.is_held(view.task.run_dir):
        return False
    return not view.live or (view.status is not None and _gone(view.status))


def _gone(status: RunStatus) -> bool:
    """Whether the local supervisor a live status names is gone. (A Slurm run's lock is its job's,
    and Slurm answers for it: asked by `cancel` itself.)"""
    return status.executor == LOCAL and not registry.status_is_alive(status)


def _live_by_executor(views: Sequence[RunView]) -> dict[str, list[tuple[RunTask, RunStatus]]]:
    """The live runs, by the executor their status names."""
    by_executor: dict[str, list[tuple[RunTask, RunStatus]]] = {}
    for view in views:
        if view.live and view.status is not None:
            by_executor.setdefault(view.status.executor, []).append((view.task, view.status))
    return by_executor


def _resume_line(
    sweep_dir: Path, by_executor: Mapping[str, object], *, searched: bool, only: Sequence[str] = ()
) -> str:
    """The command that resumes what was cancelled: the command line the sweep was started with
    (so it runs the same trainer), on the executor the runs went to, choosing the same runs."""
    recorded = sweep_state.read(sweep_dir) or sweep_state.RunOptions()
    others = [name for name in by_executor if name != registry.DEFAULT]
    if others:  # the runs went to another executor than the default: the resume goes there too
        recorded = replace(recorded, executor=others[0])
    # (a search resumes its open trials with a plain `run`: --rerun-failed is a grid's)
    extra = () if searched else (*_scope(sweep_dir, only), "--rerun-failed")
    return recorded.command_line(sweep_dir, *extra)


def _scope(sweep_dir: Path, only: Sequence[str]) -> tuple[str, ...]:
    """The words that make the resume start no run that was not asked for: `--until-decided` for a
    sweep run in rounds (its rule is recorded: the rounds go on, never every seed of the grid),
    else the `--only` given to `cancel`."""
    try:
        in_rounds = stat.S_ISREG(runfs.lstat(sweep_dir / filenames.DECIDE_STATE).st_mode)
    except OSError:
        in_rounds = False
    if in_rounds:
        return ("--until-decided",)
    return tuple(word for name in only for word in ("--only", name))
