"""Adaptive search (issue 23): sampler/pruner efficiency, controller overhead, and a side-by-side with
Hydra's Optuna sweeper.

1. ``--part sim``: random vs tpe vs tpe+asha on a known objective, ``--seeds`` search seeds each, in
   a discrete-event simulation of ``--parallel`` slots with no batch barrier (a slot is refilled the
   moment its trial ends or is pruned), using sweepgen's own sampler and pruner construction
   (sweepgen.run.search_study). Trials have uneven lengths (20-100 steps, drawn per trial). Reports
   the median regret of the best trial after n, the total training steps and the slot utilisation
   (busy slot-steps / available slot-steps). The same trials in Hydra's batch-synchronous pattern
   (``n_jobs`` asked, all waited for) give that pattern's utilisation.
2. ``--part overhead``: the controller's own cost per trial at n = ``--overhead-n``: ask, render the
   trial through the compile pipeline, write its file and lock entry, tell; journal storage on disk.
3. ``--part real``: real processes, the same small search (fast fake trainer, sleep per step) through
   `sweepgen run` and through Hydra's Optuna sweeper with the joblib launcher (``--hydra-python``,
   a venv with hydra-core, hydra-optuna-sweeper and hydra-joblib-launcher): wall time and utilisation
   (sum of the trials' training seconds / (parallel x wall)).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from sweepgen.compile.search_block import SearchBlock  # noqa: E402
from sweepgen.run import search_study  # noqa: E402

BEST = (0.3, 0.7)


def objective(x: float, y: float) -> float:
    return 1.0 - (x - BEST[0]) ** 2 - (y - BEST[1]) ** 2


def block(sampler: str, prune: bool, n: int, parallel: int, seed: int) -> SearchBlock:
    return SearchBlock.model_validate(
        {
            "n": n,
            "parallel": parallel,
            "seed": seed,
            "sampler": sampler,
            "metric": "score",
            "axes": {"x": {"uniform": [0.0, 1.0]}, "y": {"uniform": [0.0, 1.0]}},
            **({"prune": {"method": "asha", "min_steps": 10, "reduction": 3}} if prune else {}),
        }
    )


def simulate(sampler: str, prune: bool, n: int, parallel: int, seed: int, noise: float) -> dict:
    """One search in virtual time (one step = one time unit per slot)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    b = block(sampler, prune, n, parallel, seed)
    study = optuna.create_study(direction="maximize", pruner=search_study.pruner(b))
    dists = search_study.distributions(b)
    lengths = random.Random(seed + 1000)
    rng = random.Random(seed + 2000)
    running: list[dict] = []
    asked = steps_used = busy = 0
    now = 0
    lens = []
    while asked < n or running:
        while len(running) < parallel and asked < n:
            study.sampler = search_study.sampler(b, salt=asked)
            trial = study.ask(dists)
            length = lengths.randint(20, 100)
            lens.append(length)
            running.append({"trial": trial, "step": 0, "length": length})
            asked += 1
        now += 1
        for r in list(running):
            r["step"] += 1
            steps_used += 1
            busy += 1
            t = r["trial"]
            f = objective(t.params["x"], t.params["y"])
            value = f * (1 - math.exp(-r["step"] / 15)) + rng.gauss(0, noise)
            t.report(value, r["step"])
            if r["step"] == r["length"]:
                study.tell(t, value)
                running.remove(r)
            elif prune and t.should_prune():
                study.tell(t, state=optuna.trial.TrialState.PRUNED)
                running.remove(r)
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    best = max(complete, key=lambda t: t.value)
    regret = 1.0 - objective(best.params["x"], best.params["y"])
    # the same trial lengths run batch-synchronously (Hydra's sweeper: ask n_jobs, wait for all)
    batches = [lens[i : i + parallel] for i in range(0, len(lens), parallel)]
    barrier_util = sum(lens) / (parallel * sum(max(bt) for bt in batches))
    return {
        "regret": regret,
        "steps": steps_used,
        "util": busy / (parallel * now),
        "barrier_util": barrier_util,
    }


