"""Adaptive search (issue 23): sampler/pruner efficiency, controller overhead, and a side-by-side with
Hydra's Optuna sweeper.

1. ``--part sim`` (benchmarks/search_sim.py): random vs tpe vs tpe + pruning on a known objective,
   ``--seeds`` search seeds each, in a discrete-event simulation of ``--parallel`` slots with no
   batch barrier (a slot is refilled the moment its trial ends or is pruned), using sweepgen's own
   sampler and pruner construction (sweepgen.run.search.study). Trials have uneven lengths (20-100
   steps, drawn per trial). At equal n: the median regret of the best trial after n, the total
   training steps and the slot utilisation (busy slot-steps / available slot-steps); the same trials
   in Hydra's batch-synchronous pattern (``n_jobs`` asked, all waited for) give that pattern's
   utilisation. At equal steps: the pruned searches run ``--pruned-n`` trials, and the median over
   the seeds of the best-so-far regret is read against the steps used so far: at shares of tpe's
   steps, and the step count where it first reaches tpe's final median regret (the issue's target:
   at most half of tpe's steps). ``--subsets`` (with more seeds) says how often 10 seeds meet it.
2. ``--part overhead``: the controller's own cost per trial at n = ``--overhead-n``: ask, render the
   trial through the compile pipeline, write its file and lock entry, tell; journal storage on disk.
3. ``--part real``: real processes, a search of heterogeneous trials (fast fake trainer, 1-8 s each)
   through `sweepgen run`, ``--parallel`` at once: utilisation (the trials' training seconds /
   (parallel x wall)) against the ideal no-barrier schedule of the same trials (target: within 0.10);
   with ``--hydra-python`` (a venv with hydra-core, hydra-optuna-sweeper, hydra-joblib-launcher) the
   same through Hydra's Optuna sweeper with the joblib launcher.
4. ``--part trivial``: wall per trial at parallel 1 with a trivial trainer (target: under 0.15 s).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from search_sim import (  # noqa: E402
    CURVES,
    Method,
    SearchRun,
    first_reaching,
    first_staying,
    median_regret_at,
    objective,
    simulate,
    subset_shares,
)

SUBSET_SIZE = 10  # the search seeds per method


def part_sim(args) -> None:
    """Two comparisons. At equal n (the issue's first table): each method's median regret after n
    trials, its steps, its utilisation. At equal steps (the target: "asha reaching the same median
    regret as un-pruned tpe with at most half the steps"): each pruned method runs more trials
    (``--pruned-n``) and its best-so-far regret is read as a function of the steps used so far; the
    first step count at which its median over the seeds reaches tpe's final median regret is the
    figure, as a share of tpe's median steps (and the step count from which it stays there)."""
    print(
        f"== sim: n={args.n}, parallel={args.parallel}, {args.seeds} seeds, noise {args.noise}, "
        f"curve {args.curve}"
    )
    pruned_n = args.pruned_n or 3 * args.n
    equal_n = [Method("random", None, args.n), Method("tpe", None, args.n)]
    equal_n += [Method("tpe", p, args.n) for p in args.prune]
    longer = [Method("tpe", p, pruned_n, args.tpe_startup, args.pruned_as_failed) for p in args.prune]
    if args.tpe_startup is not None:
        equal_n.append(Method("tpe", None, args.n, args.tpe_startup))
    runs: dict[str, list[SearchRun]] = {}
    print(
        f"{'search':>32} {'median regret':>14} {'(noiseless pick)':>16} {'median steps':>13} "
        f"{'median util':>12} {'time/search':>12}"
    )
    for method in equal_n + longer:
        t0 = time.perf_counter()
        runs[method.label] = [
            simulate(method, args.parallel, s, args.noise, args.curve) for s in range(args.seeds)
        ]
        took = (time.perf_counter() - t0) / args.seeds
        rs = runs[method.label]
        print(
            f"{method.label:>32} {statistics.median(r.regret for r in rs):14.4f} "
            f"{statistics.median(r.oracle for r in rs):16.4f} "
            f"{statistics.median(r.steps for r in rs):13.0f} {statistics.median(r.util for r in rs):12.3f} "
            f"{took:11.2f}s"
        )
    barrier_tpe = runs[Method("tpe", None, args.n).label]
    barrier = statistics.median(r.barrier_util for r in barrier_tpe)
    # the reference of the target: un-pruned tpe with the same sampler settings as the pruned rows
    tpe = runs[Method("tpe", None, args.n, args.tpe_startup).label]
    print(
        f"batch-synchronous (Hydra sweeper pattern) utilisation, same {args.n} trial lengths: {barrier:.3f}"
    )
    print_equal_steps(args, runs, tpe, longer)


def _steps(steps: int | None, budget: float) -> str:
    return f"{steps} ({steps / budget:.2f})" if steps is not None else "never"


def print_equal_steps(
    args, runs: dict[str, list[SearchRun]], tpe: list[SearchRun], longer: list[Method]
) -> None:
    target = statistics.median(r.regret for r in tpe)
    budget = statistics.median(r.steps for r in tpe)
    print(
        f"== equal steps: median best-so-far regret at a share of tpe's {budget:.0f} median steps; "
        f"the steps (share) where it first reaches tpe's final median regret {target:.4f}, and from which "
        "it stays there to the end of the runs (target: at most 0.50)"
    )
    shares = (0.25, 0.5, 0.75, 1.0)
    head = " ".join(f"{f'@{s:.2f}':>7}" for s in shares)
    print(f"{'search':>32} {head} {'reaches at':>15} {'stays from':>15}")
    for label, rs in runs.items():
        at = " ".join(f"{median_regret_at(rs, s * budget):7.4f}" for s in shares)
        reach = first_reaching(rs, target)
        stay = first_staying(rs, target)
        print(f"{label:>32} {at} {_steps(reach, budget):>15} {_steps(stay, budget):>15}")
    if args.subsets and args.seeds > SUBSET_SIZE:
        print(
            f"== {args.subsets} random subsets of {SUBSET_SIZE} of the {args.seeds} seeds (paired): the "
            "share of subsets meeting the target, and the 10th-90th percentile of the reach share"
        )
        for method in longer:
            met, lo, hi = subset_shares(runs[method.label], tpe, SUBSET_SIZE, args.subsets, 0.5)
            print(f"{method.label:>32} met in {met:4.0%}, reach share {lo:.2f}-{hi:.2f}")


def _instant_executor():
    """An executor whose runs end at once (its class, made once sweepgen is importable)."""
    from sweepgen.run.core.base import Executor, ExecutorOptions, RunState, RunStatus

    class InstantExecutor(Executor):
        """Each run 'trains' at once: one metrics line and its done file."""

        name = "instant"

        def __init__(self, options: ExecutorOptions) -> None:
            super().__init__(options)
            self._status: dict[str, RunStatus] = {}

        def describe(self, tasks):
            return []

        def start(self, tasks, planned=None):
            for t in tasks:
                t.run_dir.mkdir(parents=True, exist_ok=True)
                score = objective(t.config["x"], t.config["y"])
                (t.run_dir / "metrics.jsonl").write_text(json.dumps({"step": 1, "score": score}) + "\n")
                (t.run_dir / "summary.json").write_text("{}")
                self._status[t.name] = RunStatus(RunState.FINISHED, "local", exit_code=0)

        def poll(self):
            return dict(self._status)

        def done(self):
            return True

        def cancel(self):
            pass

        @classmethod
        def is_alive(cls, status):
            return False

    return InstantExecutor


def part_overhead(args) -> None:
    """The real controller (sweepgen.run.search.controller.SearchController: study reads, take-overs, asks,
    renders, lock writes, metric reads, tells), with an executor whose runs end at once."""
    from search_support import write_search_project

    from sweepgen.compile.spec.model import load_spec
    from sweepgen.run.core.base import ExecutorOptions
    from sweepgen.run.core.plan.tasks import read_lock
    from sweepgen.run.search.controller import SearchController
    from sweepgen.run.search.trials import TrialRenderer

    InstantExecutor = _instant_executor()

    for sampler in args.samplers.split(","):
        root = Path(tempfile.mkdtemp(prefix="bench_search_"))
        os.chdir(root)
        spec_path = write_search_project(root, {"n": args.overhead_n, "sampler": sampler, "parallel": 4})
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec_path)], check=True, env=env)
        sweep_dir = Path("generated/fake_search")
        spec = load_spec(str(spec_path), "generated")
        renderer = TrialRenderer(sweep_dir, spec, command=("python", "{config}"), done_file="summary.json")
        options = ExecutorOptions(sweep_dir=sweep_dir, lock=read_lock(sweep_dir))
        controller = SearchController(sweep_dir, spec, lambda o=options: InstantExecutor(o), renderer)
        marks: dict[int, float] = {}
        t_all, cpu_all = time.perf_counter(), time.process_time()
        while controller.step():
            marks.setdefault(controller.finished // 100 * 100, time.perf_counter())
        total, cpu = time.perf_counter() - t_all, time.process_time() - cpu_all
        controller.close()
        n = args.overhead_n
        last = (total + t_all - marks.get(n - 100, t_all)) / 100 if n >= 200 else total / n
        done = sum(t.state.name == "COMPLETE" for t in controller.study.get_trials())
        print(
            f"overhead {sampler}: n={n} ({done} complete): mean {1000 * total / n:.1f} ms/trial, "
            f"last 100 trials {1000 * last:.1f} ms/trial; CPU {1000 * cpu / n:.1f} ms/trial "
            "(the rest is waiting: for a core, and for the disk, mostly the journal's fsync)"
        )
        os.chdir(REPO)
        shutil.rmtree(root)


HYDRA_TASK = """
import json, os, time, math, random
import hydra
from omegaconf import DictConfig

@hydra.main(version_base=None, config_path=".", config_name="config")
def main(cfg: DictConfig) -> float:
    steps = int(cfg.steps_min + (cfg.steps_max - cfg.steps_min) * random.Random(int(cfg.x * 1e6)).random())
    for s in range(steps):
        time.sleep(cfg.step_s)
    with open(os.path.join(os.environ["BENCH_OUT"], f"{os.getpid()}-{time.time_ns()}.json"), "w") as fh:
        json.dump({"steps": steps}, fh)
    return 1.0 - (cfg.x - 0.3) ** 2 - (cfg.y - 0.7) ** 2

if __name__ == "__main__":
    main()
"""

HYDRA_CONFIG = """
defaults:
  - override hydra/sweeper: optuna
  - override hydra/launcher: joblib
x: 0.5
y: 0.5
steps_min: {steps_min}
steps_max: {steps_max}
step_s: {step_s}
hydra:
  sweeper:
    sampler: {{_target_: optuna.samplers.TPESampler, seed: 0}}
    direction: maximize
    n_trials: {n}
    n_jobs: {parallel}
    params:
      x: interval(0.0, 1.0)
      y: interval(0.0, 1.0)
  launcher:
    n_jobs: {parallel}
"""


def ideal_makespan(durations: list[float], slots: int) -> float:
    """The no-barrier schedule with no overhead at all: each trial, in the order it was asked, starts
    the moment a slot is free (what a perfect controller would do with these trial lengths)."""
    free = [0.0] * slots
    for d in durations:
        start = min(free)
        free[free.index(start)] = start + d
    return max(free)


def _run_search(root: Path, *argv: str) -> tuple[float, float, float]:
    """The whole command's wall, and its start and end on the wall clock (the study's own times are
    wall-clock times: its start-up is the first ask - the start, its wind-down the end - the last tell)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    began = time.time()
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sweepgen", "run", "generated/fake_search", *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    ended = time.time()
    if done.returncode != 0:
        raise SystemExit(f"sweepgen run failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return wall, began, ended


def _ends(trials: list, began: float, ended: float) -> str:
    first_ask = min(t.datetime_start for t in trials).timestamp()
    last_tell = max(t.datetime_complete for t in trials).timestamp()
    return f"start-up to the first ask {first_ask - began:.2f} s, last tell to exit {ended - last_tell:.2f} s"


def _render(root: Path, spec: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec)], cwd=root, env=env, check=True)


def _study_trials(root: Path) -> list:
    import optuna
    from optuna.storages.journal import JournalFileBackend

    path = root / "generated" / "fake_search" / ".search" / "study.journal"
    storage = optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    return optuna.load_study(study_name="sweepgen", storage=storage).get_trials()


def part_real(args) -> None:
    """Utilisation on real processes: ``sweepgen run`` on the fake trainer (a Python process per
    trial, under its supervisor), ``--parallel`` slots, trials of ``--step-s`` x 10-80 steps
    (1-8 s at 0.1 s a step, drawn from the trial's x). Utilisation = the trials' training seconds
    (steps x step_s) / (parallel x wall), the wall measured from the first trial asked to the last
    told (the study's own times), and for the whole `sweepgen run` command (its start-up included);
    the ideal is the same trials' no-barrier schedule without any overhead (``ideal_makespan``)."""
    from search_support import COMMAND, write_search_project

    n, parallel, step_s = args.real_n, args.parallel, args.step_s
    for rep in range(args.repeat):
        root = Path(tempfile.mkdtemp(prefix="bench_search_real_"))
        base = {"x": 0.5, "y": 0.5, "steps": 0, "step_s": step_s, "seed": 0, "noise": 0.0, "output_dir": None}
        spec = write_search_project(
            root,
            {"n": n, "parallel": parallel, "sampler": "random", "seed": rep},
            base=base,
            derived={
                "output_dir": "runs/{{ sweep.name }}/{{ variant.name }}",
                "steps": "{{ (10 + 70 * ((x * 1000003) % 1)) | int }}",
            },
        )
        _render(root, spec)
        wall, t_began, t_ended = _run_search(root, "--command", COMMAND, "--done-file", "summary.json")
        trials = sorted(_study_trials(root), key=lambda t: t.number)
        durations, began, ended = [], [], []
        for t in trials:
            run_dir = root / "runs" / "fake_search" / f"t{t.number:04d}"
            summary = json.loads((run_dir / "summary.json").read_text())
            durations.append(summary["steps"] * step_s)
            began.append(summary["began"])
            ended.append(summary["ended"])
        # each trial after the first `parallel` starts because one ended: the k-th end frees the slot
        # of trial parallel + k; refill latency = that trial's trainer start (after its imports) - the
        # k-th end (tell, ask, render, lock, supervisor and trainer start-up: everything but training)
        refill = [b - e for b, e in zip(began[parallel:], sorted(ended))]
        busy = sum(durations)
        ideal = busy / (parallel * ideal_makespan(durations, parallel))
        util = busy / (parallel * wall)
        # the search itself: from the first trial asked to the last told (the command's own start-up,
        # Python and its imports before the first ask, is not scheduling)
        span = max(t.datetime_complete for t in trials) - min(t.datetime_start for t in trials)
        util_span = busy / (parallel * span.total_seconds())
        print(
            f"real sweepgen #{rep + 1}: n={n} parallel={parallel}, trials {min(durations):.1f}-"
            f"{max(durations):.1f} s, training {busy:.1f} s; ideal no-barrier utilisation {ideal:.3f}; "
            f"first ask to last tell {span.total_seconds():.1f} s: utilisation {util_span:.3f}, gap "
            f"{ideal - util_span:.3f}; whole `sweepgen run` {wall:.1f} s: utilisation {util:.3f}, gap "
            f"{ideal - util:.3f} (load {os.getloadavg()[0]:.1f})"
        )
        print(
            f"  refill latency (a trial's end to the next trial's trainer running): median "
            f"{statistics.median(refill):.2f} s, max {max(refill):.2f} s; {_ends(trials, t_began, t_ended)}"
        )
        shutil.rmtree(root)
    if args.hydra_python:
        part_hydra(args)


def part_trivial(args) -> None:
    """Wall per trial at parallel 1 with a trivial trainer (/bin/sh writing one metric line): the
    controller's whole loop per trial (ask, render, lock, start the supervisor and the trainer, wake
    on its exit, read the metric, tell). Per trial: the whole `sweepgen run` wall / n (its start-up
    included), and the median gap between consecutive trials' starts in the study (steady state)."""
    from search_support import write_search_project

    n = args.trivial_n
    for rep in range(args.repeat):
        root = Path(tempfile.mkdtemp(prefix="bench_search_trivial_"))
        spec = write_search_project(root, {"n": n, "parallel": 1, "sampler": "random", "seed": rep})
        _render(root, spec)
        command = ': {config}; printf \'{{"step": 1, "score": 0.5}}\\n\' > {run_dir}/metrics.jsonl'
        wall, t_began, t_ended = _run_search(
            root, "--command", command, "--shell", "--done-file", "metrics.jsonl"
        )
        trials = sorted(_study_trials(root), key=lambda t: t.number)
        assert all(t.state.name == "COMPLETE" for t in trials), [t.state.name for t in trials]
        starts = [t.datetime_start.timestamp() for t in trials]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        print(
            f"trivial trainer, parallel 1, n={n} #{rep + 1}: `sweepgen run` wall {wall:.2f} s = "
            f"{wall / n:.3f} s per trial; steady state (median start-to-start) "
            f"{statistics.median(gaps):.3f} s, 90th percentile {sorted(gaps)[int(0.9 * len(gaps))]:.3f} s "
            f"(load {os.getloadavg()[0]:.1f})"
        )
        print(f"  {_ends(trials, t_began, t_ended)}")
        shutil.rmtree(root)


def part_hydra(args) -> None:
    n, parallel, step_s = args.real_n, args.parallel, args.step_s
    hroot = Path(tempfile.mkdtemp(prefix="bench_search_hydra_"))
    (hroot / "task.py").write_text(HYDRA_TASK)
    (hroot / "config.yaml").write_text(
        HYDRA_CONFIG.format(steps_min=10, steps_max=80, step_s=step_s, n=n, parallel=parallel)
    )
    out = hroot / "out"
    out.mkdir()
    t0 = time.perf_counter()
    done = subprocess.run(
        [args.hydra_python, "task.py", "--multirun"],
        cwd=hroot,
        capture_output=True,
        text=True,
        env={**os.environ, "BENCH_OUT": str(out)},
    )
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        print("real hydra: failed:", done.stderr[-2000:])
        return
    steps = sum(json.loads(p.read_text())["steps"] for p in out.glob("*.json"))
    print(
        f"real hydra-optuna-sweeper (joblib, n_jobs={parallel}): n={n}: wall {wall:.1f} s, training "
        f"{steps * step_s:.1f} s, utilisation {steps * step_s / (parallel * wall):.3f}"
    )
    shutil.rmtree(hroot)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("sim", "overhead", "real", "trivial", "all"), default="all")
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument(
        "--prune",
        action="append",
        help="pruner of a tpe+pruning row, method:min_steps[:reduction] (repeatable; default asha:10:3)",
    )
    parser.add_argument("--pruned-n", type=int, default=None, help="trials of a pruned search (default 3 n)")
    parser.add_argument("--curve", choices=sorted(CURVES), default="saturating")
    parser.add_argument("--tpe-startup", type=int, default=None, help="TPE's n_startup_trials (default 10)")
    parser.add_argument("--pruned-as-failed", action="store_true", help="tell pruned trials as failed")
    parser.add_argument(
        "--subsets", type=int, default=0, help="with --seeds > 10: how often 10 seeds meet the target"
    )
    parser.add_argument("--overhead-n", type=int, default=1000)
    parser.add_argument("--samplers", default="random,tpe", help="samplers of --part overhead")
    parser.add_argument("--real-n", type=int, default=16)
    parser.add_argument("--step-s", type=float, default=0.1)
    parser.add_argument("--trivial-n", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=1, help="runs of --part real / trivial")
    parser.add_argument("--hydra-python", default=None)
    args = parser.parse_args()
    args.prune = args.prune or ["asha:10:3"]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.part in ("sim", "all"):
        part_sim(args)
    if args.part in ("overhead", "all"):
        part_overhead(args)
    if args.part in ("real", "all"):
        part_real(args)
    if args.part in ("trivial", "all"):
        part_trivial(args)


if __name__ == "__main__":
    main()
