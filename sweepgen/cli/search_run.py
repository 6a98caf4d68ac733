"""`sweepgen run DIR` on a search sweep: the controller loop (sweepgen.run.search) with the terminal.

Prints one line per trial event (started, refused, pruned, complete, failed) and a summary; exit 0
once the study holds its ``n`` finished trials with at least one complete, 1 when none completed,
130 when interrupted (the runs are stopped as a cancel stops them; the next `run` resumes them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from sweepgen.cli import _console
from sweepgen.errors import UserError

POLL_S = 0.2
MAX_FAILED_SHOWN = 5  # failed trials listed with their reason by status and report


def search_spec(sweep_dir: Path) -> Any:
    """The spec of ``sweep_dir`` when it is a search sweep, else None (any other sweep runs as before).
    Only a spec whose YAML has a top-level ``search`` key is loaded (and must then be valid)."""
    from sweepgen import yamlio
    from sweepgen.compile import lock
    from sweepgen.run.search_trials import spec_of

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


def run_search(
    sweep_dir: Path,
    spec: Any,
    *,
    executor: str,
    argv: tuple[str, ...] | None,
    done_file: str | None,
    gpus: tuple[str, ...],
    per_gpu: int,
    stop_timeout: float | None,
    dry_run: bool,
    stop: Callable[[Any], None],
    stop_signals: Callable[[], AbstractContextManager[None]],
) -> int:
    """``stop`` and ``stop_signals`` are `run`'s own (a graceful stop, Ctrl-C again kills; SIGTERM and
    SIGHUP as Ctrl-C), so a search is stopped as a grid is."""
    from sweepgen.compile import search
    from sweepgen.run.base import ExecutorOptions
    from sweepgen.run.registry import make_executor
    from sweepgen.run.search import SearchController
    from sweepgen.run.search_trials import TrialRenderer
    from sweepgen.run.tasks import check_bundled_trainer, read_lock

    block = search.block(spec)
    out = _console.stdout()
    if dry_run:
        out.print(
            f"search {spec.name}: {block.n} trials, {block.parallel} at once, sampler {block.sampler}, "
            f"{block.mode} {block.metric}, pruning {block.prune.method if block.prune else 'none'}; "
            f"study in {sweep_dir}/.search/study.journal",
            markup=False,
        )
        return 0
    if argv is None and executor == "local":
        check_bundled_trainer()
    options = ExecutorOptions(
        sweep_dir=sweep_dir,
        lock=read_lock(sweep_dir),
        jobs=block.parallel * block.repeats,
        gpus=gpus,
        per_gpu=per_gpu,
        stop_timeout_s=stop_timeout,
        wait=True,  # the controller follows every trial, on Slurm too
    )
    if executor == "local":
        make_executor(executor, options)  # its options checked before anything is asked
    renderer = TrialRenderer(sweep_dir, spec, command=argv, done_file=done_file)
    controller = SearchController(sweep_dir, spec, lambda: make_executor(executor, options), renderer)
    try:
        with stop_signals():
            while controller.step():
                _say(controller)
                time.sleep(POLL_S)
            _say(controller)
    except KeyboardInterrupt:
        if controller.executor is not None:
            stop(controller.executor)
        controller.interrupted()
        _console.stderr().print(
            f"interrupted: the running trials were stopped (checkpoints kept); `sweepgen run {sweep_dir}` "
            "resumes them",
            markup=False,
        )
        return 130
    except BaseException:
        if controller.executor is not None and controller.executor.stop_runs_on_error:
            stop(controller.executor)
        raise
    finally:
        controller.close()
    return _summary(controller, sweep_dir)


def _say(controller: Any) -> None:
    out = _console.stdout()
    for line in controller.events:
        out.print(line, markup=False, highlight=False)
    controller.events.clear()


def _summary(controller: Any, sweep_dir: Path) -> int:
    from sweepgen.run.search_view import summarize

    view = summarize(controller.study, controller.block)
    out = _console.stdout()
    for line in view.lines():
        out.print(line, markup=False, highlight=False)
    if view.finished < controller.block.n:
        out.print(
            f"{controller.block.n - view.finished} trial(s) still run in another `sweepgen run`; "
            f"follow them with `sweepgen status {sweep_dir}`",
            markup=False,
        )
        return 0
    return 0 if view.complete else 1


def search_lines(sweep_dir: Path, *, diff: bool) -> list[str]:
    """For `status` and `report` on a search sweep: trials by state and the best trial, with (for
    `report`, ``diff``) its config's differences from the base; nothing for any other sweep."""
    from sweepgen.compile import search
    from sweepgen.run import search_view

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
