"""Plain TRL's GRPOTrainer on one of our run configs: the baseline of ``bench_packing.py --trainer trl``.

Everything that decides the work (model and tokenizer, dtype, data rows, reward function, every
``trl.GRPOConfig`` argument) is built by the same functions the bundled trainer uses; only the
trainer class differs: ``trl.GRPOTrainer`` with no callback of ours but one that appends TRL's logs
to ``metrics.jsonl`` in the run's ``output_dir`` (the file bench_packing reads), each row with the
wall time of the optimizer step (``time/step_s``, CUDA synchronised at the step's end as ours is).

    python benchmarks/plain_trl.py CONFIG.yaml        # as `sweepgen run --command` runs it
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _callback(metrics: Path, cuda: bool) -> Any:
    import torch
    from transformers.trainer_callback import TrainerCallback

    class MetricsFile(TrainerCallback):  # the only addition: TRL's own logs, one row per step
        def __init__(self) -> None:
            self.begin = self.step_s = 0.0
            self.start = time.monotonic()

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.begin = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if cuda:
                torch.cuda.synchronize()
            self.step_s = time.perf_counter() - self.begin

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if not logs or "loss" not in logs:
                return
            row = {"step": state.global_step, **logs, "time/step_s": self.step_s}
            row["completion_length"] = logs.get("completions/mean_length")
            row["elapsed_s"] = time.monotonic() - self.start
            with metrics.open("a") as f:
                f.write(json.dumps(row) + "\n")

    return MetricsFile()


def main(config_path: str) -> None:
    import trl
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback

    from sweepgen_trainer.configfile import load_config_doc
    from sweepgen_trainer.data import read_rows
    from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs
    from sweepgen_trainer.models import ensure_model_dir, load_model_and_tokenizer
    from sweepgen_trainer.rewards import bind

    cfg, _ = load_config_doc(config_path)
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    args = grpo_config_from(grpo_kwargs(cfg, str(out / "checkpoints")))
    model, tokenizer = load_model_and_tokenizer(ensure_model_dir(cfg.model), cfg.model.dtype)
    _, rows, _ = read_rows(cfg.data)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[bind(cfg.reward.name, cfg.reward.params)],
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[_callback(out / "metrics.jsonl", trainer_is_cuda(args))],
    )
    trainer.remove_callback(PrinterCallback)
    trainer.train()


def trainer_is_cuda(args: Any) -> bool:
    return args.device.type == "cuda"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
