"""`sweepgen report DIR`: parse the options, call ``sweepgen.run.report.make.make``, print what it
returns (tables, warnings, the files it wrote) and return its exit code."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sweepgen import direction
from sweepgen.cli import _console
from sweepgen.cli._params import read_budget_option, trusting
from sweepgen.formats import jsonfloat
from sweepgen.fs import filenames

if TYPE_CHECKING:  # annotations only: sweepgen.run and rich load when the command runs
    from rich.console import Console
    from rich.table import Table

    from sweepgen.run.report.collect import RunRecord
    from sweepgen.run.report.make import Outcome, Request
    from sweepgen.run.report.stats.verdicts import Statistics
    from sweepgen.run.report.stats_files import StatsRow


MAX_SENTENCES = 12  # the terminal's "how many seeds" sentences; the rest are in statistics.csv


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
# routing eval: routing.<mode>.<metric> -> both_hack, ret_task, fgt_uniq, ...
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
    missing: str | None = None,
) -> Table:
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich import box
    from rich.table import Table

    short = {**SHORT, **(measured or {})}
    headers = {**short, **_short_names(varying)}
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    finished = all(row["state"] == "finished" for row in rows)
    if finished:
        rows = [{k: v for k, v in row.items() if k != "state"} for row in rows]  # say it once, in the title
    table.title = _runs_title(title, missing, finished=finished)
    _runs_columns(table, rows[0], short, headers)
    for row in rows:
        # config values exactly as configured (0.0125 stays 0.0125); measured values rounded
        table.add_row(*(_cell(k, v, short) for k, v in row.items()))
    return table


def _runs_title(title: str, missing: str | None, *, finished: bool) -> str:
    """The title, saying when every run finished and how many lack the objective's value."""
    if finished:
        return f"{title} (all finished{'; ' + missing if missing else ''})"
    return f"{title} ({missing})" if missing else title


def _runs_columns(
    table: Table, columns: Iterable[str], short: Mapping[str, str], headers: Mapping[str, str]
) -> None:
    """Measured columns (those with a short name) right-aligned, config values left; a run's name whole."""
    for col in columns:
        numeric = col in short
        header = headers.get(col, col)
        table.add_column(
            header,
            justify="right" if numeric else "left",
            overflow="fold",
            no_wrap=col == "run",
            min_width=len(header),
        )


def _cell(key: str, value: object, short: Mapping[str, str]) -> str:
    """A wall time as a duration, a measured value rounded, a config value exactly as configured."""
    from sweepgen.cli._run_display import fmt_duration

    if key == "wall_time_s":
        return fmt_duration(value)
    return _fmt(value) if key in short else _exact(value)


def _exact(value: object) -> str:
    return "-" if value is None else str(value)


def _stats_table(outcome: Outcome) -> Table:
    """Per seed group: n, mean and its interval; against the baseline the verdict first, then its numbers
    (the verdict stays on screen in a narrow terminal)."""
    # rich (~20 ms) loads only when there is something to print, not for --help
    from rich import box
    from rich.table import Table

    statistics = outcome.statistics
    assert statistics is not None  # shown only when computed
    title = _stats_title(outcome.context, statistics)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    against = bool(statistics.baseline)
    for col in _stats_columns(against):
        # a narrow terminal folds numbers onto a second line, never cuts them ("[0.9…"), and a
        # group's name and verdict stay whole: "beta0…" would be beta0.0 or beta0.02
        named = col in ("group", "verdict")
        table.add_column(col, justify="left" if named else "right", overflow="fold", no_wrap=named)
    for row in outcome.stats_rows():
        cells = [row["group"], *([_fmt(row["verdict"])] if against else [])]
        cells += [str(row["n"]), _fmt(row["mean"]), _interval(row["ci_low"], row["ci_high"])]
        table.add_row(*cells, *(_comparison_cells(row) if against else []))
    return table


def _stats_title(ctx: Mapping[str, str], statistics: Statistics) -> str:
    """The metric and value by group, and the methods: the comparisons' (with a baseline) and the
    group intervals'."""
    methods = statistics.methods.describe()
    title = f"{ctx['metric']}, {ctx['value']}, by group over seeds ({ctx['direction']})"
    if statistics.baseline:
        title += (
            f", against {statistics.baseline}; {methods['test']}, Holm-adjusted, {methods['diff_interval']}"
        )
    return title + f"; group intervals: {methods['mean_interval']}"


