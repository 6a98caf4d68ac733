"""Steps/s of a routed run against the same run unrouted (baseline LoRA) and without adapters.

Usage: OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_routing.py [STEPS] [ROUNDS] [WIDTH]
Same tiny model (WIDTH wide, default 64), data, reward, seed and GRPO settings in all three; only the
`routing` section differs:

  off        no routing section: full fine-tuning of the tiny model, no adapters
  baseline   routing.mode baseline: one LoRA of rank 16 on every linear layer, no masks
  classic    routing.mode classic: retain rank 8 + forget rank 8, per-sample masks

The detector flags about half the completions (sentence_length above 0.55), so most micro-batches are
mixed and the retain adapter goes through the masked path: the routed worst case, not its best.
A step is a whole GRPO step (generation, scoring, loss, backward, optimizer), timed by a callback
from on_step_begin to on_step_end, two ways: wall clock, and the process's CPU time (torch on one
thread). On a shared machine the wall clock mostly measures the neighbours, the CPU time much less so;
both are given. Steps/s = 1 / median step time over the steps after the first two (warm-up). The three
configs run in turn, ROUNDS times; the table gives the median over rounds, and the routed/baseline
ratio within each round (adjacent runs share the machine's load best) with its median.
Target (issue 4): routed at most 1.3x slower than the same run without routing = the baseline LoRA.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from sweepgen_trainer.config import RunConfig

ROUTING = {
    "detector": {"name": "reward_above", "params": {"reward": "sentence_length", "threshold": 0.55}},
    "task_reward": {"name": "sentence_length"},
    "retain_rank": 8,
    "forget_rank": 8,
}
CONFIGS = (("off", None), ("baseline", "baseline"), ("classic", "classic"))


def config(out: Path, name: str, steps: int, mode: str | None, width: int) -> RunConfig:
    data = {
        "run_name": name,
        "output_dir": str(out / name),
        "seed": 0,
        "model": {"tiny": {"hidden_size": width, "intermediate_size": 2 * width if width == 64 else width}},
        "reward": {"name": "sentence_length"},
        "grpo": {
            "num_generations": 8,
            "batch_size": 16,
            "max_steps": steps,
            "max_completion_length": 16,
            "learning_rate": 5e-3,
            "beta": 0.0,
        },
        "logging": {"save_steps": 100000},
    }
    if mode is not None:
        data["routing"] = {"mode": mode, **ROUTING}
    return RunConfig.model_validate(data)


class StepTimer:
    """TrainerCallback-shaped: wall and CPU seconds of each step."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __getattr__(self, name):  # the other callback events: nothing to do
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)

    def on_step_begin(self, *args, **kwargs):
        self._start = (time.perf_counter(), time.process_time())

    def on_step_end(self, *args, **kwargs):
        self.wall.append(time.perf_counter() - self._start[0])
        self.cpu.append(time.process_time() - self._start[1])


def timed_run(cfg: RunConfig) -> StepTimer:
    """run()'s model/data/trainer setup with a StepTimer added; outputs go to cfg.output_dir."""
    from datasets import Dataset

    from sweepgen_trainer import data as data_mod
    from sweepgen_trainer import models
    from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    run_dir = RunDir(cfg.output_dir)
    args = grpo_kwargs(cfg, str(run_dir.checkpoints))
    run_dir.start(cfg, args)
    model, tok = models.load_model_and_tokenizer(models.ensure_model_dir(cfg.model), cfg.model.dtype)
    trainer = build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tok,
        train_dataset=Dataset.from_list(data_mod.load_rows(cfg.data)),
        grpo_config=grpo_config_from(args),
    )
    timer = StepTimer()
    trainer.add_callback(timer)
    trainer.train()
    return timer


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    width = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    torch.set_num_threads(1)
    wall: dict[str, list[float]] = {name: [] for name, _ in CONFIGS}
    cpu: dict[str, list[float]] = {name: [] for name, _ in CONFIGS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name, mode in CONFIGS:
                timer = timed_run(config(Path(tmp) / f"round{r}", name, steps, mode, width))
                wall[name].append(1.0 / statistics.median(timer.wall[2:]))
                cpu[name].append(1.0 / statistics.median(timer.cpu[2:]))
    print(f"tiny model {width} wide, {steps} steps x {rounds} rounds; steps/s, median over rounds")
    for label, res in (("CPU time", cpu), ("wall clock", wall)):
        sps = {name: statistics.median(v) for name, v in res.items()}
        print(f"-- by {label}")
        for name, value in sps.items():
            print(f"{name:9s} {value:6.2f} steps/s   rounds: {', '.join(f'{v:.2f}' for v in res[name])}")
        print(f"routed vs baseline LoRA: {sps['baseline'] / sps['classic']:.3f}x slower")
        print(f"routed vs no adapters:   {sps['off'] / sps['classic']:.3f}x slower")
        # runs next to each other in time share the machine's load best: the ratio within each round
        paired = [b / c for b, c in zip(res["baseline"], res["classic"])]
        print(
            f"routed vs baseline LoRA per round: {', '.join(f'{x:.2f}' for x in paired)}; "
            f"median {statistics.median(paired):.3f}x"
        )


if __name__ == "__main__":
    main()
