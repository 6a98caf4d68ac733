"""Aggregate training throughput of a packed local sweep against one run alone.

For each packing level N it builds a sweep of N identical runs (different seeds) of the bundled
trainer, runs it with ``sweepgen run DIR --jobs N`` (plus ``--gpus G --per-gpu N`` on a GPU), and
reports:

* end-to-end aggregate steps/s: N × steps / wall time of the whole `sweepgen run` (what a user waits
  for: process start, model load and training included);
* training aggregate steps/s: N × steps / the span from the first run's first step to the last run's
  last step, taken from the runs' own metrics.jsonl (``elapsed_s`` and ``step_time``), so process
  start-up and model loading are left out;
* the speed-up of each against N = 1;
* where one step's time goes (the bundled trainer's ``time/*`` columns, step 1 left out as warm-up)
  and the completion lengths (mean, min, max, the fraction cut at ``max_completion_length``).

``--trainer trl,sweepgen`` runs every level with plain TRL's ``GRPOTrainer`` too
(``benchmarks/plain_trl.py``, through ``sweepgen run --command``, so both are scheduled, pinned and
packed the same way) on the very same configs, in the same invocation: the trainer's overhead side by
side on any machine. ``--grpo KEY=VALUE`` sets a ``grpo`` field of every run (e.g. the generation
options ``use_transformers_continuous_batching=true``, ``cache_implementation=static``).

Usage (from the repo root, with the train extra installed)::

    OMP_NUM_THREADS=1 python benchmarks/bench_packing.py --levels 1,2,4 --steps 30
    python benchmarks/make_gpu_models.py /tmp/models       # the two model shapes of the GPU issue
    python benchmarks/bench_packing.py --levels 1,4,12,20 --gpus 0 --model /tmp/models/simplestories \
        --batch 32 --generations 16 --completion-length 128 --bf16 [--mps]
    python benchmarks/bench_packing.py --levels 1,4 --gpus 0 --model /tmp/models/smollm135m \
        --batch 32 --generations 8 --completion-length 256 --bf16
    OMP_NUM_THREADS=1 python benchmarks/bench_packing.py --levels 1 --trainer trl,sweepgen --steps 20

The sweep is written with a lock exactly like `sweepgen render` writes one, into a temporary folder
that is removed afterwards (it holds only what this script generated).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml


def tiny_config(name: str, seed: int, args: argparse.Namespace) -> dict:
    config = {
        "run_name": name,
        "output_dir": f"runs/pack/{name}",
        "seed": seed,
        "reward": {"name": "happy_count", "params": {"cap": 4}},
        "grpo": {
            "learning_rate": 5.0e-3,
            "lr_scheduler_type": "constant",
            "num_generations": args.generations,
            "batch_size": args.batch,
            "max_steps": args.steps,
            "max_completion_length": args.completion_length,
            "beta": 0.0,
            **({"bf16": True} if args.bf16 else {}),
            **args.grpo,
        },
        "logging": {"save_steps": 100_000},
    }
    if args.model:
        config["model"] = {"path": args.model, **({"dtype": "bfloat16"} if args.bf16 else {})}
    return config


def write_sweep(root: Path, n: int, args: argparse.Namespace) -> Path:
    folder = root / "generated" / "pack"
    folder.mkdir(parents=True)
    files = []
    for seed in range(n):
        name = f"pack_s{seed}"
        config = tiny_config(name, seed, args)
        text = yaml.safe_dump(config, sort_keys=True)
        (folder / f"{name}.yaml").write_text(text)
        files.append(
            {
                "path": f"{name}.yaml",
                "variant": name,
                "run_name": name,
                "values": {"seed": seed},
                "layers": {"seed": "grid"},
                "config": config,
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
            }
        )
    lock = {
        "lock_version": 1,
        "sweepgen_version": "bench",
        "sweep": "pack",
        "spec": "bench",
        "spec_sha256": "",
        "templates": {},
        "varying": ["seed"],
        "files": files,
    }
    (folder / "sweep.lock.json").write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    return folder


def training_span(run_dirs: list[Path], per_run: list[list[dict[str, Any]]]) -> float:
    """Seconds from the earliest first-step start to the latest last-step end, on one clock: the
    mtime of a run's metrics.jsonl is the end of its last step (logging_steps is 1), and its summed
    ``step_time`` goes back to the start of its first step."""
    starts, ends = [], []
    for run_dir, rows in zip(run_dirs, per_run):
        end = (run_dir / "metrics.jsonl").stat().st_mtime  # written at the last step
        starts.append(end - sum(r["step_time"] for r in rows))
        ends.append(end)
    return max(ends) - min(starts)


PLAIN_TRL = Path(__file__).resolve().parent / "plain_trl.py"
TIME_KEYS = (
    "time/generation_s",
    "time/reward_s",
    "time/ref_logprobs_s",
    "time/scoring_other_s",
    "time/loss_forward_s",
    "time/backward_s",
    "time/optimizer_s",
    "time/logging_s",
    "time/step_s",
)


def run_folders(sweep_runs: Path) -> list[Path]:
    """The runs' own folders: the runs folder also holds sweepgen's dot-files beside them (the GPU
    share lock ``.sweepgen-gpus.lock`` once ``--gpus`` is given), which hold no metrics."""
    return sorted(d for d in sweep_runs.iterdir() if d.is_dir() and not d.name.startswith("."))


def read_rows(run_dirs: list[Path]) -> list[list[dict[str, Any]]]:
    return [[json.loads(line) for line in (d / "metrics.jsonl").read_text().splitlines()] for d in run_dirs]


def mean_of(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.fmean(values) if values else None


def step_profile(per_run: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Means over every run's steps after the first (the first pays for CUDA/kernel warm-up)."""
    later = [row for rows in per_run for row in rows[1:]] or [row for rows in per_run for row in rows]
    steps = [r["step_time"] for r in later if isinstance(r.get("step_time"), (int, float))]
    profile: dict[str, Any] = {
        "median_step_time_s": statistics.median(steps) if steps else None,
        "completion_mean": mean_of(later, "completion_length"),
        "completion_min": min((r["completions/min_length"] for r in later), default=None),
        "completion_max": max((r["completions/max_length"] for r in later), default=None),
        "truncated_fraction": mean_of(later, "completions/clipped_ratio"),
    }
    profile.update({key: mean_of(later, key) for key in TIME_KEYS})
    # steady throughput: each run's steps after its first over the time they took (elapsed_s is
    # written at each logged step), summed over the runs that train side by side
    rates = [
        (len(rows) - 1) / (rows[-1]["elapsed_s"] - rows[0]["elapsed_s"]) for rows in per_run if len(rows) > 1
    ]
    profile["steady_steps_per_s"] = sum(rates) if rates else None
    return profile