def _stats_columns(against: bool) -> list[str]:
    """The statistics table's columns; with a baseline (``against``), the verdict second and the
    comparison's numbers last."""
    if not against:
        return ["group", "n", "mean", "CI (mean)"]
    return ["group", "verdict", "n", "mean", "CI (mean)", "diff", "CI (diff)", "level", "p", "p (Holm)"]


def _comparison_cells(row: StatsRow) -> list[str]:
    """A group's comparison with the baseline: diff, its interval and level, p and Holm's p."""
    level = row["diff_ci_level"]
    return [
        _fmt(row["diff"]),
        _interval(row["diff_ci_low"], row["diff_ci_high"]),
        "-" if level is None else f"{level:.2%}",
        _fmt(row["p"]),
        _fmt(row["p_holm"]),
    ]


def _stats_sentences(outcome: Outcome) -> list[str]:
    """What cannot be decided and why, and how many seeds would decide, one sentence per comparison."""
    statistics = outcome.statistics
    assert statistics is not None
    from sweepgen.run.report import undecided

    out = [*outcome.caveats(), *undecided.sentences(statistics)]
    interval = statistics.methods.describe()
    from sweepgen.run.report.stats.verdicts import bootstrap_coverage

    covers = bootstrap_coverage(statistics)
    if covers is not None:
        out.append(covers)
    if statistics.methods.interval != "t" or statistics.methods.test != "welch":
        out.append(
            f"interval ({interval['diff_interval']}) and test ({interval['test']}) are different methods: "
            "they can disagree; the verdict follows the test"
        )
    return out


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None else f"[{_fmt(low)}, {_fmt(high)}]"


