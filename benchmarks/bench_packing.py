"""Aggregate training throughput of a packed local sweep against one run alone.

For each packing level N it builds a sweep of N identical runs (different seeds) of the bundled
trainer, runs it with ``sweepgen run DIR --jobs N`` (plus ``--gpus G --per-gpu N`` on a GPU), and
reports:

* end-to-end aggregate steps/s: N × steps / wall time of the whole `sweepgen run` (what a user waits
  for: process start, model load and training included);
* training aggregate steps/s: N × steps / the span from the first run's first step to the last run's
  last step, taken from the runs' own metrics.jsonl (``elapsed_s`` and ``step_time``), so process
  start-up and model loading are left out;
* the speed-up of each against N = 1.

Usage (from the repo root, with the train extra installed)::

    OMP_NUM_THREADS=1 python benchmarks/bench_packing.py --levels 1,2,4 --steps 30
    python benchmarks/make_gpu_models.py /tmp/models       # the two model shapes of the GPU issue
    python benchmarks/bench_packing.py --levels 1,4,12,20 --gpus 0 --model /tmp/models/simplestories \
        --batch 32 --generations 16 --completion-length 128 --bf16 [--mps]
    python benchmarks/bench_packing.py --levels 1,4 --gpus 0 --model /tmp/models/smollm135m \
        --batch 32 --generations 8 --completion-length 256 --bf16

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def training_span(run_dirs: list[Path]) -> float:
    """Seconds from the earliest first-step start to the latest last-step end, on one clock: the
    mtime of a run's metrics.jsonl is the end of its last step (logging_steps is 1), and its summed
    ``step_time`` goes back to the start of its first step."""
    starts, ends = [], []
    for run_dir in run_dirs:
        rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
        end = (run_dir / "metrics.jsonl").stat().st_mtime  # written at the last step
        total = sum(r["step_time"] for r in rows)
        starts.append(end - total)
        ends.append(end)
    return max(ends) - min(starts)


def run_level(n: int, args: argparse.Namespace, cache: Path) -> dict:
    root = Path(tempfile.mkdtemp(prefix=f"bench_pack_{n}_"))
    try:
        write_sweep(root, n, args)
        cmd = [sys.executable, "-m", "sweepgen", "run", "generated/pack", "--jobs", str(n)]
        if args.gpus:
            cmd += ["--gpus", args.gpus, "--per-gpu", str(-(-n // len(args.gpus.split(","))))]
            if args.mps:
                cmd.append("--mps")
        env = {
            **os.environ,
            "SWEEPGEN_CACHE": str(cache),
            "HF_HUB_OFFLINE": "1",
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        }
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"level {n} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        run_dirs = sorted((root / "runs" / "pack").iterdir())
        span = training_span(run_dirs)
        step_times = [
            r["step_time"]
            for d in run_dirs
            for r in map(json.loads, (d / "metrics.jsonl").read_text().splitlines())
        ]
        return {
            "runs": n,
            "wall_s": wall,
            "e2e_steps_per_s": n * args.steps / wall,
            "train_span_s": span,
            "train_steps_per_s": n * args.steps / span,
            "mean_step_time_s": sum(step_times) / len(step_times),
        }
    finally:
        shutil.rmtree(root)  # our own temporary sweep only


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--levels", default="1,2,4", help="runs packed at once, comma-separated")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--model", default=None, help="model path (default: the built-in tiny model)")
    parser.add_argument("--gpus", default=None, help="CUDA ids to pack onto (default: CPU)")
    parser.add_argument("--mps", action="store_true", help="run the packed runs under NVIDIA MPS")
    parser.add_argument("--bf16", action="store_true", help="bf16 weights and training (GPU only)")
    parser.add_argument("--completion-length", type=int, default=16, help="max_completion_length")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    load_before = os.getloadavg()  # other work on the machine skews these numbers: say how much
    cache = Path(tempfile.mkdtemp(prefix="bench_pack_cache_"))
    try:
        # build the tiny model once, outside the timed runs
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
        results = [run_level(int(n), args, cache) for n in args.levels.split(",")]
    finally:
        shutil.rmtree(cache)
    base_e2e, base_train = results[0]["e2e_steps_per_s"], results[0]["train_steps_per_s"]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, gpus={args.gpus or 'none'}, "
        f"load average before/after {load_before[0]:.1f}/{os.getloadavg()[0]:.1f}"
    )
    print(
        f"config: steps={args.steps} batch={args.batch} generations={args.generations} "
        f"completion={args.completion_length} bf16={args.bf16} mps={args.mps} "
        f"model={args.model or 'builtin:tiny'}"
    )
    print("| runs | wall s | end-to-end steps/s | × one run | training steps/s | × one run | mean step s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        e2e, train = r["e2e_steps_per_s"], r["train_steps_per_s"]
        print(
            f"| {r['runs']} | {r['wall_s']:.1f} | {e2e:.2f} | {e2e / base_e2e:.2f} "
            f"| {train:.2f} | {train / base_train:.2f} | {r['mean_step_time_s']:.3f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
