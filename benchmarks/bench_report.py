"""Benchmark: `sweepgen report` on a sweep of N finished runs, given the runs folder (each run found
through its status file and the lock it points to) and given the generated sweep folder.

The sweep is written by hand (no training): a lock in the version-1 layout every sweepgen reads,
whose entries carry their run dir, one 150-leaf YAML config per run, and per run a status file,
summary.json and a 20-row metrics.jsonl. Each command runs as its own process
(``python -m sweepgen report DIR --no-plot --format csv``); wall time and peak RSS from os.wait4.

``--tree PATH`` runs another checkout's sweepgen on the same folders (e.g. the commit before the
typed lock, to compare): it is put first on PYTHONPATH.

``--search 100,1000`` adds a search sweep of that many trials (issue 23): made by sweepgen's own
search controller (asks, renders through the pipeline, lock entries, tells into the journal study)
with an executor whose runs end at once, each with a 20-step metrics.jsonl and its status file, one
trial in three stopped as pruned at step 5. Then ``report generated/fake_search --html --no-plot``
is timed as a process (the page with its best-so-far curves, trials table and best diff; plot extra).

``--best-groups 10,50,200`` times, in this process, the best mean's test (winner.sentence: the best
group against each other one, Holm), the report's only part whose cost grows with the groups' count
times a calibration each: at each count, groups alike (Holm stops at its first step) and spread 0.3
sd apart (most comparisons rejected), the test as the report runs it (verdicts only) beside the full
comparison it ran before (every calibrated p, and every Holm step's interval at its own level).

Usage (from the repo root)::

    python benchmarks/bench_report.py --runs 100,1000 --repeat 3
    python benchmarks/bench_report.py --runs 0 --search 100,1000 --repeat 3
    python benchmarks/bench_report.py --runs 0 --best-groups 10,50,200
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def config_of(name: str, seed: int) -> dict[str, object]:
    sections: dict[str, object] = {
        f"section{i}": {f"key{j}": j * 0.5 if j % 2 else f"value{j}" for j in range(15)} for i in range(10)
    }
    return {"run_name": name, "output_dir": f"runs/bench/{name}", "seed": seed, **sections}


def write_sweep(root: Path, n: int) -> None:
    import yaml  # PyYAML: the configs are plain data, any YAML writer will do

    folder = root / "generated" / "bench"
    folder.mkdir(parents=True)
    files = []
    for i in range(n):
        name = f"r{i:05d}"
        config = config_of(name, i)
        text = yaml.safe_dump(config, sort_keys=True)
        (folder / f"{name}.yaml").write_text(text)
        files.append(
            {
                "path": f"{name}.yaml",
                "variant": name,
                "run_name": name,
                "run_dir": config["output_dir"],
                "layers": {"seed": "grid"},
                "config": config,
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
            }
        )
        write_run(root, name, i, f"generated/bench/{name}.yaml", fingerprint_of(text, config))
    lock = {
        "lock_version": 1,
        "sweepgen_version": "bench",
        "sweep": "bench",
        "spec": "specs/bench.yaml",
        "spec_sha256": "",
        "templates": {},
        "varying": ["seed"],
        "files": files,
    }
    (folder / "sweep.lock.json").write_text(json.dumps(lock, sort_keys=True) + "\n")


def fingerprint_of(text: str, config: dict[str, object]) -> str:
    """What `run` records as the config's fingerprint (tasks.config_fingerprint for a YAML config
    without a data file): the parsed content's sha256, so the report finds no stale run."""
    encoded = json.dumps(config, sort_keys=True, default=str).encode()
    return "yaml:" + hashlib.sha256(encoded).hexdigest()


