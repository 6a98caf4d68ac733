"""Shared pieces of the trainer tests: a tiny learnable config and a per-session model cache.

The tiny model is built into pytest's session temp folder (never ~/.cache), once per session:
every test that uses the ``tiny_cache`` fixture (tests/conftest.py) points SWEEPGEN_CACHE at it.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import yaml

from sweepgen_trainer.config import RunConfig
from sweepgen_trainer.grpo_args import grpo_config_from, grpo_kwargs

# Learns happy_count from ~0.02 to 1.0 in about 30 steps on 2 CPU cores (a few seconds).
TINY: dict[str, Any] = {
    "run_name": "tiny",
    "output_dir": "runs/tiny",
    "seed": 0,
    "reward": {"name": "happy_count", "params": {"cap": 4}},
    "grpo": {
        "learning_rate": 5.0e-3,
        "lr_scheduler_type": "constant",
        "num_generations": 8,
        "batch_size": 16,
        "max_steps": 60,
        "max_completion_length": 16,
        "beta": 0.0,
    },
    "logging": {"save_steps": 1000},
}


def tiny_dict(output_dir: Path | str, **sections: dict[str, Any]) -> dict[str, Any]:
    """TINY with ``output_dir`` and each given section merged over (one level deep)."""
    data = copy.deepcopy(TINY)
    data["output_dir"] = str(output_dir)
    for name, value in sections.items():
        if isinstance(value, dict) and isinstance(data.get(name), dict):
            data[name].update(value)
        else:
            data[name] = value
    return data


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def subprocess_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SWEEPGEN_CACHE=str(cache), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    return env


# Wall-clock keys: the only values in metrics.jsonl that differ between two identical runs.
TIMING_KEYS = frozenset({"step_time", "elapsed_s"})


def is_timing(key: str) -> bool:
    """A wall-clock key of metrics.jsonl: TRL's step time, elapsed time, the time/* phases."""
    return key in TIMING_KEYS or key.startswith("time/")


def without_timing(rows: list[dict]) -> list[dict]:
    """metrics.jsonl rows without their wall-clock keys: what two identical runs agree on."""
    return [{k: v for k, v in r.items() if not is_timing(k)} for r in rows]


def adapter_layers(model: Any) -> list[tuple[str, Any]]:
    """``(name, layer)`` of every dual-adapter layer of ``model`` (needs torch)."""
    from sweepgen_trainer.routing.dual_lora import DualLoRALinear

    return [(n, m) for n, m in model.named_modules() if isinstance(m, DualLoRALinear)]


def adapter_parameters(model: Any, adapter: str) -> list[tuple[str, Any]]:
    """``(name, parameter)`` of one adapter's A and B matrices in every adapted layer."""
    return [(n, p) for n, p in model.named_parameters() if n.endswith((f".{adapter}_A", f".{adapter}_B"))]


def grpo_config(cfg: RunConfig, checkpoints_dir: Path | str) -> Any:
    """The ``trl.GRPOConfig`` for ``cfg``, built as ``sweepgen_trainer.run`` builds it (needs trl)."""
    return grpo_config_from(grpo_kwargs(cfg, str(checkpoints_dir)))


def debate_trainer(cfg: RunConfig, run_root: Path) -> tuple[Any, list[dict[str, Any]]]:
    """The bundled trainer built for ``cfg`` as ``run.py`` builds it, on the tiny local model, and
    the rows of its data (needs torch, trl, datasets)."""
    from datasets import Dataset

    from sweepgen_trainer import data, models
    from sweepgen_trainer.run import build_trainer
    from sweepgen_trainer.rundir.outputs import RunDir

    model, tokenizer = models.load_model_and_tokenizer(models.ensure_model_dir(cfg.model), "float32")
    rows = data.load_rows(cfg.data)
    run_dir = RunDir(run_root)
    trainer = build_trainer(
        cfg,
        run_dir,
        model=model,
        tokenizer=tokenizer,
        train_dataset=Dataset.from_list(rows),
        grpo_config=grpo_config(cfg, run_dir.checkpoints),
    )
    trainer.model.train()
    return trainer, rows


def generate_shaped(trainer: Any, batch: list[dict[str, Any]]) -> tuple[dict[str, Any], Any, Any]:
    """A debate trainer's generation step on ``batch``: its output, the ``Shaping`` it applied, and
    the per-sequence advantages TRL computed before the debate replaced them (needs torch, trl)."""
    from trl import GRPOTrainer

    seen: dict[str, Any] = {}
    shape, base = trainer.shape, GRPOTrainer._generate_and_score_completions

    def spy_shape(*args: Any, **kwargs: Any) -> Any:
        seen["shaping"] = shape(*args, **kwargs)
        return seen["shaping"]

    def spy_base(self: Any, inputs: Any) -> Any:
        out = base(self, inputs)
        seen["trl"] = out["advantages"].detach().cpu().clone()
        return out

    trainer.shape = spy_shape
    GRPOTrainer._generate_and_score_completions = spy_base
    try:
        out = trainer._generate_and_score_completions(batch)
    finally:
        GRPOTrainer._generate_and_score_completions = base
        del trainer.shape
    return out, seen["shaping"], seen["trl"]
