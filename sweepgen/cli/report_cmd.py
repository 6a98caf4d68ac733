"""`sweepgen report DIR`: a results table, report.csv and report.png for a sweep's finished runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sweepgen.cli import _console

if TYPE_CHECKING:
    from rich.console import JustifyMethod


TRUNCATION_WARNING = 0.5  # the share of cut completions above which a reward is mostly about cut text


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _fmt(value) -> str:
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
# summary sections of optional trainer parts (sweepgen.run.report.SECTION_COLUMNS)
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


def short_names(paths) -> dict[str, str]:
    """The shortest dotted suffix of each path that no other path shares (training.seed -> seed)."""
    names = {}
    for path in paths:
        parts = path.split(".")
        for n in range(1, len(parts) + 1):
            suffix = ".".join(parts[-n:])
            if not any(o != path and (o == suffix or o.endswith("." + suffix)) for o in paths):
                break
        names[path] = suffix
    return names


def _runs_table(rows, varying, *, title: str, measured: dict[str, str] | None = None):
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich import box
    from rich.table import Table

    from sweepgen.cli._run_display import fmt_duration

    short = {**SHORT, **(measured or {})}
    headers = {**short, **short_names(varying)}
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


def _exact(value) -> str:
    return "-" if value is None else str(value)


def _groups_table(result, groups):
    """Per variant group, the objective over its seeds: what a comparison is read from."""
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich.table import Table

    obj = result.objective
    if obj.metric is None:
        finals = {r.name: (r.summary or {}).get("final_reward") for r in result.finished}
        title = "final reward by variant (over seeds)"
    else:
        finals = {r.name: r.score.value for r in result.finished}
        title = f"{obj.label} by variant (over seeds; {obj.mode} is better)"
    from rich import box

    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    justify: JustifyMethod
    for col, justify in (
        ("variant", "left"),
        ("n", "right"),
        ("mean", "right"),
        ("std", "right"),
        ("min", "right"),
        ("max", "right"),
    ):
        table.add_column(col, justify=justify)
    for group in groups:
        vals = [v for n in group.runs if isinstance(v := finals[n], (int, float))]
        if not vals:
            continue
        mean = sum(vals) / len(vals)
        std = (sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) ** 0.5 if len(vals) > 1 else None
        table.add_row(group.label, str(len(vals)), _fmt(mean), _fmt(std), _fmt(min(vals)), _fmt(max(vals)))
    return table


@click.command("report")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--report-dir",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for report.csv and report.png (default: the folder holding the runs). "
    "(-o is the output root in render and check; it has no second meaning here.)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "csv", "json"]),
    default="text",
    show_default=True,
    help="text: tables for people; csv / json: the per-run table on stdout, for programs "
    "(report.csv and report.png are written either way)",
)
@click.option("--no-plot", is_flag=True, help="Skip the curve PNG (needs matplotlib otherwise).")
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
def report(
    directory: Path,
    out_dir: Path | None,
    fmt: str,
    no_plot: bool,
    metric: str | None,
    mode: str,
    at: str | None,
) -> int:
    """Summarise the runs of DIR: a generated sweep folder (with sweep.lock.json) or a runs folder.

    One row per run with the values that vary across the sweep, final and best reward, diversity
    and wall time; a PNG of reward curves, one line per variant with seeds as mean and band.

    With --metric NAME the table, report.csv and report.png follow that metric instead, for any
    trainer: its value (--at final|best, --mode max|min), the step it was logged at, the
    train-eval gap for an eval_<x> metric with a train_<x> beside it, and the last logged step. A
    run without the metric is listed with the reason, never dropped.
    """
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.errors import UserError
    from sweepgen.run import report as rep

    source = click.get_current_context().get_parameter_source("mode")
    mode_given = source is not None and source.name != "DEFAULT"
    if metric is None and (mode_given or at is not None):
        raise UserError("--mode and --at need --metric", hint="e.g. --metric eval_acc --mode max")
    if at is None:
        at = "best" if mode_given else "final"
    if not no_plot:
        rep.require_matplotlib()  # before anything is written
    objective = rep.Objective(metric, mode, at)
    result = rep.collect(directory, objective)
    out_dir = out_dir or result.out_dir
    out, err = _console.stdout(), _console.stderr()
    measured = (
        {
            objective.label: objective.label,
            "at_step": "step",
            "train_eval_gap": "train-eval",
            "final_step": "final_step",
        }
        if metric
        else None
    )
    if fmt != "text":  # the per-run table for programs; the files are written as in text mode
        rep.write_atomic(out_dir / "report.csv", rep.csv_text(result).encode())
        if not no_plot:
            png = rep.plot_png(rep.curves(result), directory.name, metric or rep.DEFAULT_CURVE)
            rep.write_atomic(out_dir / "report.png", png)
        if fmt == "json":  # NaN or Infinity (a diverged run) is null: JSON has neither
            table = [{k: _finite(v) for k, v in row.items()} for row in rep.rows(result)]
            click.echo(json.dumps(table, indent=2, allow_nan=False, default=str))
        else:
            click.echo(rep.csv_text(result), nl=False)
        return 0
    out.print(_runs_table(rep.rows(result), result.varying, title=f"report: {directory}", measured=measured))
    _search_best(directory)
    cut = [
        r.name
        for r in result.finished
        if isinstance((r.summary or {}).get("truncated_fraction"), (int, float))
        and (r.summary or {})["truncated_fraction"] > TRUNCATION_WARNING
    ]
    if cut:
        err.print(
            f"warning: {len(cut)} run(s) had more than {TRUNCATION_WARNING:.0%} of their completions cut at "
            f"max_completion_length and scored on the cut text ({', '.join(cut[:8])}"
            f"{', ...' if len(cut) > 8 else ''}); raise grpo.max_completion_length if that is not intended",
            markup=False,
        )
    if metric is None and not any(r.summary for r in result.finished):
        logged = rep.logged_metrics(result)
        err.print(
            "note: no run has the bundled trainer's summary.json; report a metric the runs logged with "
            "--metric NAME" + (f" (logged: {', '.join(logged[:12])})" if logged else ""),
            markup=False,
        )
    if metric:
        best = rep.best_run(result)
        if best is None:
            err.print(f"no finished run logged {metric}", markup=False)
        else:
            out.print(
                f"best run by {objective.label} ({mode} is better): {best.name} = {_fmt(best.score.value)} "
                f"at step {best.score.step}",
                markup=False,
            )
    groups = rep.curves(result)
    if any(len(g.runs) > 1 for g in groups):
        out.print(_groups_table(result, groups))
    if result.values_from != "lock":
        err.print(
            f"note: no sweep lock describes these runs; varying values come from their config.yaml "
            f"files ({len(result.varying)} paths differ)"
        )
    csv_path = out_dir / "report.csv"
    rep.write_atomic(csv_path, rep.csv_text(result).encode())
    out.print(f"CSV: {csv_path}", markup=False)
    if not no_plot:
        lines = groups
        for curve in lines:
            for note in curve.notes:
                err.print(f"note: {note}", markup=False)
        png_path = out_dir / "report.png"
        rep.write_atomic(png_path, rep.plot_png(lines, directory.name, metric or rep.DEFAULT_CURVE))
        out.print(f"PNG: {png_path}", markup=False)
    return 0


def _search_best(directory: Path) -> None:
    """A search sweep: its trials by state, the best trial and its config diff from the base."""
    from sweepgen.cli.search_run import search_lines

    for line in search_lines(directory, diff=True):
        _console.stdout().print(line, markup=False, highlight=False)