def write_run(root: Path, name: str, i: int, config_path: str, fingerprint: str) -> None:
    run_dir = root / "runs" / "bench" / name
    run_dir.mkdir(parents=True)
    rewards = [round(0.01 * step + 0.001 * i, 6) for step in range(1, 21)]
    (run_dir / "metrics.jsonl").write_text(
        "".join(json.dumps({"step": s + 1, "reward_mean": r}) + "\n" for s, r in enumerate(rewards))
    )
    (run_dir / "summary.json").write_text(
        json.dumps(
            {"final_reward": rewards[-1], "best_reward": max(rewards), "steps": 20, "wall_time_s": 1.0}
        )
    )
    status = {
        "state": "finished",
        "executor": "local",
        "exit_code": 0,
        "config": config_path,
        "sweep_dir": "generated/bench",
        "config_fingerprint": fingerprint,
        "version": 1,
    }
    (run_dir / "sweepgen_status.json").write_text(json.dumps(status))


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024


def _instant_trial(task):
    """One trial's run, ended at once: its metrics written, one in three pruned at step 5."""
    from sweepgen.run.core.base import PRUNED_REASON, RunState, RunStatus, write_status

    number = int(task.name[1:5])
    score = 1.0 - (task.config["x"] - 0.3) ** 2 - (task.config["y"] - 0.7) ** 2
    last = 6 if number % 3 == 2 else 20  # one in three pruned at step 5
    task.run_dir.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"step": s, "score": score * s / 20}) for s in range(1, last + 1)]
    (task.run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    if last == 20:
        (task.run_dir / "summary.json").write_text("{}")
        status = RunStatus(RunState.FINISHED, "local", exit_code=0, done_file="summary.json")
    else:
        status = RunStatus(RunState.CANCELLED, "local", reason=f"{PRUNED_REASON} 5 (asha)")
    write_status(task.run_dir, status)
    return status


def write_search_sweep(root: Path, n: int) -> None:
    """A finished search of ``n`` trials through the real controller; runs end at once."""
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    from search_support import write_search_project

    from sweepgen.compile.spec.model import load_spec
    from sweepgen.run.core.base import Executor, ExecutorOptions, RunStatus
    from sweepgen.run.core.plan.tasks import read_lock
    from sweepgen.run.search.controller import SearchController
    from sweepgen.run.search.trials import TrialRenderer

    class Instant(Executor):
        name = "local"

        def __init__(self, options: ExecutorOptions) -> None:
            super().__init__(options)
            self.status: dict[str, RunStatus] = {}

        def describe(self, tasks):
            return []

        def start(self, tasks, planned=None):
            for t in tasks:
                self.status[t.name] = _instant_trial(t)

        def poll(self):
            return dict(self.status)

        def done(self) -> bool:
            return True

        def cancel(self) -> None:
            pass

        @classmethod
        def is_alive(cls, status: RunStatus) -> bool:
            return False

    cwd = Path.cwd()
    os.chdir(root)
    try:
        spec_path = write_search_project(root, {"n": n, "sampler": "random", "parallel": 4})
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "sweepgen", "render", str(spec_path)], check=True, env=env)
        sweep_dir = Path("generated/fake_search")
        spec = load_spec(str(spec_path), "generated")
        renderer = TrialRenderer(sweep_dir, spec, command=("python", "{config}"), done_file="summary.json")
        options = ExecutorOptions(sweep_dir=sweep_dir, lock=read_lock(sweep_dir))
        controller = SearchController(sweep_dir, spec, lambda: Instant(options), renderer)
        while controller.step():
            pass
        controller.close()
    finally:
        os.chdir(cwd)


def search_part_s(sweep_dir: Path) -> float:
    """Seconds to build the page's search section in process: open the study, read the trials, the
    best-so-far curves, the best trial's diff (what a search adds to `report --html`)."""
    from sweepgen.compile.spec.variants import trials as search
    from sweepgen.run.report import search_section as report_search
    from sweepgen.run.search import view as search_view
    from sweepgen.run.search.trials import spec_of

    block = search.block(spec_of(sweep_dir))
    start = time.perf_counter()
    view = search_view.load(sweep_dir, block)
    steps = {r.name: 20 for r in view.rows}
    trials = report_search.trials_of(view, steps, block.repeats)
    best = view.best.name if view.best else None
    diff = search_view.best_diff(sweep_dir, view)
    report_search.section(trials, metric=block.metric, mode=block.mode, best=best, diff=diff)
    return time.perf_counter() - start


