"""`sweepgen run DIR` as one function: ``run_sweep(request, display) -> RunResult``.

It decides everything `run` does (the command line a sweep was started with, which runs start, how
they are followed, when to wait for runs another `sweepgen run` holds, the exit code); the CLI only
parses the options and prints. ``Display`` is how progress reaches the terminal while runs go on;
a test passes a silent one.

Exit codes (docs/RUN.md): 0 every run in scope finished (with a Slurm submission that does not
wait: every run in scope finished or was submitted by this command); 1 a run failed or was
cancelled, or is still running under another `sweepgen run` and this one does not wait for it
("still running elsewhere"); 2 bad input, or sweepgen could not keep its records; 130 interrupted.
"""

from __future__ import annotations

import contextlib
import functools
import shlex
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from sweepgen.compile.run_api import LOCK_NAME, Lock, placed
from sweepgen.errors import Location, UserError
from sweepgen.run.core import boot_clock, runlock
from sweepgen.run.core.base import (
    HELD_ENDED,
    LOG_FILE,
    LOST,
    RETRYABLE,
    TERMINAL,
    Decision,
    Executor,
    ExecutorOptions,
    RunState,
    RunStatus,
    RunTask,
    effective_state,
    ended_on_record,
    plan,
    read_status,
    unchanged_since,
)
from sweepgen.run.core.plan.data_digest import stale_cause
from sweepgen.run.core.plan.tasks import (
    Sweep,
    check_bundled_configs,
    check_bundled_trainer,
    load_sweep,
    parse_command,
    parse_done_file,
    select,
)
from sweepgen.run.core.registry import (
    executor_class,
    make_executor,
    running_note,
    status_is_alive,
    wait_for_an_end,
)
from sweepgen.run.core.stopping import stop_signals
from sweepgen.run.core.sweepfile import sweep_state
from sweepgen.run.core.sweepfile.sweep_state import RunOptions
from sweepgen.run.logs.progress import log_tail
from sweepgen.run.report import committed
from sweepgen.run.start import command_overrides, program
from sweepgen.run.start.trl import trl_start
from sweepgen.run.sweep.only import with_groups
from sweepgen.run.sweep.status import record_observed

POLL_S = 0.5
ELSEWHERE_POLL_S = 1.0
LOG_TAIL_LINES = 20
INTERRUPTED = 130
# a run followed elsewhere whose lock was let go without it being started (its status is the one
# planned): this `run` plans it again
LET_GO = "not started: whoever held its lock let it go without starting it"
# a run followed whose end is on record while another process still holds its lock (ended_on_record)
HELD_AFTER_END = "ended (on record); waiting for the process still holding its lock to let it go"


@dataclass(frozen=True)
class RunRequest:
    sweep_dir: Path
    options: RunOptions  # how runs start; None fields are taken from the sweep's recorded run state
    only: tuple[str, ...] = ()
    rerun_failed: bool = False
    dry_run: bool = False
    wait: bool | None = None  # None: the executor's default (local: yes; Slurm: no)
    # what a hint's command adds to choose the same runs (`--until-decided`: a round's hint goes on
    # with the rounds); none: the given --only, so no hint starts runs that were not asked for
    scope: tuple[str, ...] | None = None
    # when this `sweepgen run` started, on the boot clock (kept over `--until-decided`'s rounds): a
    # `cancel` asked since drops the runs it has queued and not started
    started_s: float | None = field(default_factory=boot_clock.now_s)

    def scope_words(self) -> tuple[str, ...]:
        if self.scope is not None:
            return self.scope
        return tuple(word for name in self.only for word in ("--only", name))


@dataclass
class FailedRun:
    name: str
    reason: str
    log: Path
    tail: list[str]


