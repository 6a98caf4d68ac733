"""Tables for `sweepgen run`: the plan (--dry-run), the live progress and the final results.

Each row's step and reward come from the run's own metrics.jsonl (a foreign trainer's step from its
Hugging Face Trainer state), its final reward and wall time from summary.json, so what is shown is
what the run wrote, not what sweepgen expected.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import JustifyMethod
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sweepgen.cli import _console
from sweepgen.escape import line as one_line
from sweepgen.run.core import boot_clock
from sweepgen.run.core.base import SUMMARY_FILE, Decision, RunState, RunStatus, state_word, this_host
from sweepgen.run.core.runfiles import RunFileError
from sweepgen.run.core.stopping.queue_cancel import DROPPED_REASONS
from sweepgen.run.logs import metrics, tb_step, trainer_states, wandb_history
from sweepgen.run.logs.progress import last_metrics, read_summary, total_steps
from sweepgen.run.sweep.grid import RunResult, final_state
from sweepgen.run.sweep.start import SearchResult

if TYPE_CHECKING:
    from rich.live import Live

    from sweepgen.run.sweep.decide import DecideResult

STYLE = {
    RunState.PENDING: "dim",
    RunState.RUNNING: "cyan",
    RunState.FINISHED: "green",
    RunState.FAILED: "bold red",
    RunState.CANCELLED: "yellow",
    RunState.SKIPPED: "dim",
}


def _fmt_reward(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def fmt_duration(seconds: object) -> str:
    """H:MM:SS (or M:SS); "-" for anything that is not a number. Shared by run, status and report."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return "-"
    minutes, secs = divmod(max(int(round(seconds)), 0), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def elapsed_seconds(status: RunStatus | None, now: datetime | None) -> float | None:
    """Seconds from a status's start to its end (or to ``now`` while it runs); None if unknown.
    A local run's own measure on the boot clock first (run/core/boot_clock.py): its wall-clock
    times are wrong by as much as the clock was moved while it ran."""
    if status is None or not status.started:
        return None
    measured = boot_clock.ended_after(status.ids) if status.ended else _running_for(status)
    if measured is not None:
        return measured
    return _wall_seconds(status.started, status.ended, now)


def _wall_seconds(started: str, ended: str | None, now: datetime | None) -> float | None:
    """The same on the wall clock, from the status's recorded times: the fallback for a run on
    another host or one that kept no boot-clock measure."""
    start = datetime.fromisoformat(started)
    end = datetime.fromisoformat(ended) if ended else now
    wall = (end - start).total_seconds() if end else None
    # an end before the start: a clock moved back meanwhile, so the wall clock cannot tell ("-")
    return wall if wall is None or wall >= 0 else None


def _running_for(status: RunStatus) -> float | None:
    running = status.state is RunState.RUNNING and status.ids.get("host") == this_host()
    return boot_clock.running_for(status.ids) if running else None


def step_text(run_dir: Path, config: Mapping[str, Any], status: RunStatus | None = None) -> str:
    """ "step/total" from the run's last metrics row, else from a Hugging Face Trainer's state (a
    foreign trainer such as `trl grpo` writes no metrics.jsonl) written since ``status``'s start,
    else from its newest TensorBoard event file written since then (run/logs/tb_step.py), else
    from its newest W&B run file's last blocks (wandb_history.last_step)."""
    row = last_metrics(run_dir)
    total = total_steps(config)
    if row:
        step = row.get("step")
    else:  # the states there at the attempt's start, where its supervisor recorded them
        before = trainer_states.recorded(status.ids) if status is not None else None
        step = metrics.trainer_step(run_dir, _start_ns(status), before)
        if step is None and run_dir.is_dir():  # no trainer state (save_strategy "no"): TensorBoard's
            step = tb_step.last_step(run_dir, _start_ns(status))
        if step is None and run_dir.is_dir():  # else W&B's (report_to wandb, offline or online)
            step = wandb_history.last_step(run_dir, _start_ns(status))
    if step is None:
        return f"-/{total}" if total else "-"
    return f"{step}/{total}" if total else str(step)


# a Slurm node's clock may run a little behind the login node's that recorded the start
_CLOCK_SKEW_NS = 2_000_000_000


def _start_ns(status: RunStatus | None) -> int | None:
    """When the status's attempt started, less the clock skew; None when it does not say."""
    if status is None or not status.started:
        return None
    try:
        started = datetime.fromisoformat(status.started)
    except ValueError:
        return None
    return int(started.timestamp() * 1e9) - _CLOCK_SKEW_NS


def _shows_reward(decisions: Sequence[Decision], logged: Sequence[Mapping[str, Any] | None] = ()) -> bool:
    """Reward columns for runs of the bundled trainer (their done file is its summary.json), or when
    a run wrote the bundled trainer's keys (``logged``: its summaries or last metrics rows); a
    foreign trainer has no reward, and a column of dashes says nothing."""
    bundled = all(d.task.done_file == SUMMARY_FILE for d in decisions)
    return bundled or any(row and ("final_reward" in row or "reward_mean" in row) for row in logged)


def _metric_value(run_dir: Path, metric: str) -> float | None:
    """The last logged value of ``metric`` in the run's metrics.jsonl or metrics.csv."""
    try:
        _, series = metrics.find_in_run(run_dir, metric, tensorboard=False)
    except RunFileError:  # a spoiled metrics file: the table shows "-", `report` says why
        return None
    return series.final[1] if series is not None else None


def _plan_table(decisions: Sequence[Decision]) -> Table:
    table = Table(title="plan", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("run", "now", "action", "run dir"):
        table.add_column(col)
    for d in decisions:
        action = ("start", "bold") if d.start else "skip"
        word = state_word(d.state, started=d.previous is not None)
        table.add_row(
            d.task.name,
            Text(word, style=STYLE[d.state]),
            Text.assemble(action, f": {d.reason}"),
            str(d.task.run_dir),
        )
    return table


def _progress_table(
    decisions: Sequence[Decision], live: Mapping[str, RunStatus], now: datetime, metric: str | None = None
) -> Table:
    """The runs running now, one row each, and a count of the others: a sweep of hundreds of runs
    must fit the terminal (each end is also printed as a line above the table)."""
    table = _progress_frame(live)
    rows = {d.task.name: last_metrics(d.task.run_dir) for d in decisions if d.task.name in live}
    value_col = _value_column(decisions, rows, metric)
    _progress_columns(table, value_col)
    for d in decisions:
        status = live.get(d.task.name)
        if status is not None and status.state is RunState.RUNNING:
            value = _progress_value(d, rows[d.task.name], metric)
            table.add_row(*_progress_row(d, status, rows[d.task.name], now, (value,) if value_col else ()))
    return table


def _value_column(
    decisions: Sequence[Decision], rows: Mapping[str, Mapping[str, Any] | None], metric: str | None
) -> str | None:
    """The value column's title: the metric asked for, else the reward where runs have one, else
    none (a column of dashes says nothing)."""
    return metric or ("reward" if _shows_reward(decisions, list(rows.values())) else None)


def _progress_columns(table: Table, value_col: str | None) -> None:
    """run, step, the value column (when there is one), elapsed, eta, gpu."""
    justify: JustifyMethod
    for col, justify in (
        ("run", "left"),
        ("step", "right"),
        *(((value_col, "right"),) if value_col else ()),
        ("elapsed", "right"),
        ("eta", "right"),
        ("gpu", "left"),
    ):
        table.add_column(col, justify=justify)


def _progress_frame(live: Mapping[str, RunStatus]) -> Table:
    """The progress table without columns: titled by the runs running, its caption counting the others."""
    counts = dict.fromkeys(RunState, 0)
    for s in live.values():
        counts[s.state] += 1
    caption = ", ".join(
        f"{n} {state_word(state)}" for state, n in counts.items() if n and state is not RunState.RUNNING
    )
    return Table(
        title=f"sweepgen run: {counts[RunState.RUNNING]} running",
        title_justify="left",
        caption=caption or None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )


def _progress_value(d: Decision, row: Mapping[str, Any] | None, metric: str | None) -> object:
    """A running run's value: the last of ``metric`` it logged, else its last reward_mean."""
    if metric:
        return _metric_value(d.task.run_dir, metric)
    return row.get("reward_mean") if row else None


def _progress_row(
    d: Decision, status: RunStatus, row: Mapping[str, Any] | None, now: datetime, value: tuple[object, ...]
) -> list[str]:
    """A running run's cells: name, step, its value (when shown), elapsed, time left, GPU."""
    elapsed = elapsed_seconds(status, now)
    return [
        d.task.name,
        step_text(d.task.run_dir, d.task.config, status),
        *(_fmt_reward(v) for v in value),
        fmt_duration(elapsed),
        fmt_duration(eta_seconds(row, total_steps(d.task.config), elapsed)),
        str(status.ids.get("gpu", "")),
    ]


def eta_seconds(
    row: Mapping[str, Any] | None, total: int | None, attempt_elapsed: float | None
) -> float | None:
    """Time left at the run's pace so far: the trainer's own ``elapsed_s`` per step where it logs it
    (it counts earlier sessions of a resumed run, as the step does), else this attempt's wall time
    per step. None before the first step or without a planned step count."""
    step = row.get("step") if row else None
    if not row or not isinstance(step, int) or not total:
        return None
    if step >= total:
        return 0.0
    if step <= 0:
        return None
    spent = _trainer_seconds(row, attempt_elapsed)
    return None if spent is None else spent / step * (total - step)


def _trainer_seconds(row: Mapping[str, Any], attempt_elapsed: float | None) -> float | None:
    """The trainer's own ``elapsed_s`` where it logs a number, else this attempt's wall time."""
    spent = row.get("elapsed_s")
    return spent if isinstance(spent, (int, float)) and not isinstance(spent, bool) else attempt_elapsed


def _final_table(
    decisions: Sequence[Decision], live: Mapping[str, RunStatus], metric: str | None = None
) -> Table:
    table = Table(title="results", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    summaries, unreadable = _summaries(decisions)
    reward = metric is None and _shows_reward(decisions, list(summaries.values()))
    values: tuple[str, ...] = (metric,) if metric else ("final", "best") if reward else ()
    columns: list[tuple[str, JustifyMethod]] = [("run", "left"), ("status", "left"), ("steps", "right")]
    columns += [(v, "right") for v in values]
    columns += [("wall", "right"), ("note", "left")]
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for d in decisions:
        state, note = final_state(d, live)
        summary = summaries[d.task.name]
        table.add_row(
            d.task.name,
            Text(state, style=STYLE[state]),
            step_text(d.task.run_dir, d.task.config, live.get(d.task.name) or d.previous),
            *_final_values(d, summary, metric, reward=reward),
            fmt_duration(_wall(d, summary, live)),
            _joined(note, unreadable.get(d.task.name)),
        )
    return table


def _wall(d: Decision, summary: Mapping[str, Any], live: Mapping[str, RunStatus]) -> object:
    """The run's wall time as its summary says, else from its status's start and end."""
    wall = summary.get("wall_time_s")
    return wall if wall is not None else elapsed_seconds(live.get(d.task.name) or d.previous, None)


def _joined(note: str, problem: str | None) -> str:
    """The run's note, and why its summary could not be read."""
    if problem is None:
        return note
    return f"{note}; {problem}" if note else problem


def _summaries(decisions: Sequence[Decision]) -> tuple[dict[str, Mapping[str, Any]], dict[str, str]]:
    """Each run's summary.json ({} without one), and why those that could not be read were not (a
    foreign trainer's summary.json: shown, never fatal)."""
    summaries: dict[str, Mapping[str, Any]] = {}
    unreadable: dict[str, str] = {}
    for d in decisions:
        try:
            summaries[d.task.name] = read_summary(d.task.run_dir) or {}
        except RunFileError as err:
            summaries[d.task.name], unreadable[d.task.name] = {}, f"summary.json {err.reason}"
    return summaries, unreadable


def _final_values(
    d: Decision, summary: Mapping[str, Any], metric: str | None, *, reward: bool
) -> tuple[str, ...]:
    """A finished run's value cells: the last of ``metric``, else its final and best reward (when shown)."""
    if metric:
        return (_fmt_reward(_metric_value(d.task.run_dir, metric)),)
    if reward:
        return (_fmt_reward(summary.get("final_reward")), _fmt_reward(summary.get("best_reward")))
    return ()


class RichDisplay:
    """`run`'s live view: notes on stderr, a live progress table and one line per state change.
    ``metric``: the logged metric the tables show (`run --metric`)."""

    def __init__(self, metric: str | None = None) -> None:
        self.metric = metric

    def note(self, line: str) -> None:
        _console.stderr().print(line, markup=False, highlight=False)

    def say(self, line: str) -> None:
        _console.stdout().print(line, markup=False, highlight=False)

    @contextmanager
    def following(self, decisions: Sequence[Decision]) -> Iterator[_LiveProgress]:
        from rich.live import Live

        out = _console.stdout()
        with Live(
            _progress_table(decisions, {}, _now(), self.metric),
            console=out,
            transient=True,
            auto_refresh=False,
        ) as view:
            yield _LiveProgress(view, decisions, self.metric)


class _LiveProgress:
    def __init__(self, view: Live, decisions: Sequence[Decision], metric: str | None) -> None:
        self.view, self.decisions, self.metric = view, decisions, metric

    def say(self, line: str) -> None:
        self.view.console.print(line, markup=False)

    def update(self, live: Mapping[str, RunStatus]) -> None:
        self.view.update(_progress_table(self.decisions, live, _now(), self.metric), refresh=True)


def _print_search_faults(result: SearchResult, sweep_dir: Path, resume: str) -> None:
    """What sweepgen could not write, and how to go on once the disk is fixed (as for a grid)."""
    err = _console.stderr()
    for error in result.errors:
        err.print(f"error: {error}", markup=False, highlight=False)
    if result.errors:
        left = f" ({', '.join(result.cancelled)})" if result.cancelled else ""
        err.print(
            "hint: sweepgen could not keep its records (full or read-only disk?); no trial was asked "
            f"or started since, and {len(result.cancelled)} trial(s) that never ran are left open{left}. "
            f"Free space, then `sweepgen status {sweep_dir}` shows what happened and `{resume}` goes on",
            markup=False,
            highlight=False,
        )


def print_search(result: SearchResult, sweep_dir: Path) -> None:
    """What `run` prints at the end of a search: its plan (--dry-run), that it was interrupted, or
    the trials by state and the best one (its events were said as they came)."""
    out = _console.stdout()
    if result.plan is not None:
        out.print(result.plan, markup=False)
    resume = result.resume or f"sweepgen run {sweep_dir}"
    if result.interrupted:
        _console.stderr().print(
            f"interrupted: the running trials were stopped (checkpoints kept); `{resume}` resumes them",
            markup=False,
        )
    if result.stopped:
        left = f" ({', '.join(result.cancelled)})" if result.cancelled else ""
        _console.stderr().print(
            f"the search was cancelled (`sweepgen cancel`): no trial was asked since; "
            f"{len(result.cancelled)} trial(s) stopped and left open in the study{left}; `{resume}` "
            "resumes them and goes on",
            markup=False,
        )
    for line in result.summary:
        out.print(line, markup=False, highlight=False)
    _print_search_faults(result, sweep_dir, resume)
    if result.elsewhere:
        out.print(
            f"{result.elsewhere} trial(s) still run in another `sweepgen run`; "
            f"follow them with `sweepgen status {sweep_dir}`; if that `run` was stopped, `{resume}` "
            "takes them over",
            markup=False,
        )


def print_result(result: RunResult, sweep_dir: Path, metric: str | None = None) -> None:
    """What `run` prints at the end: the plan (--dry-run), the submissions or the results, the log
    tail of each failed run, then the notes and errors."""
    out, err = _console.stdout(), _console.stderr()
    if result.describe:
        out.print(_plan_table(result.decisions))
        for line in result.describe:
            out.print(line, markup=False)
        return
    if result.submitted:
        _say_submitted(result, sweep_dir)
    else:
        out.print(_final_table(result.decisions, result.live, metric))
    for run in result.failed:
        reason = escape(one_line(run.reason))  # one line, whatever the status file says
        what = f"{escape(run.name)} failed ({reason}); last lines of {escape(str(run.log))}"
        err.print(f"\n[bold red]── {what}:[/]", markup=True)
        for line in run.tail:
            err.print(line, markup=False, highlight=False)
    for error in result.errors:
        err.print(f"error: {error}", markup=False, highlight=False)
    for note in result.notes:
        err.print(note, markup=False, highlight=False)


def print_decided(result: DecideResult, sweep_dir: Path, metric: str | None = None) -> None:
    """What `run --until-decided` prints at the end: the last round's runs, every look (boundary and
    p of each comparison), each arm's verdict, and how to go on when a round did not finish."""
    out, err = _console.stdout(), _console.stderr()
    for line in result.plan:
        out.print(line, markup=False, highlight=False)
    if result.last is not None:
        print_result(result.last, sweep_dir, metric)
    if result.plan:
        return
    for line in _decided_lines(result):
        out.print(line, markup=False, highlight=False)
    if result.code != 0:
        err.print(
            f"round {len(result.looks) + 1} did not finish: no look was taken; `sweepgen run {sweep_dir} "
            "--until-decided` goes on with the recorded rule once its runs can finish",
            markup=False,
        )


def _decided_lines(result: DecideResult) -> list[str]:
    """Every look, each decided arm's verdict, and what is left open when the seeds are spent."""
    from sweepgen.run.report.stats.sequential_record import look_lines  # --until-decided only: loaded then

    lines = [
        line for n, look in enumerate(result.looks, 1) for line in look_lines(look, n, result.total_looks)
    ]
    against = f"against {result.rule.baseline}"
    lines += [result.direction] if result.direction else []
    lines += [f"{a}: {v} {against} (sequential test)" for a, v in result.verdicts.items() if v != "open"]
    if result.code == 0:
        lines += _open_lines(result, against)
    return lines


def _open_lines(result: DecideResult, against: str) -> list[str]:
    """Of a finished --until-decided: the groups left open when the seeds are spent, or that none is."""
    open_arms = result.open_arms
    if not open_arms:
        return [f"every group decided {against}"]
    if not result.spent:
        return []
    from sweepgen.run.report.stats.sequential_record import NO_TEST

    within = f"within {result.rule.max_seeds} seeds per group {against}"
    untested = _untested(result)
    unmatched = _unmatched(result)
    return (
        _listed(f"no evidence {within}", [a for a in open_arms if a not in untested])
        + _listed(f"cannot decide {within} ({NO_TEST} at the last look)", sorted(untested - set(unmatched)))
        + [f"cannot decide {within}: {a}: {why}" for a, why in unmatched.items()]
    )


def _untested(result: DecideResult) -> set[str]:
    """The arms the last look could not test (every run of both gave one value, or a group short of
    two values): open, but with no evidence either way, so not "no evidence" of a difference."""
    return {c.name for c in result.looks[-1].crossings if c.p is None} if result.looks else set()


def _unmatched(result: DecideResult) -> dict[str, str]:
    """The arms whose last look's values the report would not compare (runs of different lengths),
    with why."""
    if not result.looks:
        return {}
    return {c.name: c.reason for c in result.looks[-1].crossings if c.reason is not None}


def _listed(words: str, arms: list[str]) -> list[str]:
    return [f"{words}: {', '.join(arms)}"] if arms else []


def _say_submitted(result: RunResult, sweep_dir: Path) -> None:
    out = _console.stdout()
    skipped = {n: s for n, s in result.live.items() if s.state is RunState.SKIPPED}
    # asked to be dropped by a `sweepgen cancel` before their submission (queue_cancel.py)
    live = result.live.items()
    dropped = {n: s for n, s in live if s.state is RunState.CANCELLED and s.reason in DROPPED_REASONS}
    for name, status in {**skipped, **dropped}.items():
        out.print(f"{name}: not submitted: {status.reason}", markup=False, highlight=False)
    count = len(result.live) - len(skipped) - len(dropped)
    if count:
        out.print(
            f"submitted {count} run(s) with the {result.options.executor} executor; "
            f"follow them with `sweepgen status {sweep_dir}`",
            markup=False,
        )
    elif dropped:
        out.print(f"submitted nothing ({sweep_dir})", markup=False)
    else:
        out.print(
            f"submitted nothing: every run was already queued, running or finished ({sweep_dir})",
            markup=False,
        )


def _now() -> datetime:
    return datetime.now(timezone.utc)