def part_sim(args) -> None:
    print(f"== sim: n={args.n}, parallel={args.parallel}, {args.seeds} seeds, noise {args.noise}")
    print(
        f"{'search':>16} {'median regret':>14} {'median steps':>13} {'median util':>12} {'time/search':>12}"
    )
    rows = [
        ("random", False, "random", args.n),
        ("tpe", False, "tpe", args.n),
        ("tpe", True, "tpe+asha", args.n),
        # the same step budget spent on more trials: what pruning buys
        ("tpe", True, f"tpe+asha n={2 * args.n}", 2 * args.n),
    ]
    for sampler, prune, label, n in rows:
        t0 = time.perf_counter()
        runs = [simulate(sampler, prune, n, args.parallel, s, args.noise) for s in range(args.seeds)]
        took = (time.perf_counter() - t0) / args.seeds
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{label:>16} {med['regret']:14.4f} {med['steps']:13.0f} {med['util']:12.3f} {took:11.2f}s")
        if label == "tpe":
            barrier = med["barrier_util"]
    print(
        f"batch-synchronous (Hydra sweeper pattern) utilisation, same {args.n} trial lengths: {barrier:.3f}"
    )


def part_overhead(args) -> None:
    """The real controller (sweepgen.run.search.SearchController: study reads, take-overs, asks,
    renders, lock writes, metric reads, tells), with an executor whose runs end at once."""
    from search_support import write_search_project

    from sweepgen.compile.spec import load_spec
    from sweepgen.run.base import Executor, ExecutorOptions, RunState, RunStatus
    from sweepgen.run.search import SearchController
    from sweepgen.run.search_trials import TrialRenderer
    from sweepgen.run.tasks import read_lock

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


def part_real(args) -> None:
    from search_support import write_search_project

    n, parallel, step_s = args.real_n, args.parallel, args.step_s
    root = Path(tempfile.mkdtemp(prefix="bench_search_real_"))
    # sweepgen: the fake trainer's length is drawn from the same range per trial
    base = {"x": 0.5, "y": 0.5, "steps": 0, "step_s": step_s, "seed": 0, "noise": 0.0, "output_dir": None}
    spec = write_search_project(
        root,
        {"n": n, "parallel": parallel},
        base=base,
        derived={
            "output_dir": "runs/{{ sweep.name }}/{{ variant.name }}",
            "steps": "{{ (10 + 30 * ((x * 1000003) % 1)) | int }}",
        },
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec)], cwd=root, env=env, check=True)
    from search_support import COMMAND

    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sweepgen",
            "run",
            "generated/fake_search",
            "--command",
            COMMAND,
            "--done-file",
            "summary.json",
        ],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    steps = sum(json.loads(p.read_text())["steps"] for p in root.glob("runs/fake_search/*/summary.json"))
    print(
        f"real sweepgen: n={n} parallel={parallel}: wall {wall:.1f} s, training {steps * step_s:.1f} s, "
        f"utilisation {steps * step_s / (parallel * wall):.3f}"
    )
    shutil.rmtree(root)
    if not args.hydra_python:
        print("real hydra: skipped (no --hydra-python)")
        return
    hroot = Path(tempfile.mkdtemp(prefix="bench_search_hydra_"))
    (hroot / "task.py").write_text(HYDRA_TASK)
    (hroot / "config.yaml").write_text(
        HYDRA_CONFIG.format(steps_min=10, steps_max=40, step_s=step_s, n=n, parallel=parallel)
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
    parser.add_argument("--part", choices=("sim", "overhead", "real", "all"), default="all")
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--overhead-n", type=int, default=1000)
    parser.add_argument("--samplers", default="random,tpe", help="samplers of --part overhead")
    parser.add_argument("--real-n", type=int, default=12)
    parser.add_argument("--step-s", type=float, default=0.05)
    parser.add_argument("--hydra-python", default=None)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.part in ("sim", "all"):
        part_sim(args)
    if args.part in ("overhead", "all"):
        part_overhead(args)
    if args.part in ("real", "all"):
        part_real(args)


if __name__ == "__main__":
    main()
