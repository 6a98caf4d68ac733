"""`sweepgen run DIR`: run a generated sweep's trainer configs through an executor.

The command owns the terminal and the event loop; the executor (sweepgen.run.*) owns the processes
or jobs. Exit codes: 0 every run in scope finished (or is running elsewhere); 1 a run failed or was
cancelled (now or before, and not retried); 2 bad input; 130 interrupted (children stopped first).
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import click

from sweepgen.cli import _console
from sweepgen.cli._params import SECONDS
from sweepgen.errors import Location, UserError

POLL_S = 0.5
LOG_TAIL_LINES = 20


@click.command("run")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "-j",
    "--jobs",
    type=int,
    default=None,
    help="Runs at once (default: 1, or --gpus × --per-gpu when --gpus is given).",
)
@click.option(
    "--gpus",
    default=None,
    metavar="IDS",
    help="Comma-separated physical CUDA device ids to pack runs onto, e.g. 0,1.",
)
@click.option("--per-gpu", type=int, default=1, show_default=True, help="Runs sharing one GPU (with --gpus).")
@click.option(
    "--mps",
    is_flag=True,
    help="With --gpus (local executor): start an NVIDIA MPS control daemon for this sweep, so the runs "
    "packed on a GPU run their kernels at once, and stop it at the end. An error where MPS is missing.",
)
@click.option("--dry-run", is_flag=True, help="Show what would run and how; start nothing, write nothing.")
@click.option(
    "--only",
    multiple=True,
    metavar="NAME",
    help="Run only these runs (run or variant name; repeat or comma-separate).",
)
@click.option("--rerun-failed", is_flag=True, help="Also start runs that failed or were cancelled before.")
@click.option("--executor", default="local", show_default=True, help="Where runs execute: local (or slurm).")
@click.option(
    "--command",
    "command",
    default=None,
    metavar="CMD",
    help="Run each config with CMD instead of the bundled trainer; placeholders {config}, "
    "{run_dir}, {name}, {variant}. Default: <this python> -m trainer {config}. Such a run "
    "succeeds on exit 0 (see --done-file).",
)
@click.option(
    "--done-file",
    default=None,
    metavar="PATH",
    help="With --command: a finished run must also leave this file in its run directory "
    "(e.g. metrics.csv); exit 0 without it is a failure.",
)
@click.option(
    "--metric",
    default=None,
    metavar="NAME",
    help="Show this logged metric (metrics.jsonl or metrics.csv) in the live and final tables; "
    "without it a trainer other than the bundled one gets no reward columns.",
)
@click.option(
    "--wait/--no-wait", default=None, help="Follow the runs until they end (the local executor always does)."
)
@click.option(
    "--stop-timeout",
    type=SECONDS,
    default=None,
    metavar="SECONDS",
    help="On Ctrl-C, how long each run may take to stop by itself (finish its step, save a "
    "checkpoint) before it is killed; a second Ctrl-C kills at once. Local default: 60.",
)
def run(
    sweep_dir: Path,
    jobs,
    gpus,
    per_gpu,
    mps,
    dry_run,
    only,
    rerun_failed,
    executor,
    command,
    done_file,
    metric,
    wait,
    stop_timeout,
) -> int:
    """Run every generated config of the sweep in DIR (the folder holding sweep.lock.json).

    Each run is its own process started from the current directory. Its run directory is the
    spec's `run_dir` template when it has one, else the config's output_dir; run.log and
    sweepgen_status.json are written there, next to the trainer's files.

    \b
    When is a run finished?
      bundled trainer (no --command): it exited 0 and wrote summary.json;
      any other trainer (--command): it exited 0, and left --done-file if one is given.
    A run stopped by Ctrl-C, `sweepgen cancel` or Slurm is cancelled even if it exits 0, unless
    it left its done file.

    Finished runs are skipped; failed or cancelled ones only run again with --rerun-failed, in
    the same run directory, so a trainer that resumes from its own checkpoints resumes there.
    `sweepgen status`, `cancel` and `report` work the same for every trainer, locally and on Slurm
    (--executor slurm).
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.base import ExecutorOptions, plan
    from sweepgen.run.registry import make_executor, status_is_alive
    from sweepgen.run.tasks import (
        check_bundled_trainer,
        load_sweep,
        parse_command,
        parse_done_file,
        select,
    )

    gpu_ids = _parse_gpus(gpus)
    if per_gpu != 1 and not gpu_ids:
        raise UserError("--per-gpu needs --gpus", hint="e.g. --gpus 0,1 --per-gpu 4")
    if mps and (not gpu_ids or executor != "local"):
        raise UserError(
            "--mps needs --gpus and the local executor",
            hint="e.g. --gpus 0 --per-gpu 8 --mps; on Slurm, start MPS in the job script instead",
        )
    argv = parse_command(command)
    sweep = load_sweep(sweep_dir, command=argv, done_file=parse_done_file(done_file, argv))
    if command is None and executor == "local" and not dry_run:
        check_bundled_trainer()  # (a Slurm node has its own environment: checked there)
    tasks = select(sweep.tasks, only)
    options = ExecutorOptions(
        sweep_dir=sweep_dir,
        lock=sweep.lock,
        jobs=jobs,
        gpus=gpu_ids,
        per_gpu=per_gpu,
        wait=wait,
        stop_timeout_s=stop_timeout,
    )
    ex = make_executor(executor, options)
    decisions = plan(tasks, rerun_failed=rerun_failed, is_alive=status_is_alive)
    stale = [d.task for d in decisions if d.stale]
    if stale:
        raise UserError(
            f"{len(stale)} run director{'y holds a run' if len(stale) == 1 else 'ies hold runs'} of another "
            f"version of the config: " + ", ".join(f"{t.name} ({t.run_dir})" for t in stale),
            location=Location(str(sweep_dir)),
            hint="the spec changed since those runs started; give the changed runs a new output_dir "
            "(e.g. put the changed value in run_name), or move the old run directories away yourself",
        )
    to_start = [d.task for d in decisions if d.start]
    out = _console.stdout()
    if dry_run:
        # rich (~20 ms) loads only when there is something to print, not for --help
        from sweepgen.cli._run_display import plan_table

        out.print(plan_table(decisions))
        for line in ex.describe(to_start) if to_start else ["nothing to start"]:
            out.print(line, markup=False)
        return 0
    warnings: list[str] = []
    with contextlib.ExitStack() as daemon:
        if to_start and mps:
            # sweepgen.run.mps loads only when asked for
            from sweepgen.run.mps import mps_daemon

            session = daemon.enter_context(mps_daemon(list(gpu_ids)))  # stopped when the sweep ends
            warnings = session.warnings  # filled as the daemon stops
            ex.options = replace(ex.options, env={**ex.options.env, **session.env})
        code = _run_started(ex, decisions, to_start, sweep_dir, metric)
    for warning in warnings:
        _console.stderr().print(f"warning: {warning}", markup=False, highlight=False)
    return code