def sweep_command(n: int, trainer: str, args: argparse.Namespace) -> list[str]:
    cmd = [sys.executable, "-m", "sweepgen", "run", "generated/pack", "--jobs", str(n)]
    if trainer == "trl":
        cmd += ["--command", f"{sys.executable} {PLAIN_TRL} {{config}}"]
    if args.gpus:
        cmd += ["--gpus", args.gpus, "--per-gpu", str(-(-n // len(args.gpus.split(","))))]
        if args.mps:
            cmd.append("--mps")
    return cmd


def run_sweep(cmd: list[str], root: Path, cache: Path, timeout: float | None) -> tuple[int, str, float]:
    env = {
        **os.environ,
        "SWEEPGEN_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }
    t0 = time.perf_counter()
    # its own session, so a level past its deadline is stopped with every run it started
    proc = subprocess.Popen(
        cmd,
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        return 124, out, time.perf_counter() - t0
    return proc.returncode, out, time.perf_counter() - t0


def run_level(n: int, trainer: str, args: argparse.Namespace, cache: Path) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench_pack_{n}_"))
    try:
        write_sweep(root, n, args)
        rc, out, wall = run_sweep(sweep_command(n, trainer, args), root, cache, args.timeout)
        result: dict[str, Any] = {"trainer": trainer, "runs": n, "wall_s": wall, "exit": rc}
        if rc != 0:
            result["error"] = out[-4000:]
            print(f"level {n} ({trainer}) failed (exit {rc}):\n{out[-4000:]}", file=sys.stderr)
            return result
        run_dirs = run_folders(root / "runs" / "pack")
        per_run = read_rows(run_dirs)
        span = training_span(run_dirs, per_run)
        step_times = [r["step_time"] for rows in per_run for r in rows]
        result.update(
            e2e_steps_per_s=n * args.steps / wall,
            train_span_s=span,
            train_steps_per_s=n * args.steps / span,
            mean_step_time_s=sum(step_times) / len(step_times),
            **step_profile(per_run),
        )
        return result
    finally:
        shutil.rmtree(root)  # our own temporary sweep only


def build_tiny_model(cache: Path) -> None:
    """The built-in tiny model, built once, outside the timed runs."""
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from sweepgen_trainer.config import TinyModel; from sweepgen_trainer.models import "
            "build_tiny_model; build_tiny_model(TinyModel())",
        ],
        env={**os.environ, "SWEEPGEN_CACHE": str(cache)},
        check=True,
    )


def grpo_setting(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--grpo takes KEY=VALUE, not {text!r}")
    return key, yaml.safe_load(value)


def print_table(results: list[dict], args: argparse.Namespace, load_before: tuple) -> None:
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, gpus={args.gpus or 'none'}, "
        f"load average before/after {load_before[0]:.1f}/{os.getloadavg()[0]:.1f}"
    )
    print(
        f"config: steps={args.steps} batch={args.batch} generations={args.generations} "
        f"completion={args.completion_length} bf16={args.bf16} mps={args.mps} "
        f"model={args.model or 'builtin:tiny'} grpo={args.grpo}"
    )
    print(
        "| trainer | runs | wall s | end-to-end steps/s | × one run | training steps/s | × one run "
        "| median step s | completion mean (min-max) | truncated |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    base: dict[str, dict] = {}
    for r in results:
        if r["exit"] != 0:
            print(f"| {r['trainer']} | {r['runs']} | {r['wall_s']:.1f} | exit {r['exit']} | | | | | | |")
            continue
        b = base.setdefault(r["trainer"], r)
        e2e, train = r["e2e_steps_per_s"], r["train_steps_per_s"]
        e2e_x = e2e / b["e2e_steps_per_s"]
        print(
            f"| {r['trainer']} | {r['runs']} | {r['wall_s']:.1f} | {e2e:.2f} | {e2e_x:.2f} "
            f"| {train:.2f} | {train / b['train_steps_per_s']:.2f} | {fmt(r['median_step_time_s'])} "
            f"| {fmt(r['completion_mean'], 1)} ({r['completion_min']}-{r['completion_max']}) "
            f"| {fmt(r['truncated_fraction'], 2)} |"
        )
    timed = [r for r in results if r["exit"] == 0 and r.get("time/step_s") is not None]
    if timed:
        print("\nwhere a step goes (mean s per step after the first; sweepgen trainer's time/* columns)")
        print("| runs | " + " | ".join(k[5:-2] for k in TIME_KEYS) + " |")
        print("|---:|" + "---:|" * len(TIME_KEYS))
        for r in timed:
            print(f"| {r['runs']} | " + " | ".join(fmt(r[k]) for k in TIME_KEYS) + " |")


def fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="1,2,4", help="runs packed at once, comma-separated")
    parser.add_argument("--trainer", default="sweepgen", help="sweepgen, trl, or both: trl,sweepgen")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--model", default=None, help="model path (default: the built-in tiny model)")
    parser.add_argument("--gpus", default=None, help="CUDA ids to pack onto (default: CPU)")
    parser.add_argument("--mps", action="store_true", help="run the packed runs under NVIDIA MPS")
    parser.add_argument("--bf16", action="store_true", help="bf16 weights and training (GPU only)")
    parser.add_argument("--completion-length", type=int, default=16, help="max_completion_length")
    parser.add_argument("--grpo", type=grpo_setting, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per level, then stopped")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    args.grpo = dict(args.grpo)
    trainers = args.trainer.split(",")
    if not set(trainers) <= {"sweepgen", "trl"}:
        parser.error(f"--trainer: sweepgen, trl or trl,sweepgen, not {args.trainer!r}")
    load_before = os.getloadavg()  # other work on the machine skews these numbers: say how much
    cache = Path(tempfile.mkdtemp(prefix="bench_pack_cache_"))
    try:
        if not args.model:
            build_tiny_model(cache)
        results = [
            run_level(int(n), trainer, args, cache) for n in args.levels.split(",") for trainer in trainers
        ]
    finally:
        shutil.rmtree(cache)
    print_table(results, args, load_before)
    if args.json:
        meta = {k: v for k, v in vars(args).items() if k != "json"}
        meta.update(machine=platform.machine(), cpus=os.cpu_count(), load_before=load_before[0])
        args.json.write_text(json.dumps({"config": meta, "results": results}, indent=2, default=str) + "\n")
    if any(r["exit"] != 0 for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