def bench_search(counts: str, repeat: int, env: dict[str, str]) -> None:
    print(f"{'trials':>6} {'report --html of a search':<26} {'wall s median (min-max)':<26} {'peak MiB':>8}")
    for n in (int(x) for x in counts.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            t0 = time.perf_counter()
            write_search_sweep(root, n)
            made = time.perf_counter() - t0
            part = search_part_s(root / "generated/fake_search")
            argv = [sys.executable, "-m", "sweepgen", "report", "generated/fake_search", "--html"]
            argv.append("--no-plot")
            results = [timed(argv, root, env) for _ in range(repeat)]
            walls = [w for w, _ in results]
            span = f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f})"
            size = (root / "runs/fake_search/report.html").stat().st_size / 2**20
            label = f"page {size:.1f} MiB"
            rss = max(m for _, m in results)
            print(
                f"{n:6} {label:<26} {span:<26} {rss:8.0f}   (search part in process {part:.3f} s; "
                f"sweep made in {made:.0f} s)"
            )


def bench_best(counts: str, seeds: int = 3, draws: int = 3) -> None:
    """The best group's test (``--best-groups``), in this process: CPU seconds per report, the
    median over ``draws`` fresh sets of groups (the machine is shared; each p's quantiles are cached
    by its value, so one set timed twice would time the cache), after one warm-up set."""
    import numpy as np

    rng = np.random.default_rng(7)
    _best_once(rng, 5, 0.0, seeds)  # the process's first calibrations and caches
    print(f"{'groups':>6} {'groups are':<12} {'verdicts only CPU s':>19} {'full comparison CPU s':>21}")
    for k in (int(x) for x in counts.split(",")):
        for label, step in (("alike", 0.0), ("0.3 sd apart", 0.3)):
            times = [_best_once(rng, k, step, seeds) for _ in range(draws)]
            quick, full = (statistics.median(t) for t in zip(*times))
            print(f"{k:6} {label:<12} {quick:19.3f} {full:21.3f}")


def _best_once(rng: object, k: int, step: float, seeds: int) -> tuple[float, float]:
    """One set of ``k`` groups ``step`` sd apart: CPU seconds of the best test as the report runs it
    (verdicts only), and of the full comparison."""
    from sweepgen.run.report.stats import verdicts as stats
    from sweepgen.run.report.stats import winner

    groups = [(f"g{i}", list(rng.normal(i * step, 1.0, seeds))) for i in range(k)]  # type: ignore[attr-defined]
    s = stats.compare(groups, baseline=None, mode="max", seeds_needed=False)
    best = max(s.groups, key=lambda g: g.mean).name
    ordered = [next(x for x in groups if x[0] == best), *(x for x in groups if x[0] != best)]
    t0 = time.process_time()
    winner.sentence(s, dict(groups))
    quick = time.process_time() - t0
    t0 = time.process_time()
    stats.compare(ordered, baseline=best, mode="max", seeds_needed=False)
    return quick, time.process_time() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="100,1000")
    parser.add_argument("--search", default="", help="trial counts of a search sweep, e.g. 100,1000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--best-groups", default="", help="group counts for the best test, e.g. 10,50")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose sweepgen runs")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": f"{args.tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    print(f"python {sys.version.split()[0]}, tree {args.tree}, load average {os.getloadavg()[0]:.2f}")
    if args.runs != "0":
        print(f"{'runs':>6} {'DIR':<16} {'wall s median (min-max)':<26} {'peak MiB':>8}")
    for n in (int(x) for x in args.runs.split(",") if int(x) > 0):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_sweep(root, n)
            for label, target in (("runs folder", "runs/bench"), ("sweep folder", "generated/bench")):
                argv = [sys.executable, "-m", "sweepgen", "report", target, "--no-plot", "--format", "csv"]
                results = [timed(argv, root, env) for _ in range(args.repeat)]
                walls = [w for w, _ in results]
                rss = max(m for _, m in results)
                span = f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f})"
                print(f"{n:6} {label:<16} {span:<26} {rss:8.0f}")
    if args.search:
        bench_search(args.search, args.repeat, env)
    if args.best_groups:
        bench_best(args.best_groups)


if __name__ == "__main__":
    main()
