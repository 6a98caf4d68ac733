"""`sweepgen run DIR` on a search sweep as one function, and the search lines `status` and `report`
show. ``run`` is the command's one entry: a sweep whose spec has `search:` is driven by the search
controller (sweepgen.run.search), any other by ``sweep_run.run_sweep``; the CLI prints the result.

A search prints one line per trial event (started, refused, pruned, complete, failed) through
``Display.say`` as it goes, and a summary; exit 0 once the study holds its ``n`` finished trials
with at least one complete (or the rest still run in another `sweepgen run`), 1 when none
completed, 130 when interrupted (the runs are stopped as a cancel stops them; the next `run`
resumes them).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sweepgen import yamlio
from sweepgen.compile import lock, search
from sweepgen.errors import UserError
from sweepgen.run import search_view
from sweepgen.run.base import ExecutorOptions
from sweepgen.run.registry import make_executor
from sweepgen.run.search import SearchController
from sweepgen.run.search_trials import TrialRenderer, spec_of
from sweepgen.run.sweep_run import (
    INTERRUPTED,
    Display,
    RunRequest,
    RunResult,
    parse_gpus,
    run_sweep,
    stop_gracefully,
    stop_signals_raise_interrupt,
)
from sweepgen.run.tasks import check_bundled_trainer, parse_command, parse_done_file, read_lock

POLL_S = 0.2
MAX_FAILED_SHOWN = 5  # failed trials listed with their reason by status and report


@dataclass
class SearchResult:
    code: int
    plan: str | None = None  # --dry-run: the search as it would run (nothing is started)
    summary: list[str] = field(default_factory=list)  # trials by state and the best one
    elsewhere: int = 0  # trials still running under another `sweepgen run`
    interrupted: bool = False


def run(request: RunRequest, display: Display) -> RunResult | SearchResult:
    """`sweepgen run DIR`: the search controller for a search sweep, ``run_sweep`` for any other."""
    spec = search_spec(request.sweep_dir)
    if spec is None:
        return run_sweep(request, display)
    return run_search(request, spec, display)


def search_spec(sweep_dir: Path) -> Any:
    """The spec of ``sweep_dir`` when it is a search sweep, else None (any other sweep runs as before).
    Only a spec whose YAML has a top-level ``search`` key is loaded (and must then be valid)."""
    try:
        recorded = lock.read(str(sweep_dir), str(sweep_dir))
        spec_path = sweep_dir.resolve().parent.parent / recorded.spec if recorded is not None else None
        if spec_path is None or not spec_path.is_file():
            return None
        data = yamlio.loads(spec_path.read_text(encoding="utf-8"), str(spec_path)).data
    except (OSError, UnicodeDecodeError, UserError):
        return None  # the grid path reports a broken lock or spec with its own words
    if not isinstance(data, dict) or "search" not in data:
        return None
    return spec_of(sweep_dir)


def run_search(request: RunRequest, spec: Any, display: Display) -> SearchResult:
    """Drive the search of ``spec`` until its ``n`` trials are finished; stopped as a grid is (a
    graceful stop, Ctrl-C again kills; SIGTERM and SIGHUP as Ctrl-C)."""
    sweep_dir, opts = request.sweep_dir, request.options
    executor = opts.executor or "local"
    argv = parse_command(opts.command, shell=bool(opts.shell))
    block = search.block(spec)
    if request.dry_run:
        return SearchResult(
            0,
            plan=f"search {spec.name}: {block.n} trials, {block.parallel} at once, sampler "
            f"{block.sampler}, {block.mode} {block.metric}, pruning "
            f"{block.prune.method if block.prune else 'none'}; study in {sweep_dir}/.search/study.journal",
        )
    if argv is None and executor == "local":
        check_bundled_trainer()
    options = ExecutorOptions(
        sweep_dir=sweep_dir,
        lock=read_lock(sweep_dir),
        jobs=block.parallel * block.repeats,
        gpus=parse_gpus(opts.gpus),
        per_gpu=opts.per_gpu or 1,
        stop_timeout_s=opts.stop_timeout,
        wait=True,  # the controller follows every trial, on Slurm too
    )
    if executor == "local":
        make_executor(executor, options)  # its options checked before anything is asked
    renderer = TrialRenderer(sweep_dir, spec, command=argv, done_file=parse_done_file(opts.done_file, argv))
    controller = SearchController(sweep_dir, spec, lambda: make_executor(executor, options), renderer)
    try:
        _drive(controller, display)
    except KeyboardInterrupt:
        if controller.executor is not None:
            stop_gracefully(controller.executor, display)
        controller.interrupted()
        return SearchResult(INTERRUPTED, interrupted=True)
    except BaseException:
        if controller.executor is not None and controller.executor.stop_runs_on_error:
            stop_gracefully(controller.executor, display)
        raise
    finally:
        controller.close()
    view = search_view.summarize(controller.study, controller.block)
    elsewhere = max(controller.block.n - view.finished, 0)
    code = 0 if elsewhere or view.complete else 1
    return SearchResult(code, summary=view.lines(), elsewhere=elsewhere)


def _drive(controller: SearchController, display: Display) -> None:
    with stop_signals_raise_interrupt():
        while controller.step():
            _say(controller, display)
            time.sleep(POLL_S)
        _say(controller, display)


def _say(controller: SearchController, display: Display) -> None:
    for line in controller.events:
        display.say(line)
    controller.events.clear()


def search_lines(sweep_dir: Path, *, diff: bool) -> list[str]:
    """For `status` and `report` on a search sweep: trials by state and the best trial, with (for
    `report`, ``diff``) its config's differences from the base; nothing for any other sweep."""
    try:
        spec = search_spec(sweep_dir)
    except UserError as err:
        return [f"note: search not shown: {err.message}"]
    if spec is None:
        return []
    view = search_view.load(sweep_dir, search.block(spec))
    lines = view.lines()
    failed = [r for r in view.rows if r.state == "failed"]
    lines += [f"  {r.name} failed: {r.reason}" for r in failed[:MAX_FAILED_SHOWN]]
    if len(failed) > MAX_FAILED_SHOWN:
        lines.append(f"  ... and {len(failed) - MAX_FAILED_SHOWN} more failed trial(s)")
    if diff and view.best is not None:
        lines.append(f"{view.best.name} differs from the base in:")
        lines += [
            f"  {path}: {old!r} -> {new!r}" for path, old, new in search_view.best_diff(sweep_dir, view)
        ]
    return lines