@dataclass
class RunResult:
    code: int
    decisions: list[Decision]
    live: dict[str, RunStatus]
    options: RunOptions  # the command line in force (given, or recorded before)
    describe: list[str] = field(default_factory=list)  # --dry-run: what would start, and how
    submitted: bool = False  # a Slurm submission that does not wait: `live` holds the submissions
    failed: list[FailedRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines for stderr, in order
    errors: list[str] = field(default_factory=list)  # sweepgen's own faults (exit 2)


class Progress(Protocol):
    def say(self, line: str) -> None: ...
    def update(self, live: Mapping[str, RunStatus]) -> None: ...


class Display(Protocol):
    """What `run` shows while it works; the final results are the caller's to print."""

    def note(self, line: str) -> None: ...
    def say(self, line: str) -> None: ...  # an event as it happens (a search's trials), on stdout
    def following(self, decisions: Sequence[Decision]) -> AbstractContextManager[Progress]: ...


def run_sweep(request: RunRequest, display: Display) -> RunResult:
    """Plan and run the sweep in ``request.sweep_dir``; the result says what happened and the code."""
    opts = _merged_options(request, display)
    executor = opts.executor or "local"
    gpu_ids, per_gpu = _gpu_options(opts, executor)
    argv = parse_command(opts.command, shell=bool(opts.shell))
    sweep, tasks = _selected(request, opts, executor, argv)
    waiting = request.wait if request.wait is not None else executor == "local"
    options = _executor_options(request, opts, sweep, (gpu_ids, per_gpu), display)
    ex = make_executor(executor, options)
    resume = functools.partial(trl_start.resumed, request.sweep_dir, argv, note=display.note)
    decisions = resume(_planned(request, ex, tasks, display))
    to_start = [d.task for d in decisions if d.start]
    _refuse_before_start(request, ex, argv, to_start, display)
    if request.dry_run:
        lines = ex.describe(to_start) if to_start else ["nothing to start"]
        return RunResult(0, decisions, {}, opts, describe=lines)
    sweep_state.write(request.sweep_dir, opts)
    result = RunResult(0, decisions, {}, opts)
    faults: list[str] = []
    interrupted = _start_all(ex, to_start, display, result, gpu_ids, faults)
    if not interrupted and waiting:
        fresh = functools.partial(make_executor, executor, options)
        again = _Again(request.rerun_failed, fresh, gpu_ids, faults, resume)
        interrupted = _follow_and_start_again(again, display, result)
    result.code = _finish(request, result, interrupted, faults)
    return result


def _planned(request: RunRequest, ex: Executor, tasks: list[RunTask], display: Display) -> list[Decision]:
    """What to start, from the runs' true states; stale runs refused, runs others finished said."""
    if not request.dry_run:
        ex.settle()  # what a `run` that died left half done, so the plan reads true states
        record_observed(tasks)  # what only Slurm knows (a job's end), which `status` only shows
    decisions = plan(tasks, rerun_failed=request.rerun_failed, is_alive=status_is_alive)
    _refuse_stale(decisions, request.sweep_dir)
    for line in _finished_by_others(decisions):
        display.note(line)
    return decisions


def _finished_by_others(decisions: Sequence[Decision]) -> list[str]:
    """The runs not started because their files say they finished, where those files are not this
    user's alone (a shared runs folder: a teammate's run, or a status and summary planted there):
    said, never taken silently."""
    lines = []
    for d in decisions:
        files = [] if d.start or d.state is not RunState.FINISHED else committed.foreign_files(d.task.run_dir)
        if files:
            lines.append(
                f"{d.task.name} is taken as finished from files that are not yours alone "
                f"({d.task.run_dir}: {', '.join(files)}) and is not started; if nobody you trust ran it, "
                "move its folder away and run again"
            )
    return lines


def _refuse_before_start(
    request: RunRequest, ex: Executor, argv: tuple[str, ...] | None, to_start: list[RunTask], display: Display
) -> None:
    """What would make every run wrong or fail, refused before any starts (exit 2); what could not
    be judged, said (display.note)."""
    at_once = ex.at_once(len(to_start))
    trl_start.check(request.sweep_dir, argv, to_start, at_once, ex.name, ex.gpus_each(), display.note)
    if to_start and argv is not None and ex.name == "local" and not request.dry_run:
        program.check_found(argv)


def _executor_options(
    request: RunRequest, opts: RunOptions, sweep: Sweep, gpus: tuple[tuple[str, ...], int], display: Display
) -> ExecutorOptions:
    executor = opts.executor or "local"
    return ExecutorOptions(
        sweep_dir=request.sweep_dir,
        lock=sweep.lock,
        jobs=opts.jobs,
        gpus=gpus[0],
        per_gpu=gpus[1],
        # local children are always followed; --no-wait there only means: do not wait for runs
        # another `sweepgen run` holds
        wait=None if executor == "local" else request.wait,
        stop_timeout_s=opts.stop_timeout,
        time_limit_s=time_limit(executor, opts.time_limit, sweep.lock, request.sweep_dir, display),
        started_s=request.started_s,
        note=display.note,
    )


@dataclass(frozen=True)
class _Again:
    """What starting runs again takes: the plan's --rerun-failed, a fresh executor, the GPUs, and
    the faults of every executor so far."""

    rerun_failed: bool
    executor: Callable[[], Executor]
    gpu_ids: Sequence[str]
    faults: list[str]
    resume: Callable[[Sequence[Decision]], list[Decision]]  # trl_start.resumed of this sweep


def _follow_and_start_again(again: _Again, display: Display, result: RunResult) -> bool:
    """Follow the runs held elsewhere; those whose holder let them go without starting them (a
    `sweepgen run` killed before its run started, a `status` that held the lock for a moment) are
    this command's to decide: planned again, and started when the plan says so. True when
    interrupted."""
    while not again.faults:
        interrupted, let_go = _wait_elsewhere(result.decisions, display, result)
        if interrupted or not let_go:
            return interrupted
        _say_let_go(let_go, display)
        replanned = _replan(result, let_go, again)
        to_start = [d.task for d in replanned if d.start]
        if _start_all(again.executor(), to_start, display, result, again.gpu_ids, again.faults):
            return True
    return False


def _say_let_go(let_go: Sequence[Decision], display: Display) -> None:
    """Why the runs ``let_go`` are planned again here: never started by whoever held them, or (their
    plan saw an attempt recorded running) started there and lost without an end recorded."""
    kinds: dict[bool, list[Decision]] = {False: [], True: []}
    for d in let_go:
        kinds[_was_running(d)].append(d)
    if kinds[False]:
        display.note(
            f"{len(kinds[False])} run(s) let go unstarted by whoever held them, planned again here: "
            + ", ".join(d.task.name for d in kinds[False])
        )
    if kinds[True]:
        display.note(
            f"{len(kinds[True])} run(s) started by another `sweepgen run` and lost there (their process is "
            "gone without recording an end), planned again here: "
            + ", ".join(f"{d.task.name} (attempt {_attempt_planned(d)})" for d in kinds[True])
        )


def _attempt_planned(d: Decision) -> int:
    return d.previous.attempt if d.previous is not None else 0


def _was_running(d: Decision) -> bool:
    """The plan saw the run's attempt recorded running: whoever held it had started it."""
    return d.previous is not None and d.previous.state is RunState.RUNNING


def _start_all(
    ex: Executor,
    to_start: list[RunTask],
    display: Display,
    result: RunResult,
    gpu_ids: Sequence[str],
    faults: list[str],
) -> bool:
    """Start ``to_start`` with ``ex`` (and the sweep's MPS daemon where asked for) and follow them
    to their end; True when interrupted. ``ex``'s faults are added to ``faults``."""
    with contextlib.ExitStack() as daemon:
        if to_start and result.options.mps:
            _start_mps(daemon, ex, gpu_ids, result)
        interrupted = _run_started(ex, result.decisions, to_start, display, result)
    faults.extend(ex.faults)
    result.notes.extend(ex.notes)
    ex.notes.clear()
    return interrupted


def _replan(result: RunResult, let_go: Sequence[Decision], how: _Again) -> list[Decision]:
    """The runs ``let_go`` planned again, replacing their decisions and whatever was seen of them."""
    tasks = [d.task for d in let_go]
    again = how.resume(plan(tasks, rerun_failed=how.rerun_failed, is_alive=status_is_alive))
    by_name = {d.task.name: d for d in again}
    result.decisions = [by_name.get(d.task.name, d) for d in result.decisions]
    for name in by_name:
        result.live.pop(name, None)
    return again


def _selected(
    request: RunRequest, opts: RunOptions, executor: str, argv: Sequence[str] | None
) -> tuple[Sweep, list[RunTask]]:
    """The sweep, and the runs --only selects of it; the bundled trainer and its configs checked
    when it is the command (``argv``: None, a Slurm node has its own environment: the trainer is
    checked there)."""
    sweep = load_sweep(request.sweep_dir, command=argv, done_file=parse_done_file(opts.done_file, argv))
    if argv is None and executor == "local" and not request.dry_run:
        check_bundled_trainer()
    tasks = select(sweep.tasks, with_groups(sweep, request.only))
    if argv is None:
        check_bundled_configs(tasks)
    else:
        command_overrides.check(argv, sweep.tasks)  # `--beta 0.1` on a sweep over beta
    return sweep, tasks


def _merged_options(request: RunRequest, display: Display) -> RunOptions:
    """The request's options over those the sweep was started with (said when they differ)."""
    recorded, opts = sweep_state.replayed(request.sweep_dir, request.options)
    if recorded is not None and request.options != opts:
        display.note(
            f"using the command line this sweep was started with: {opts.command_line(request.sweep_dir)}"
        )
    return opts


def _refuse_stale(decisions: Sequence[Decision], sweep_dir: Path) -> None:
    """A run folder holding a run of another version of its config is never reused."""
    stale = [d.task for d in decisions if d.stale]
    if stale:
        raise UserError(
            f"{len(stale)} run director{'y holds a run' if len(stale) == 1 else 'ies hold runs'} of another "
            f"version of the config: "
            + ", ".join(f"{t.name} ({t.run_dir}: {stale_cause(t)})" for t in stale),
            location=Location(str(sweep_dir)),
            hint="the spec or a data file changed since those runs started; give the changed runs a new "
            "output_dir "
            "(e.g. put the changed value in run_name), or move the old run directories away yourself",
        )


def _start_mps(daemon: contextlib.ExitStack, ex: Executor, gpu_ids: Sequence[str], result: RunResult) -> None:
    """The sweep's MPS daemon, stopped when ``daemon`` closes; its environment handed to every run."""
    from sweepgen.run.local.mps import mps_daemon  # noqa: PLC0415 - lazy: the MPS daemon loads only when asked for

    session = daemon.enter_context(mps_daemon(list(gpu_ids)))  # stopped when the sweep ends
    ex.options = replace(ex.options, env={**ex.options.env, **session.env})
    daemon.callback(lambda: result.notes.extend(f"warning: {w}" for w in session.warnings))


def _wait_elsewhere(
    decisions: Sequence[Decision], display: Display, result: RunResult
) -> tuple[bool, list[Decision]]:
    """Follow the runs another `sweepgen run` is running; True when interrupted (they run on), and
    the runs whose holder let them go without starting them."""
    elsewhere = [d for d in decisions if _elsewhere(d, result.live)]
    if not elsewhere:
        return False, []
    _say_waiting(elsewhere, display)
    try:
        with stop_signals_raise_interrupt():
            result.live.update(_follow_elsewhere(elsewhere, display, status_is_alive))
    except KeyboardInterrupt:
        return True, []  # they are not ours to stop: they run on under their own `run`
    return False, [d for d in elsewhere if result.live[d.task.name].reason == LET_GO]


def _say_waiting(elsewhere: Sequence[Decision], display: Display) -> None:
    ended = [d for d in elsewhere if d.reason.endswith(HELD_ENDED)]  # (--rerun-failed's)
    running = [d for d in elsewhere if d not in ended]
    _say_held(running, "run(s) another `sweepgen run` is running", display)
    _say_held(ended, "run(s) ended on record whose lock another process still holds", display)
    for d in ended:
        display.note(f"  {d.task.name}: {d.reason}")
    _say_unrecorded(running, display)


def _say_unrecorded(running: Sequence[Decision], display: Display) -> None:
    """What is known of a run nobody records (its supervisor died), and what to do."""
    for d in running:
        note = running_note(d.previous) if d.previous is not None else None
        if note is not None:
            display.note(f"  {d.task.name}: {note}")


def _say_held(decisions: Sequence[Decision], what: str, display: Display) -> None:
    if decisions:
        display.note(f"waiting for {len(decisions)} {what}: " + ", ".join(d.task.name for d in decisions))


def _gpu_options(opts: RunOptions, executor: str) -> tuple[tuple[str, ...], int]:
    """--gpus and --per-gpu, checked with --mps."""
    gpu_ids = parse_gpus(opts.gpus)
    per_gpu = opts.per_gpu or 1
    if per_gpu != 1 and not gpu_ids:
        raise UserError("--per-gpu needs --gpus", hint="e.g. --gpus 0,1 --per-gpu 4")
    if opts.mps and (not gpu_ids or executor != "local"):
        raise UserError(
            "--mps needs --gpus and the local executor",
            hint="e.g. --gpus 0 --per-gpu 8 --mps; on Slurm, start MPS in the job script instead",
        )
    return gpu_ids, per_gpu


def _run_started(
    ex: Executor, decisions: list[Decision], to_start: list[RunTask], display: Display, result: RunResult
) -> bool:
    """Start and follow this invocation's runs; True when interrupted (Ctrl-C, SIGTERM, SIGHUP)."""
    if not to_start:
        return False
    try:
        with stop_signals_raise_interrupt():
            ex.start(to_start, {d.task.name: d.previous for d in decisions if d.start})
            if ex.options.wait is False:
                result.live.update(ex.poll())
                result.submitted = True
            else:
                result.live.update(_follow(ex, decisions, display))
    except KeyboardInterrupt:
        stop_gracefully(ex, display)
        result.live.update(ex.poll())
        return True
    except BaseException:
        # anything else (a bug): never leave started children running unwatched. Slurm jobs run
        # without us by design: a failed query must never cancel them (`status` follows them).
        if ex.stop_runs_on_error:
            stop_gracefully(ex, display)
        raise
    return False


def _follow(ex: Executor, decisions: Sequence[Decision], display: Display) -> dict[str, RunStatus]:
    """Poll until every started run ends, telling the display each state change."""
    seen: dict[str, str] = {}
    live = ex.poll()
    with display.following(decisions) as progress:
        while True:
            _say_changes(live, seen, progress)
            progress.update(live)
            if ex.done():
                return live
            ex.wait(POLL_S)  # the local executor wakes as a run ends: its slot is refilled at once
            live = ex.poll()


def _say_changes(live: Mapping[str, RunStatus], seen: dict[str, str], progress: Progress) -> None:
    for name, status in live.items():
        if seen.get(name) != status.state.value:
            seen[name] = status.state.value
            if status.state.value != "pending":
                extra = f" ({status.reason})" if status.reason and status.state.value != "running" else ""
                progress.say(f"{name}: {status.state}{extra}")


def _elsewhere(d: Decision, live: Mapping[str, RunStatus]) -> bool:
    """A run in scope that another `sweepgen run` (or a Slurm job it submitted) is running."""
    status = live.get(d.task.name)
    if status is not None:  # taken by another process between the plan and its start
        return status.state is RunState.SKIPPED
    return not d.start and d.state is RunState.SKIPPED


def _follow_elsewhere(
    decisions: Sequence[Decision], display: Display, is_alive: Callable[[RunStatus], bool]
) -> dict[str, RunStatus]:
    """Follow runs held by another process through their status files until each has ended."""
    out: dict[str, RunStatus] = {}
    seen: dict[str, str] = {}
    with display.following(decisions) as progress:
        while True:
            for d in decisions:
                out[d.task.name] = _elsewhere_status(d, is_alive)
            _say_changes(out, seen, progress)
            progress.update(out)
            if all(s.state in TERMINAL or s.reason == LET_GO for s in out.values()):
                return out
            # woken at once when a supervisor of theirs ends (its run's end is then recorded)
            if not wait_for_an_end([s for s in out.values() if s.state not in TERMINAL], ELSEWHERE_POLL_S):
                time.sleep(ELSEWHERE_POLL_S)


def _elsewhere_status(d: Decision, is_alive: Callable[[RunStatus], bool]) -> RunStatus:
    run_dir = d.task.run_dir
    status = read_status(run_dir)
    state, reason = effective_state(run_dir, status, is_alive)
    executor = status.executor if status is not None else "local"
    if runlock.is_held(run_dir) and state is not RunState.FINISHED:
        return _held(status, state, executor, is_alive)
    if _let_go(d, status, state, is_alive):
        return RunStatus(RunState.PENDING, executor, reason=LET_GO)
    if state is None:
        return RunStatus(RunState.FAILED, executor, reason="ended elsewhere without recording anything")
    if state in (RunState.PENDING, RunState.RUNNING):
        return _still_going(status, state, executor, is_alive)
    return _ended(status, state, reason, executor)


def _held(
    status: RunStatus | None, state: RunState | None, executor: str, is_alive: Callable[[RunStatus], bool]
) -> RunStatus:
    """A run whose lock another process holds: running, or ended on record while that holder has not
    let go of its lock."""
    if ended_on_record(state, status, is_alive):
        assert status is not None  # ended_on_record says so
        return replace(status, state=RunState.PENDING, reason=HELD_AFTER_END)
    return replace(status, state=RunState.RUNNING) if status else RunStatus(RunState.RUNNING, executor)


def _still_going(
    status: RunStatus | None, state: RunState, executor: str, is_alive: Callable[[RunStatus], bool]
) -> RunStatus:
    """A run recorded as pending or running, with no lock held: so it is while its process (or job)
    is alive; lost once nothing is."""
    if status is not None and is_alive(status):
        return replace(status, state=state)
    return RunStatus(RunState.FAILED, executor, reason=LOST)


def _ended(status: RunStatus | None, state: RunState, reason: str | None, executor: str) -> RunStatus:
    """A run that ended elsewhere, in the state (and for the reason, where one is given) the
    effective state says."""
    assert status is not None or state is RunState.FINISHED
    base = status or RunStatus(state, executor)
    return replace(base, state=state, reason=reason if reason is not None else base.reason)


def _let_go(
    d: Decision, status: RunStatus | None, state: RunState | None, is_alive: Callable[[RunStatus], bool]
) -> bool:
    """Its lock is free and its status is still the one the plan saw, with nothing alive behind it:
    whoever held the lock let it go without starting the run."""
    untouched = unchanged_since(d.previous, status) and state is not RunState.FINISHED
    return untouched and not (status is not None and is_alive(status))


def final_state(d: Decision, live: Mapping[str, RunStatus]) -> tuple[RunState, str]:
    """The state to report for a run at the end, and why."""
    status = live.get(d.task.name)
    if status is not None:
        return status.state, status.reason or ""
    if d.state is RunState.FINISHED:
        return RunState.FINISHED, "skipped (finished before)"
    return d.state, d.reason


def _finish(request: RunRequest, result: RunResult, interrupted: bool, faults: Sequence[str]) -> int:
    scope = request.scope_words()
    rerun = result.options.command_line(request.sweep_dir, *scope, "--rerun-failed")
    states = {d.task.name: final_state(d, result.live)[0] for d in result.decisions}
    _note_failed(result, states)
    if faults:
        result.errors.extend(faults)
        result.notes.append(
            "hint: sweepgen could not keep its records (full or read-only disk?); the runs it had "
            "started were followed to their end and no other run was started. Free space, then "
            f"`sweepgen status {request.sweep_dir}` shows what happened and "
            f"`{result.options.command_line(request.sweep_dir, *scope)}` goes on"
        )
        return 2
    if interrupted:
        result.notes.append(interrupted_note(list(result.live), states, rerun))
        return INTERRUPTED
    _note_not_retried(result, states, rerun)
    running = _note_elsewhere(result, states, request.sweep_dir, scope)
    bad = [n for n, s in states.items() if s in RETRYABLE]
    return 1 if bad or running else 0


def interrupted_note(handled: Sequence[str], states: Mapping[str, RunState | None], rerun: str) -> str:
    """What the stop left, as it was recorded: a run that ended before the stop reached it stays
    finished (the stop on the GPU check found one at its last step), and only what was cancelled or
    failed is for `--rerun-failed`."""
    started = [name for name in handled if states.get(name) is not None]
    left = [name for name in started if states[name] in RETRYABLE]
    done = sum(states[name] is RunState.FINISHED for name in started)
    ended = f"; {done} of them had finished before the stop reached it" if done else ""
    if not left:
        return f"interrupted: the {len(started)} run(s) this command started had finished; nothing to resume"
    return (
        f"interrupted: {len(left)} of the {len(started)} run(s) this command started were stopped and "
        f"recorded cancelled or failed{ended}; resume them with `{rerun}`"
    )


def _note_failed(result: RunResult, states: Mapping[str, RunState | None]) -> None:
    """Each run of this command that failed, with the last lines of its log."""
    for d in result.decisions:
        status = result.live.get(d.task.name)
        if status is not None and states[d.task.name] is RunState.FAILED:
            tail = list(log_tail(d.task.run_dir, lines=LOG_TAIL_LINES))
            result.failed.append(FailedRun(d.task.name, status.reason or "", d.task.run_dir / LOG_FILE, tail))


def _note_not_retried(result: RunResult, states: Mapping[str, RunState | None], rerun: str) -> None:
    """Runs that failed or were cancelled before, left alone without --rerun-failed: said, with how."""
    not_retried = [n for n, s in states.items() if s in RETRYABLE and n not in result.live]
    if not_retried:
        result.notes.append(
            f"{len(not_retried)} run(s) failed or were cancelled before and were not retried: "
            f"{', '.join(not_retried)}; retry with `{rerun}`"
        )


def _note_elsewhere(
    result: RunResult, states: Mapping[str, RunState | None], sweep_dir: Path, scope: Sequence[str]
) -> list[str]:
    """Runs another `sweepgen run` holds and this one did not wait for: said, with how to wait for
    them (``scope``: the words that choose the same runs); their names. (A Slurm submission that
    does not wait leaves its own submissions PENDING or RUNNING: those are this command's, not
    counted.)"""
    running = [n for n, s in states.items() if s is RunState.SKIPPED]
    if running:
        wait = shlex.join(["sweepgen", "run", sweep_dir.as_posix(), *scope, "--wait"])
        result.notes.append(
            f"{len(running)} run(s) still running elsewhere (under another `sweepgen run` or its Slurm "
            f"jobs): {', '.join(running)}; `{wait}` waits for them, "
            f"`sweepgen status {sweep_dir}` shows them"
        )
    return running


def stop_gracefully(ex: Executor, display: Display) -> None:
    """Graceful first (runs save a checkpoint), at once if the user presses Ctrl-C again."""
    try:
        with stop_signals_raise_interrupt():
            display.note(
                "stopping the runs: each may finish its step and save a checkpoint; "
                "press Ctrl-C again to kill them now"
            )
            ex.cancel()
    except KeyboardInterrupt:
        with _signals_ignored():  # this stop is immediate: nothing may interrupt its bookkeeping
            display.note("killing the runs now")
            ex.stop_now()


def time_limit(
    executor: str, given: float | None, lock: Lock, sweep_dir: Path, display: Display | None
) -> float | None:
    """The time limit of each run as its executor applies it (``given``: --time-limit): the local
    executor honours the spec's resources.time too, and says so; Slurm applies it itself."""
    with placed(sweep_dir, lock):
        limit, note = executor_class(executor).time_limit(given, lock, str(sweep_dir / LOCK_NAME))
    if note is not None and display is not None:
        display.note(note)
    return limit


def parse_gpus(gpus: str | None) -> tuple[str, ...]:
    if gpus is None:
        return ()
    ids = tuple(g.strip() for g in gpus.split(","))
    if not all(ids):
        raise UserError(f"--gpus {gpus!r} has an empty entry", hint="e.g. --gpus 0,1")
    return ids


def stop_signals_raise_interrupt() -> AbstractContextManager[None]:
    """SIGTERM/SIGHUP (a closed terminal, a job scheduler) stop the sweep like Ctrl-C does, so the
    children are stopped and marked instead of orphaned; one that came while `run` loaded and
    planned is raised at the block's entry, before it starts anything (run/core/stopping/stop_signals.py)."""
    return stop_signals.raising_interrupt()


@contextmanager
def _signals_ignored(sigs: Sequence[int] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """A second Ctrl-C while the children are being stopped must not leave some of them running;
    the stop itself is bounded (SIGKILL after a grace period)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