@click.command("report")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--report-dir",
    "out_dir",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Folder for {filenames.REPORT_CSV}, {filenames.REPORT_PNG}, {filenames.STATISTICS_CSV} and "
    f"{filenames.REPORT_HTML} (default: the folder "
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
    default=None,
    help="Which direction of --metric is better (the direction only: --at picks the value). "
    "Default: min for a metric whose name says it is lowered (loss, nll, error, perplexity, ...; "
    "said beside the best run), else max; a search's own mode for its metric.",
)
@click.option(
    "--at",
    "at",
    default=None,
    metavar="final|best|last:K",
    help="The value of --metric compared: its last logged value (final, the default), its best over "
    "the run (best: biased toward better, warned), or the mean of its last K logged values (last:K). "
    "--mode never changes it.",
)
@click.option(
    "--test",
    "test",
    type=click.Choice(["welch", "permutation"]),
    default="welch",
    show_default=True,
    help="The test of each difference: Welch's t-test at a level calibrated over the variance ratio "
    "(it holds alpha whatever the groups' spreads), or the exact permutation test (which cannot "
    "decide below about 4-5 seeds per group).",
)
@click.option(
    "--interval",
    "interval",
    type=click.Choice(["t", "bootstrap"]),
    default="t",
    show_default=True,
    help="Intervals: t for a mean and Welch at the calibrated level for a difference, or the "
    "percentile bootstrap, given only from 20 runs a group (below, its 95% covers 52-92%: no "
    "interval, said why).",
)
@click.option(
    "--compare",
    default=None,
    metavar="GROUP",
    help="Compare every seed group with this one (a group's name, or a run's name for its seed group): "
    "difference, Welch interval at its Holm step's calibrated level, "
    "Welch's t-test at a calibrated level, Holm-corrected p, a verdict (better / worse / no evidence / "
    "cannot decide) that holds exactly when the interval excludes zero, and the seeds that would decide.",
)
@click.option(
    "--seeds",
    type=click.Choice(["all", "tune", "test"]),
    default="all",
    show_default=True,
    help="Statistics over the spec's tune or held-out test seeds only (seed: {path, tune, test}).",
)
@click.option(
    "--html", is_flag=True, help=f"Also write {filenames.REPORT_HTML}: one self-contained page (plot extra)."
)
@read_budget_option("metric logs, configs, summaries, event files")
@trusting("directory")
def report(
    directory: Path,
    out_dir: Path | None,
    fmt: str,
    no_plot: bool,
    metric: str | None,
    mode: str | None,
    at: str | None,
    test: str,
    interval: str,
    compare: str | None,
    seeds: str,
    html: bool,
    max_read_bytes: int,
) -> int:
    """Summarise the runs of DIR: a generated sweep folder (with sweep.lock.json) or a runs folder.

    One row per run with the values that vary across the sweep, final and best reward, diversity
    and wall time; per seed group (runs that differ only in the seed) the mean with a 95% t
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
    from sweepgen.run.core import runfiles
    from sweepgen.run.report import make as report_make
    from sweepgen.run.sweep.start import report_target

    mode_given = mode is not None
    with runfiles.read_budget(max_read_bytes):
        # a search sweep (DIR, or the one its runs name): by default, the metric and mode it optimised
        target = report_target(
            directory, metric, mode or direction.default_mode(metric), mode_given=mode_given
        )
        request = report_make.Request(
            directory=directory,
            out_dir=out_dir,
            metric=target.metric,
            mode=target.mode,
            mode_given=mode_given,
            mode_inferred=not mode_given and metric is not None,
            at=at,
            compare=compare,
            seeds=seeds,
            test=test,
            interval=interval,
            plot=not no_plot,
            html=html,
            search=target.spec,
            search_dir=target.search_dir,
            search_note=target.note,
        )
        outcome = report_make.make(request)
        _show(outcome, request, fmt)
    return outcome.exit_code


def _best_line(outcome: Outcome, request: Request, best: RunRecord) -> str:
    """The best run by the objective, and the runs tied with it."""
    from sweepgen.run.report import collect as rep
    from sweepgen.run.report.make import grouped_runs

    result = outcome.report
    tied = rep.tied_with(result, best, grouped_runs(outcome.groups))
    over = "" if request.seeds == "all" else f" over the {request.seeds} seeds"
    return (
        f"best run{over} by {result.objective.label} ({_direction_words(request, outcome)}): {best.name} = "
        f"{_fmt(best.score.value)} at step {best.score.step}"
        + (f"; tied with {', '.join(tied[:8])}{', ...' if len(tied) > 8 else ''}" if tied else "")
        + _one_of_its_seeds(outcome, best)
    )


def _one_of_its_seeds(outcome: Outcome, best: RunRecord) -> str:
    """Where the best run is one seed of a group: that group's mean beside it. The best of all runs
    is its group's luckiest seed too, so its value read as the configuration's is biased toward
    better (shaping's coma_lr0.001: best run 0.770, the group's six seeds 0.752 on average)."""
    group = next((g for g in outcome.groups if best.name in g.members), None)
    members = () if group is None else group.members
    values = [r.value for r in outcome.report.finished if r.name in members and r.value is not None]
    if group is None or len(values) < 2:
        return _one_seed(outcome)
    mean = _fmt(math.fsum(values) / len(values))
    return (
        f"; one of {len(values)} seeds of {group.name}, whose mean is {mean}: the best run is also its "
        "group's luckiest seed, so quote the group's mean, not this value"
    )


def _one_seed(outcome: Outcome) -> str:
    """The best of several runs, with no other seed of its configuration to average: the maximum
    of noisy values is biased toward better, and one run gives no interval. A search's `status`
    says so of its best trial (best_value.words); a grid of one seed each said nothing."""
    from sweepgen.run.report.make import grouped_runs

    n = len(grouped_runs(outcome.groups))  # with a metric, the groups hold the runs with a value
    if n < 2:
        return ""
    return (
        f"; the only run of its configuration with a value, picked as the best of {n} runs: "
        "optimistic (the best of noisy values is the winner's curse), with no interval (run each "
        "configuration at 2 or more seeds, a seed axis in the spec, for means with intervals)"
    )


def _direction_words(request: Request, outcome: Outcome) -> str:
    """The direction of the comparison, and how it was chosen when --mode did not say."""
    if request.mode_inferred:
        return direction.inferred_words(request.metric, request.mode)
    if outcome.chosen:  # no --metric: sweepgen chose the metric and its direction (make.Guessed)
        from sweepgen.run.report.make import CHOSEN

        return f"{outcome.report.objective.mode} is better" + CHOSEN
    return f"{request.mode} is better"  # given, the bundled reward's, or the search's own


def _show_statistics(outcome: Outcome, out: Console) -> None:
    """The statistics table and its first sentences (the rest are in statistics.csv)."""
    out.print(_stats_table(outcome))
    sentences = _stats_sentences(outcome)
    for sentence in sentences[:MAX_SENTENCES]:
        out.print(sentence, markup=False, highlight=False)
    if len(sentences) > MAX_SENTENCES:
        out.print(
            f"... {len(sentences) - MAX_SENTENCES} more "
            f"(seeds_needed and reason in {filenames.STATISTICS_CSV})",
            markup=False,
        )


def _show(outcome: Outcome, request: Request, fmt: str) -> None:
    out, err = _console.stdout(), _console.stderr()
    for warning in outcome.warnings:
        err.print(f"warning: {warning}", markup=False)
    if fmt != "text":  # for programs: one table on stdout, nothing else
        if outcome.chosen:  # the metric no one named: said on stderr, beside the warnings
            err.print(f"note: {outcome.chosen}", markup=False)
        _show_table(outcome, request, fmt)
        return
    _show_runs(outcome, request, out)
    if request.search_dir is not None:
        _search_best(request.search_dir, outcome.view)
    for note in outcome.notes:
        err.print(f"note: {note}", markup=False)
    if outcome.best is not None:
        out.print(_best_line(outcome, request, outcome.best), markup=False)
    if outcome.statistics is not None:
        _show_statistics(outcome, out)
    _show_files(outcome, out)


def _show_files(outcome: Outcome, out: Console) -> None:
    """The files written, then an earlier report's files removed: a removal the user did not ask for
    by name must be said, or a file they kept would vanish unseen."""
    for what, path in outcome.written:
        out.print(f"{what}: {path}", markup=False)
    for path in outcome.removed:
        out.print(f"removed (an earlier report's, not written by this one): {path}", markup=False)


def _show_runs(outcome: Outcome, request: Request, out: Console) -> None:
    """The per-run table; with --metric, its value, step, train-eval gap and final step measured."""
    result = outcome.report
    label = result.objective.label
    measured = (  # the metric asked for or chosen (TRL's `reward`): a measurement, rounded
        {label: label, "at_step": "step", "train_eval_gap": "train-eval", "final_step": "final_step"}
        if result.objective.metric
        else None
    )
    lacking = [r for r in outcome.rows if r.get("state") == "finished" and _lacks(r, label)]
    # a title that says "all finished" must not hide runs the statistics could not use
    missing = f"{label} missing in {len(lacking)} finished runs" if lacking else None
    title = f"report: {request.directory}"
    out.print(_runs_table(outcome.rows, result.varying, title=title, measured=measured, missing=missing))


def _show_table(outcome: Outcome, request: Request, fmt: str) -> None:
    """--format csv|json: the statistics (with --compare) or the per-run table, on stdout."""
    if request.compare is not None and outcome.statistics is not None:
        from sweepgen.run.report import stats_files

        if fmt == "json":
            click.echo(
                stats_files.json_text(outcome.statistics, outcome.context, outcome.caveat_columns()), nl=False
            )
        else:
            click.echo(
                _console.safe_text(
                    stats_files.csv_text(outcome.statistics, outcome.context, outcome.caveat_columns())
                ),
                nl=False,
            )
    elif fmt == "json":  # NaN or Infinity (a diverged run) tagged: JSON has neither
        click.echo(json.dumps(jsonfloat.tagged(outcome.rows), indent=2, allow_nan=False, default=str))
    else:
        from sweepgen.run.report import collect as rep

        # a quoted cell may hold a line break: no line of it may start a CI workflow command
        click.echo(_console.safe_text(rep.csv_text(outcome.report)), nl=False)


def _lacks(row: Mapping[str, Any], label: str) -> bool:
    return label in row and row[label] is None


def _search_best(directory: Path, view: Any) -> None:
    """A search sweep: its trials by state, the best trial and its config diff from the base
    (``view``: the study as the report loaded it, or None)."""
    from sweepgen.run.sweep.start import search_lines

    for line in search_lines(directory, diff=True, view=view):
        _console.stdout().print(line, markup=False, highlight=False)
