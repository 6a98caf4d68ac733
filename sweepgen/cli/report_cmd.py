"""`sweepgen report DIR`: parse the options, call ``sweepgen.run.report.make.make``, print what it
returns (tables, warnings, the files it wrote) and return its exit code."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sweepgen.cli import _console

if TYPE_CHECKING:  # annotations only: sweepgen.run and rich load when the command runs
    from rich.table import Table

    from sweepgen.run.report.make import Outcome, Request


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


# terminal headers; the CSV keeps the full names (diversity: unique-sample ratio, mean pairwise Jaccard)
SHORT = {
    "final_reward": "final",
    "best_reward": "best",
    "steps": "steps",
    "wall_time_s": "wall",
    "diversity.unique_ratio": "uniq",
    "diversity.mean_pairwise_jaccard": "jacc",
    "degenerate": "degen",
}
# summary sections of optional trainer parts (sweepgen.run.report.collect.SECTION_COLUMNS)
SHORT.update(
    {
        "debate.team_accuracy": "team_acc",
        "debate.reward_solver": "I_solver",
        "debate.reward_critic": "I_critic",
        "debate.zero_advantage_groups": "zero_adv",
        "debate.length_tokens": "debate_len",
    }
)
# routing eval (issue 4): routing.<mode>.<metric> -> both_hack, ret_task, fgt_uniq, ...
SHORT.update(
    {
        f"routing.{mode}.{metric}": f"{m}_{short}"
        for mode, m in (("both", "both"), ("retain_only", "ret"), ("forget_only", "fgt"))
        for metric, short in (
            ("task_reward", "task"),
            ("hack_rate", "hack"),
            ("unique_ratio", "uniq"),
            ("mean_pairwise_jaccard", "jacc"),
        )
    }
)


def _short_names(paths: Sequence[str]) -> dict[str, str]:
    """The shortest dotted suffix of each path that no other path shares (training.seed -> seed)."""
    names: dict[str, str] = {}
    for path in paths:
        parts = path.split(".")
        for n in range(1, len(parts) + 1):
            suffix = ".".join(parts[-n:])
            if not any(o != path and (o == suffix or o.endswith("." + suffix)) for o in paths):
                break
        names[path] = suffix
    return names


def _runs_table(
    rows: Sequence[Mapping[str, Any]],
    varying: Sequence[str],
    *,
    title: str,
    measured: dict[str, str] | None = None,
) -> Table:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich import box
    from rich.table import Table

    from sweepgen.cli._run_display import fmt_duration

    short = {**SHORT, **(measured or {})}
    headers = {**short, **_short_names(varying)}
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    if all(row["state"] == "finished" for row in rows):
        rows = [{k: v for k, v in row.items() if k != "state"} for row in rows]  # say it once, in the title
        table.title = f"{title} (all finished)"
    for col in rows[0]:
        numeric = col in short
        header = headers.get(col, col)
        table.add_column(
            header,
            justify="right" if numeric else "left",
            overflow="fold",
            no_wrap=col == "run",
            min_width=len(header),
        )
    for row in rows:
        # config values exactly as configured (0.0125 stays 0.0125); measured values rounded
        table.add_row(
            *(
                fmt_duration(v) if k == "wall_time_s" else _fmt(v) if k in short else _exact(v)
                for k, v in row.items()
            )
        )
    return table


def _exact(value: object) -> str:
    return "-" if value is None else str(value)


def _stats_table(outcome: Outcome) -> Table:
    """Per seed group: n, mean and its 95% interval; against the baseline the verdict with its numbers."""
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich import box
    from rich.table import Table

    statistics = outcome.statistics
    assert statistics is not None  # shown only when computed
    obj = outcome.report.objective
    label = obj.label if obj.metric else "final reward"
    title = f"{label} by group (over seeds; {statistics.mode} is better)"
    if statistics.baseline:
        title += f", against {statistics.baseline}"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = ["group", "n", "mean", "95% CI"]
    if statistics.baseline:
        columns += ["diff", "95% CI (diff)", "test", "p", "p (Holm)", "verdict"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("group", "test", "verdict") else "right")
    for row in outcome.stats_rows():
        cells = [row["group"], str(row["n"]), _fmt(row["mean"]), _interval(row["ci_low"], row["ci_high"])]
        if statistics.baseline:
            cells += [
                _fmt(row["diff"]),
                _interval(row["diff_ci_low"], row["diff_ci_high"]),
                _fmt(row["test"]),
                _fmt(row["p"]),
                _fmt(row["p_holm"]),
                _fmt(row["verdict"]),
            ]
        table.add_row(*cells)
    return table


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None else f"[{_fmt(low)}, {_fmt(high)}]"


@click.command("report")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--report-dir",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for report.csv, report.png, statistics.csv and report.html (default: the folder "
    "holding the runs). (-o is the output root in render and check; it has no second meaning here.)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "csv", "json"]),
    default="text",
    show_default=True,
    help="text: tables for people; csv / json: the per-run table on stdout, for programs (with "
    "--compare: the statistics table); the files are written either way",
)
@click.option("--no-plot", is_flag=True, help="Skip the curve PNG.")
@click.option(
    "--metric",
    default=None,
    metavar="NAME",
    help="Report this logged metric (from metrics.jsonl, metrics.csv or TensorBoard events in each "
    "run directory) instead of the bundled trainer's final reward.",
)
@click.option(
    "--mode",
    type=click.Choice(["max", "min"]),
    default="max",
    show_default=True,
    help="Which direction of --metric is better.",
)
@click.option(
    "--at",
    "at",
    type=click.Choice(["final", "best"]),
    default=None,
    help="Take --metric's last logged value (final) or its best one over the run (best). "
    "Default: best when --mode is given, else final.",
)
@click.option(
    "--compare",
    default=None,
    metavar="GROUP",
    help="Compare every seed group with this one: difference, 95% bootstrap interval, Welch's t-test "
    "(permutation test under 5 seeds), Holm-corrected p, and a verdict (better / worse / no evidence).",
)
@click.option(
    "--seeds",
    type=click.Choice(["all", "tune", "test"]),
    default="all",
    show_default=True,
    help="Statistics over the spec's tune or held-out test seeds only (seed: {path, tune, test}).",
)
@click.option("--html", is_flag=True, help="Also write report.html: one self-contained page (plot extra).")
def report(
    directory: Path,
    out_dir: Path | None,
    fmt: str,
    no_plot: bool,
    metric: str | None,
    mode: str,
    at: str | None,
    compare: str | None,
    seeds: str,
    html: bool,
) -> int:
    """Summarise the runs of DIR: a generated sweep folder (with sweep.lock.json) or a runs folder.

    One row per run with the values that vary across the sweep, final and best reward, diversity
    and wall time; per seed group (runs that differ only in the seed) the mean with a 95% bootstrap
    interval; a PNG of curves, one line per group with seeds as mean and band.

    A search sweep's folder is reported by its search metric and mode unless --metric is given,
    with its trials by state, the best trial and that trial's config diff from the base (--html: the
    best-so-far curve, pruned trials marked). With --metric NAME the table, report.csv and report.png
    follow that metric instead, for any trainer: its value (--at final|best, --mode max|min), the
    step it was logged at, the train-eval gap for an eval_<x> metric with a train_<x> beside it,
    and the last logged step. A run without the metric is listed with the reason, never dropped; a
    metric no run logged is an error, and nothing is written.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.run.report import make as report_make
    from sweepgen.run.sweep.start import report_target

    source = click.get_current_context().get_parameter_source("mode")
    mode_given = source is not None and source.name != "DEFAULT"
    # a search sweep (DIR, or the one its runs name): by default, the metric and mode it optimised
    target = report_target(directory, metric, mode, mode_given=mode_given)
    request = report_make.Request(
        directory=directory,
        out_dir=out_dir,
        metric=target.metric,
        mode=target.mode,
        mode_given=mode_given,
        at=at,
        compare=compare,
        seeds=seeds,
        plot=not no_plot,
        html=html,
        search=target.spec,
        search_dir=target.search_dir,
        search_note=target.note,
    )
    outcome = report_make.make(request)
    _show(outcome, request, fmt)
    return outcome.exit_code