def _run_started(ex, decisions, to_start, sweep_dir: Path, metric: str | None = None) -> int:
    live: dict = {}
    interrupted = False
    if to_start:
        try:
            with _stop_signals_raise_interrupt():
                ex.start(to_start, {d.task.name: d.previous for d in decisions if d.start})
                if ex.options.wait is False:
                    live = ex.poll()
                    _say_submitted(ex, live, sweep_dir)
                else:
                    live = _follow(ex, decisions, metric)
        except KeyboardInterrupt:
            interrupted = True
            _stop(ex)
            live = ex.poll()
        except BaseException:
            # anything else (a bug): never leave started children running unwatched. Slurm jobs run
            # without us by design: a failed query must never cancel them (`status` follows them).
            if ex.stop_runs_on_error:
                _stop(ex)
            raise
    code = _finish(decisions, live, sweep_dir, interrupted, metric)
    if ex.faults:
        err = _console.stderr()
        for fault in ex.faults:
            err.print(f"error: {fault}", markup=False, highlight=False)
        err.print(
            "hint: sweepgen could not keep its records (full or read-only disk?); the runs it had "
            "started were followed to their end and no other run was started. Free space, then "
            f"`sweepgen status {sweep_dir}` shows what happened and `sweepgen run {sweep_dir}` goes on",
            markup=False,
            highlight=False,
        )
        return 2
    return code


