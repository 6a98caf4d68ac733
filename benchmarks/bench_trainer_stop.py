"""Graceful stop latency: seconds from SIGTERM to the trainer's exit (finish the step + save).

A run is started with ``python -m sweepgen_trainer``, sent SIGTERM as soon as it logs step 1, and timed until
it reports the stop (checkpoint complete) and until it exits (code 143; the difference is the
interpreter tearing down torch/transformers). The latency is what a sender's grace period must cover:
the local executor SIGKILLs 10 s after its SIGTERM, Slurm sends SIGUSR2 ``signal_delay_s`` before
the time limit.
Two model shapes: the tests' tiny model and a SmolLM-135M-shaped one (576 wide, 30 layers,
1536 MLP; the built-in 512-token vocabulary), whose checkpoint (weights + AdamW states) is ~1.4 GB.

    OMP_NUM_THREADS=1 python benchmarks/bench_trainer_stop.py [--repeats 3] [--only tiny|smollm]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent

SHAPES = {
    "tiny": {},  # model.tiny defaults: 64 wide, 2 layers
    "smollm": {
        "hidden_size": 576,
        "intermediate_size": 1536,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "vocab_size": 512,
    },
}


def config(output_dir: Path, shape: dict) -> dict:
    return {
        "run_name": "stop",
        "output_dir": str(output_dir),
        "seed": 0,
        "model": {"path": "builtin:tiny", "tiny": shape},
        "reward": {"name": "happy_count", "params": {"cap": 4}},
        "grpo": {
            "learning_rate": 5e-3,
            "lr_scheduler_type": "constant",
            "num_generations": 8,
            "batch_size": 16,
            "max_completion_length": 16,
            "beta": 0.02,
            "max_steps": 50,
        },
        "logging": {"save_steps": 100000},
    }


def one_stop(work: Path, shape: dict, run: str) -> dict:
    out_dir = work / run
    path = work / f"{run}.yaml"
    path.write_text(yaml.safe_dump(config(out_dir, shape)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sweepgen_trainer", str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stopped_at = []

    tail: list[str] = []

    def watch_stderr() -> None:  # the "stopped by" line comes after the checkpoint is complete
        for line in proc.stderr:
            tail[:] = [*tail[-20:], line]
            if line.startswith("stopped by"):
                stopped_at.append(time.monotonic())

    watcher = threading.Thread(target=watch_stderr)
    watcher.start()
    for line in proc.stdout:
        if line.startswith("step 1/"):
            break
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate()
    latency = time.monotonic() - sent
    watcher.join()
    if proc.returncode != 143 or not stopped_at:
        raise SystemExit(f"{run}: exit {proc.returncode}, no graceful stop:\n{''.join(tail)}")
    ckpt = next((out_dir / "checkpoints").glob("checkpoint-*"))
    size = sum(p.stat().st_size for p in ckpt.rglob("*") if p.is_file())
    steps = [json.loads(x) for x in (out_dir / "metrics.jsonl").read_text().splitlines()]
    return {
        "code": proc.returncode,
        "latency_s": latency,
        "saved_s": stopped_at[0] - sent,
        "ckpt_mb": size / 2**20,
        "step_s": statistics.median(r["step_time"] for r in steps),
        "stop_step": steps[-1]["step"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=sorted(SHAPES))
    args = parser.parse_args()
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["SWEEPGEN_CACHE"] = str(work / "cache")
        for name, shape in SHAPES.items():
            if args.only and name != args.only:
                continue
            rows = [one_stop(work, shape, f"{name}{i}") for i in range(args.repeats)]
            assert all(r["code"] == 143 for r in rows), rows
            lat, saved = [r["latency_s"] for r in rows], [r["saved_s"] for r in rows]
            print(
                f"{name}: SIGTERM->checkpoint saved median {statistics.median(saved):.2f} s "
                f"(max {max(saved):.2f}); SIGTERM->exit median {statistics.median(lat):.2f} s "
                f"(max {max(lat):.2f}); step {statistics.median(r['step_s'] for r in rows):.2f} s; "
                f"checkpoint {rows[0]['ckpt_mb']:.0f} MiB; stopped at steps "
                f"{[r['stop_step'] for r in rows]}"
            )


if __name__ == "__main__":
    main()