def _show(outcome: Outcome, request: Request, fmt: str) -> None:
    from sweepgen.run.report import make as report_make

    out, err = _console.stdout(), _console.stderr()
    for warning in outcome.warnings:
        err.print(f"warning: {warning}", markup=False)
    if fmt != "text":  # for programs: one table on stdout, nothing else
        if request.compare is not None and outcome.statistics is not None:
            if fmt == "json":
                click.echo(report_make.stats_json(outcome.statistics))
            else:
                click.echo(_console.safe_text(report_make.stats_csv(outcome.statistics)), nl=False)
        elif fmt == "json":  # NaN or Infinity (a diverged run) is null: JSON has neither
            table = [{k: _finite(v) for k, v in row.items()} for row in outcome.rows]
            click.echo(json.dumps(table, indent=2, allow_nan=False, default=str))
        else:
            from sweepgen.run.report import collect as rep

            # a quoted cell may hold a line break: no line of it may start a CI workflow command
            click.echo(_console.safe_text(rep.csv_text(outcome.report)), nl=False)
        return
    result = outcome.report
    metric = request.metric
    measured = (
        {
            result.objective.label: result.objective.label,
            "at_step": "step",
            "train_eval_gap": "train-eval",
            "final_step": "final_step",
        }
        if metric
        else None
    )
    title = f"report: {request.directory}"
    out.print(_runs_table(outcome.rows, result.varying, title=title, measured=measured))
    if request.search_dir is not None:
        _search_best(request.search_dir)
    for note in outcome.notes:
        err.print(f"note: {note}", markup=False)
    best = outcome.best
    if best is not None:
        out.print(
            f"best run by {result.objective.label} ({request.mode} is better): {best.name} = "
            f"{_fmt(best.score.value)} at step {best.score.step}",
            markup=False,
        )
    if outcome.statistics is not None:
        out.print(_stats_table(outcome))
    for what, path in outcome.written:
        out.print(f"{what}: {path}", markup=False)


def _search_best(directory: Path) -> None:
    """A search sweep: its trials by state, the best trial and its config diff from the base."""
    from sweepgen.run.sweep.start import search_lines

    for line in search_lines(directory, diff=True):
        _console.stdout().print(line, markup=False, highlight=False)