def _say_submitted(ex, live: dict, sweep_dir: Path) -> None:
    from sweepgen.run.base import RunState

    out = _console.stdout()
    skipped = {n: s for n, s in live.items() if s.state is RunState.SKIPPED}
    for name, status in skipped.items():
        out.print(f"{name}: not submitted: {status.reason}", markup=False, highlight=False)
    count = len(live) - len(skipped)
    if count:
        out.print(
            f"submitted {count} run(s) with the {ex.name} executor; "
            f"follow them with `sweepgen status {sweep_dir}`"
        )
    else:
        out.print(f"submitted nothing: every run was already queued, running or finished ({sweep_dir})")


def _stop(ex) -> None:
    """Graceful first (runs save a checkpoint), at once if the user presses Ctrl-C again."""
    # plain writes, not rich: a Ctrl-C inside rich's print would leave its buffer to be printed again
    try:
        with _stop_signals_raise_interrupt():
            click.echo(
                "stopping the runs: each may finish its step and save a checkpoint; "
                "press Ctrl-C again to kill them now",
                err=True,
            )
            ex.cancel()
    except KeyboardInterrupt:
        with _signals_ignored():  # this stop is immediate: nothing may interrupt its bookkeeping
            click.echo("killing the runs now", err=True)
            ex.stop_now()


def _parse_gpus(gpus: str | None) -> tuple[str, ...]:
    if gpus is None:
        return ()
    ids = tuple(g.strip() for g in gpus.split(","))
    if not all(ids):
        raise UserError(f"--gpus {gpus!r} has an empty entry", hint="e.g. --gpus 0,1")
    return ids


def _follow(ex, decisions, metric: str | None = None) -> dict:
    """Poll until every started run ends, showing a live table and a line per state change."""
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.live import Live

    from sweepgen.cli._run_display import progress_table

    out = _console.stdout()
    seen: dict[str, str] = {}
    live = ex.poll()
    with Live(
        progress_table(decisions, live, _now(), metric), console=out, transient=True, auto_refresh=False
    ) as view:
        while True:
            for name, status in live.items():
                if seen.get(name) != status.state.value:
                    seen[name] = status.state.value
                    if status.state.value != "pending":
                        extra = (
                            f" ({status.reason})" if status.reason and status.state.value != "running" else ""
                        )
                        view.console.print(f"{name}: {status.state}{extra}", markup=False)
            view.update(progress_table(decisions, live, _now(), metric), refresh=True)
            if ex.done():
                return live
            time.sleep(POLL_S)
            live = ex.poll()


def _finish(decisions, live, sweep_dir: Path, interrupted: bool, metric: str | None = None) -> int:
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.cli._run_display import final_state, final_table
    from sweepgen.run.base import LOG_FILE, RunState
    from sweepgen.run.progress import log_tail

    out, err = _console.stdout(), _console.stderr()
    out.print(final_table(decisions, live, metric))
    states = {d.task.name: final_state(d, live)[0] for d in decisions}
    failed = [d for d in decisions if d.task.name in live and states[d.task.name] is RunState.FAILED]
    for d in failed:
        status = live[d.task.name]
        err.print(
            f"\n[bold red]── {d.task.name} failed ({status.reason}); last lines of "
            f"{d.task.run_dir / LOG_FILE}:[/]"
        )
        for line in log_tail(d.task.run_dir, lines=LOG_TAIL_LINES):
            err.print(line, markup=False, highlight=False)
    if interrupted:
        err.print(
            f"interrupted: every started run was stopped and marked cancelled; resume them with "
            f"`sweepgen run {sweep_dir} --rerun-failed`"
        )
        return 130
    not_retried = [
        n for n, s in states.items() if s in (RunState.FAILED, RunState.CANCELLED) and n not in live
    ]
    if not_retried:
        err.print(
            f"{len(not_retried)} run(s) failed or were cancelled before and were not retried: "
            f"{', '.join(not_retried)}; retry with `sweepgen run {sweep_dir} --rerun-failed`"
        )
    bad = [n for n, s in states.items() if s in (RunState.FAILED, RunState.CANCELLED)]
    return 1 if bad else 0


def _now() -> datetime:
    return datetime.now(timezone.utc)


@contextmanager
def _stop_signals_raise_interrupt():
    """SIGTERM/SIGHUP (a closed terminal, a job scheduler) stop the sweep like Ctrl-C does, so the
    children are stopped and marked instead of orphaned."""

    def raise_interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, raise_interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def _signals_ignored(sigs: Sequence[int] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
    """A second Ctrl-C while the children are being stopped must not leave some of them running;
    the stop itself is bounded (SIGKILL after a grace period)."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
