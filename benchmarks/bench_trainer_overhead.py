"""Trainer overhead: steps/s of SweepgenGRPOTrainer vs a plain trl.GRPOTrainer, same tiny config.

Both train the same built-in tiny model on the same data with the same GRPOConfig; only the trainer
class differs (ours adds metrics/samples files and NaN checks). Timed: ``trainer.train()`` alone
(model loading excluded), alternating A/B over several repeats; the median of each is reported, in
wall-clock steps/s and in CPU-time steps/s (process CPU seconds: robust when other jobs share the
machine's cores).
Target: ratio (ours / plain) >= 0.97.

    OMP_NUM_THREADS=1 python benchmarks/bench_trainer_overhead.py [--steps 60] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CONFIG = {
    "run_name": "bench",
    "output_dir": "unused",
    "seed": 0,
    "reward": {"name": "happy_count", "params": {"cap": 4}},
    "grpo": {
        "learning_rate": 5e-3,
        "lr_scheduler_type": "constant",
        "num_generations": 8,
        "batch_size": 16,
        "max_completion_length": 16,
        "beta": 0.02,
    },
    "logging": {"save_steps": 100000},
}


ADDED_SECONDS = [0.0]


def _timed(fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ADDED_SECONDS[0] += time.perf_counter() - start

    return wrapper


def time_one(kind: str, steps: int, workdir: Path, repeat: int) -> float:
    import trl
    from datasets import Dataset

    from sweepgen_trainer.config import RunConfig
    from sweepgen_trainer.data import load_rows
    from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs
    from sweepgen_trainer.models import ensure_model_dir, load_model_and_tokenizer
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    data = {
        **CONFIG,
        "output_dir": str(workdir / f"{kind}{repeat}"),
        "grpo": {**CONFIG["grpo"], "max_steps": steps},
    }
    cfg = RunConfig.model_validate(data)
    model, tok = load_model_and_tokenizer(ensure_model_dir(cfg.model), "float32")
    dataset = Dataset.from_list(load_rows(cfg.data))
    run_dir = RunDir(cfg.output_dir)
    args = grpo_config_from(grpo_kwargs(cfg, str(run_dir.checkpoints)))  # as sweepgen_trainer.run builds it
    if kind == "ours":
        run_dir.start(cfg, {})
        trainer = build_trainer(
            cfg, run_dir, model=model, tokenizer=tok, train_dataset=dataset, grpo_config=args
        )
        # Also time exactly what ours adds per logging step (rows built + files appended), which
        # is immune to the noise of a shared machine.
        for obj, name in ((trainer, "metrics_row"), (trainer, "sample_rows"), (run_dir, "append")):
            setattr(obj, name, _timed(getattr(obj, name)))
    else:
        from sweepgen_trainer.rewards import bind

        trainer = trl.GRPOTrainer(
            model=model,
            reward_funcs=[bind("happy_count", {"cap": 4})],
            args=args,
            train_dataset=dataset,
            processing_class=tok,
        )
        from transformers.trainer_callback import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # same console output as ours: none
    start, cpu_start = time.perf_counter(), time.process_time()
    trainer.train()
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu_start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("SWEEPGEN_CACHE", str(Path(tmp) / "cache"))
        time_one("plain", 2, Path(tmp), -1)  # warm-up: build the tiny model, import everything
        results: dict[str, list[tuple[float, float]]] = {"plain": [], "ours": []}
        for repeat in range(args.repeats):
            order = ("plain", "ours") if repeat % 2 == 0 else ("ours", "plain")
            for kind in order:
                results[kind].append(time_one(kind, args.steps, Path(tmp), repeat))
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, torch threads "
        f"{torch.get_num_threads()}, python {platform.python_version()}, torch {torch.__version__}"
    )
    print(f"steps={args.steps} repeats={args.repeats}")
    for index, clock in enumerate(("wall-clock", "CPU-time")):
        medians = {}
        for kind in ("plain", "ours"):
            values = [r[index] for r in results[kind]]
            medians[kind] = statistics.median(values)
            print(
                f"{clock:10s} {kind:5s} steps/s: "
                + " ".join(f"{v:.2f}" for v in values)
                + f"  median {medians[kind]:.2f}"
            )
        print(f"{clock:10s} ratio ours/plain (medians): {medians['ours'] / medians['plain']:.3f}")
    steps_ours = args.steps * args.repeats
    print(
        f"time in our per-step additions (rows + file appends): "
        f"{1000 * ADDED_SECONDS[0] / steps_ours:.3f} ms/step"
    )


if __name__ == "__main__":
    main()
