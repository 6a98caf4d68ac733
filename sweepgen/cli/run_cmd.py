"""`sweepgen run DIR`: parse the options, call ``sweepgen.run.sweep.start.run`` (the search
controller for a search sweep, ``sweepgen.run.sweep.grid.run_sweep`` for any other), print what it
returns. Run selection, the recorded command line, waiting and the exit code live there (see its
docstring for the exit codes: 0 every run in scope finished; 1 a run failed, was cancelled or is
still running elsewhere; 2 bad input; 130 interrupted).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from sweepgen.cli._params import SECONDS, limit_option, only_option, trusting
from sweepgen.run.core.registry import NAMES as EXECUTOR_NAMES

if TYPE_CHECKING:
    from sweepgen.run.report.stats.sequential_record import Rule


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
@click.option("--per-gpu", type=int, default=None, help="Runs sharing one GPU (with --gpus; default 1).")
@click.option(
    "--mps",
    is_flag=True,
    help="With --gpus (local executor): start an NVIDIA MPS control daemon for this sweep, so the runs "
    "packed on a GPU run their kernels at once, and stop it at the end. An error where MPS is missing.",
)
@click.option("--dry-run", is_flag=True, help="Show what would run and how; start nothing, write nothing.")
@only_option("Run only these runs")
@click.option("--rerun-failed", is_flag=True, help="Also start runs that failed or were cancelled before.")
@click.option(
    "--executor",
    type=click.Choice(EXECUTOR_NAMES),
    default=None,
    help="Where runs execute (default local, or the one the sweep was started with).",
)
@click.option(
    "--command",
    "command",
    default=None,
    metavar="CMD",
    help="Run each config with CMD instead of the bundled trainer; placeholders {config}, "
    "{run_dir}, {name}, {variant}, {config_dir} (absolute), {config_name} (no suffix). "
    "Default: <this python> -P -m sweepgen_trainer {config}. Such a run "
    "succeeds on exit 0 (see --done-file).",
)
@click.option(
    "--shell",
    is_flag=True,
    help="Run --command with /bin/sh -c, for shell syntax (&&, pipes, redirections); placeholders "
    "are filled in shell-quoted.",
)
@click.option(
    "--done-file",
    default=None,
    metavar="PATH",
    help="With --command: a run is finished when it leaves this file in its run directory "
    "(e.g. metrics.csv), whatever its exit (a non-zero one after it is said); exit 0 without it "
    "is a failure.",
)
@click.option(
    "--metric",
    default=None,
    metavar="NAME",
    help="Show this logged metric (metrics.jsonl or metrics.csv) in the live and final tables; "
    "without it a trainer other than the bundled one gets no reward columns.",
)
@click.option(
    "--wait/--no-wait",
    default=None,
    help="Follow the runs until they end, also those another `sweepgen run` (or its Slurm jobs) "
    "runs. Default: wait locally (local runs are always followed); on Slurm, submit and return. "
    "--no-wait with runs still running elsewhere exits 1.",
)
@click.option(
    "--stop-timeout",
    type=SECONDS,
    default=None,
    metavar="SECONDS",
    help="On Ctrl-C, how long each run may take to stop by itself (finish its step, save a "
    "checkpoint) before it is killed; a second Ctrl-C kills at once. Local default: 60.",
)
@click.option(
    "--time-limit",
    type=SECONDS,
    default=None,
    metavar="SECONDS",
    help="Local executor: a run still running after this long is stopped like a cancelled one "
    "(SIGTERM, then SIGKILL after --stop-timeout) and recorded failed, timed out. Default: the "
    "spec's resources.time, else none. On Slurm the limit is resources.time.",
)
@click.option(
    "--until-decided",
    is_flag=True,
    help="Run the sweep's seeds in rounds until every group is decided against the --compare group by "
    "a sequential test that keeps its error rate (alpha-spending over the rounds, Holm over the groups; "
    "docs/RUN.md, `run --until-decided`), or --max-seeds is spent. Each round runs the next seeds of the "
    "baseline and of the groups still open; the rounds are recorded in DIR/.sweepgen-decide.json.",
)
@click.option("--compare", default=None, metavar="GROUP", help="With --until-decided: the baseline group.")
@click.option(
    "--mode",
    type=click.Choice(["max", "min"]),
    default=None,
    help="With --until-decided: which direction of --metric is better (default: min for a metric whose "
    "name says it is lowered, such as loss, nll or error; else max).",
)
@click.option(
    "--at",
    default=None,
    metavar="final|last:K",
    help="With --until-decided: the value compared, the final one (default) or the mean of the last K.",
)
@click.option(
    "--seeds-per-round",
    type=click.IntRange(min=1),
    default=None,
    help="With --until-decided: seeds added per group each round (default 2; the first round runs 2 "
    "or more).",
)
@click.option(
    "--max-seeds",
    type=click.IntRange(min=2),
    default=None,
    help="With --until-decided: the most seeds per group (default: every seed the spec renders).",
)
@click.option(
    "--spending",
    type=click.Choice(["obf", "pocock"]),
    default=None,
    help="With --until-decided: how alpha is spent over the rounds: obf (O'Brien-Fleming-type, the "
    "default: little early, most at the end) or pocock (Pocock-type: evenly).",
)
@limit_option
@trusting("sweep_dir")
def run(
    sweep_dir: Path,
    jobs: int | None,
    gpus: str | None,
    per_gpu: int | None,
    mps: bool,
    dry_run: bool,
    only: tuple[str, ...],
    rerun_failed: bool,
    executor: str | None,
    command: str | None,
    shell: bool,
    done_file: str | None,
    metric: str | None,
    wait: bool | None,
    stop_timeout: float | None,
    time_limit: float | None,
    until_decided: bool,
    compare: str | None,
    mode: str | None,
    at: str | None,
    seeds_per_round: int | None,
    max_seeds: int | None,
    spending: str | None,
) -> int:
    """Run every generated config of the sweep in DIR (the folder holding sweep.lock.json).

    Each run is its own process started from the current directory. Its run directory is the
    spec's `run_dir` template when it has one, else the config's output_dir; run.log and
    sweepgen_status.json are written there, next to the trainer's files.

    \b
    When is a run finished?
      bundled trainer (no --command): it wrote summary.json (last, atomically);
      any other trainer (--command): it left --done-file if one is given, else it exited 0.
    A done file is the proof: a non-zero exit after it (a failed teardown) is said in the reason.
    A run stopped by Ctrl-C, `sweepgen cancel` or Slurm is cancelled even if it exits 0, unless
    it left its done file.

    Finished runs are skipped; failed or cancelled ones only run again with --rerun-failed, in
    the same run directory, so a trainer that resumes from its own checkpoints resumes there.
    Runs another `sweepgen run` is running are waited for (--no-wait: exit 1 instead).
    The command line (--command, --shell, --done-file, --executor and its options) is recorded in
    DIR/.sweepgen-run.json: a later `run` of the sweep without them uses it again.
    `sweepgen status`, `cancel` and `report` work the same for every trainer, locally and on Slurm
    (--executor slurm).
    """
    _quick_exit()
    # sweepgen.run loads when the command runs, not for --help
    from sweepgen.cli._run_display import RichDisplay, print_decided, print_result, print_search
    from sweepgen.run.core.sweepfile.sweep_state import RunOptions
    from sweepgen.run.sweep.grid import RunRequest, RunResult
    from sweepgen.run.sweep.start import SearchResult
    from sweepgen.run.sweep.start import run as run_any

    options = RunOptions(
        command=command,
        shell=True if shell else None,
        done_file=done_file,
        executor=executor,
        jobs=jobs,
        gpus=gpus,
        per_gpu=per_gpu,
        mps=True if mps else None,
        stop_timeout=stop_timeout,
        time_limit=time_limit,
    )
    request = RunRequest(sweep_dir, options, only, rerun_failed, dry_run, wait, started_s=_started_s())
    rule = _rule(until_decided, compare, metric, at, mode, seeds_per_round, max_seeds, spending)
    with _output_guard(dry_run, sweep_dir):
        result = run_any(request, RichDisplay(metric), rule)
        if isinstance(result, SearchResult):
            print_search(result, sweep_dir)
        elif isinstance(result, RunResult):
            print_result(result, sweep_dir, metric)
        else:
            print_decided(result, sweep_dir, metric)
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()  # inside the guard: a last buffered line meets the closed pipe here
    return result.code


def _started_s() -> float | None:
    """When this `run` started, on the boot clock: the process's start where the process is the
    `sweepgen` program (its imports are part of its start: a `cancel` meanwhile drops what it
    queues), else now (called in a process that was started for something else, e.g. a test's
    CliRunner: a `cancel` made earlier in it must not hold this `run`)."""
    from sweepgen.run.core import boot_clock

    program = Path(sys.argv[0] if sys.argv else "")
    if program.name == "sweepgen" or program.parts[-2:] == ("sweepgen", "__main__.py"):
        return boot_clock.process_start_s()
    return boot_clock.now_s()


_exit_registered: list[bool] = []  # registered once per process (CliRunner tests run many)


def _quick_exit() -> None:
    """At the interpreter's exit, once everything has run and been printed: freeze the objects
    loaded (optuna, pydantic, numpy) out of the garbage collection Python makes at exit, which walks
    every one of them (0.1 s on an idle core, over a second on a loaded machine: the end of every
    `sweepgen run`). Objects are still released as their modules are torn down."""
    if not _exit_registered:
        atexit.register(gc.freeze)
        _exit_registered.append(True)


def _rule(
    until_decided: bool,
    compare: str | None,
    metric: str | None,
    at: str | None,
    mode: str | None,
    per_round: int | None,
    max_seeds: int | None,
    spending: str | None,
) -> Rule | None:
    """--until-decided's rule; its options without it are a usage error (--metric alone only shows).
    The rule's module (the report's statistics) loads only with --until-decided: not at every start."""
    if not until_decided:
        if any(v is not None for v in (compare, at, mode, per_round, max_seeds, spending)):
            raise click.UsageError(
                "--compare, --mode, --at, --seeds-per-round, --max-seeds and --spending belong to "
                "--until-decided"
            )
        return None
    from sweepgen.run.report.stats.sequential_record import Rule

    return Rule(compare, metric, at, mode, per_round, max_seeds, spending)


def _output_guard(dry_run: bool, sweep_dir: Path) -> contextlib.AbstractContextManager[object]:
    if dry_run:  # a listing: cut short by its reader, it is exit 2 like every other command's output
        return contextlib.nullcontext()
    from sweepgen.cli._pipe import stdout_may_close

    # `run DIR | head`: the reader going away must not stop the experiment (cli/_pipe.py)
    return stdout_may_close(
        "sweepgen: standard output was closed by the program reading it (e.g. `| head`); the "
        f"sweep goes on without printing: follow it with `sweepgen status {sweep_dir}`"
    )
