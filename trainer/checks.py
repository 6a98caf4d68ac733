"""Checks that need the data rows or the model's config, run before the model loads.

Everything a config and its data can reveal is an exit-2 error here, naming the key (and the data
file's line), instead of a crash with exit 70 after minutes of loading: the dataset columns each
reward reads, the routing target modules (against a meta-device copy of the model: its module names,
no weights), and half precision on a machine without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from sweepgen.errors import ConfigError, Location
from sweepgen_trainer import rewards
from sweepgen_trainer.config import RunConfig


def _rewards_of(cfg: RunConfig) -> list[tuple[str, str, dict[str, Any]]]:
    """(config key, reward name, params) of every reward the run calls on data rows."""
    out = [("reward", cfg.reward.name, cfg.reward.params)]
    if cfg.routing is not None:
        out.append(("routing.task_reward", cfg.routing.task_reward.name, cfg.routing.task_reward.params))
        detector = cfg.routing.detector
        if detector.name == "reward_above":
            out.append(("routing.detector", detector.params["reward"], detector.params["reward_params"]))
    return out


def check_data_columns(cfg: RunConfig, path: Path, rows: list[dict[str, Any]], lines: list[int]) -> None:
    """Every column a reward reads is present in every row with a value of the right kind."""
    for key, name, params in _rewards_of(cfg):
        for column, kind in rewards.required_columns(name, params).items():
            for row, line in zip(rows, lines, strict=True):
                where = Location(str(path), line, 1)
                if column not in row:
                    raise ConfigError(
                        f"reward `{name}` ({key}) reads the column `{column}`, which this row lacks "
                        f"(it has: {', '.join(sorted(row))})",
                        location=where,
                        key=key,
                        hint=f"add `{column}` to every row, or point the reward's parameter at the "
                        "column that holds the answer",
                    )
                value = row[column]
                if not _is_kind(value, kind):
                    raise ConfigError(
                        f"reward `{name}` ({key}) needs column `{column}` to be a {kind} in every row; "
                        f"this row has {value!r}",
                        location=where,
                        key=key,
                        hint="fix the row, or drop it from the data file",
                    )


def _is_kind(value: object, kind: str) -> bool:
    if kind != "number":
        raise ValueError(f"unknown column kind {kind!r}")
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, str):
        try:
            return math.isfinite(float(value))
        except ValueError:
            return False
    return False


def check_target_modules(cfg: RunConfig, model_dir: Path) -> None:
    """routing.target_modules against the linear layers of the model, built on the meta device."""
    if cfg.routing is None:
        return
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch (checks run before the model loads)
    from torch import nn  # noqa: PLC0415 - lazy: this module stays importable without torch
    from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedModel  # noqa: PLC0415 - lazy: this module stays importable without torch

    config = AutoConfig.from_pretrained(model_dir, local_files_only=True)
    with torch.device("meta"):
        # from_config is unannotated in transformers; it builds a model from its config
        model = cast(Callable[..., PreTrainedModel], AutoModelForCausalLM.from_config)(config)
    # get_output_embeddings is unannotated in transformers; it returns the output layer or None
    output = cast(Callable[[], nn.Module | None], model.get_output_embeddings)()
    linear: dict[str, str] = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear):
            linear.setdefault(name.rsplit(".", 1)[-1], name)
    targets = cfg.routing.target_modules
    missing = [t for t in targets if t not in linear]
    if missing:
        raise ConfigError(
            f"routing.target_modules {missing} match no linear layer of {model_dir}",
            key="routing.target_modules",
            hint=f"its linear layers are named {sorted(linear)}",
        )
    for target in targets:
        if model.get_submodule(linear[target]) is output:
            raise ConfigError(
                f"routing.target_modules may not include the output layer `{target}`: TRL computes "
                "log-probs from its weight directly, so its adapter would never train",
                key="routing.target_modules",
                hint="remove it from routing.target_modules",
            )


def check_device(cfg: RunConfig) -> None:
    """Half precision on CPU trains in half precision, slowly and imprecisely, without saying so."""
    if cfg.model.dtype == "float32":
        return
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch

    if not torch.cuda.is_available():
        raise ConfigError(
            f"model.dtype is {cfg.model.dtype} but this machine has no CUDA GPU: the run would train "
            "in half precision on the CPU",
            key="model.dtype",
            hint="set model.dtype: float32 on CPU (half precision is for GPUs)",
        )
