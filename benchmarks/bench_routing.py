"""Steps/s of a routed run against the same run unrouted (baseline LoRA) and without adapters.

Usage: OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/bench_routing.py [STEPS]
Same tiny model, data, reward, seed and GRPO settings in all three; only the `routing` section differs.
Steps/s = 1 / median TRL step_time (training step incl. generation) over the logged steps after the
first (warm-up). Target: routed at most 1.3x slower than the unrouted baseline LoRA.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from trainer.config import RunConfig
from trainer.run import run

ROUTING = {"detector": {"name": "reward_above", "params": {"reward": "sentence_length", "threshold": 0.55}},
           "task_reward": {"name": "sentence_length"}, "retain_rank": 8, "forget_rank": 8}


def config(out: Path, name: str, steps: int, mode: str | None) -> RunConfig:
    data = {"run_name": name, "output_dir": str(out / name), "seed": 0,
            "reward": {"name": "sentence_length"},
            "grpo": {"num_generations": 8, "batch_size": 16, "max_steps": steps, "max_completion_length": 16,
                     "learning_rate": 5e-3, "beta": 0.0},
            "logging": {"save_steps": 100000}}
    if mode is not None:
        data["routing"] = {"mode": mode, **ROUTING}
    return RunConfig.model_validate(data)


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, mode in (("off", None), ("baseline", "baseline"), ("classic", "classic")):
            run(config(Path(tmp), name, steps, mode))
            rows = [json.loads(x) for x in (Path(tmp) / name / "metrics.jsonl").read_text().splitlines()]
            times = [r["step_time"] for r in rows[1:] if r.get("step_time")]
            results[name] = 1.0 / statistics.median(times)
    for name, sps in results.items():
        print(f"{name:9s} {sps:6.2f} steps/s")
    print(f"routed vs baseline LoRA: {results['baseline'] / results['classic']:.3f}x slower")
    print(f"routed vs no adapters:   {results['off'] / results['classic']:.3f}x slower")


if __name__ == "__main__":
    main()
