"""Read a routed checkpoint back: adapter ranks from the saved tensors, alphas and mode from routing.json.

A checkpoint folder holds the whole model (base weights under their usual keys plus ``*.retain_A``,
``*.retain_B``, ``*.forget_A``, ``*.forget_B``) and the ``routing.json`` the trainer wrote next to it.
Ranks are read from the tensor shapes, never from the run's config; routing.json must agree with them,
and the state dict must load with no missing or unexpected key. Any disagreement is an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sweepgen.errors import ConfigError
from sweepgen.fs import filenames

CHECKPOINT_META = filenames.ROUTING_META
WEIGHTS = "model.safetensors"

if TYPE_CHECKING:  # annotations only: this module stays importable without torch
    from torch import nn
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase


def _adapter_shapes(weights: Path) -> tuple[dict[str, int], list[str]]:
    """Rank of each adapter (0: absent) and the adapted module names, from the tensors alone."""
    from safetensors import safe_open  # noqa: PLC0415 - lazy: safetensors loads only to read a checkpoint

    ranks: dict[str, set[int]] = {"retain": set(), "forget": set()}
    targets: set[str] = set()
    with safe_open(str(weights), "pt") as handle:
        for key in handle.keys():  # noqa: SIM118 - a safetensors handle is not a dict: no __iter__
            for adapter in ranks:
                if key.endswith(f".{adapter}_A"):
                    ranks[adapter].add(handle.get_slice(key).get_shape()[0])
                    targets.add(key.rsplit(".", 2)[-2])
    for adapter, found in ranks.items():
        if len(found) > 1:
            raise ConfigError(
                f"{weights}: the {adapter} adapter has different ranks {sorted(found)} across layers",
                hint="this checkpoint was not written by the routed trainer",
            )
    return {a: (next(iter(f)) if f else 0) for a, f in ranks.items()}, sorted(targets)


def _read_meta(checkpoint: Path) -> dict[str, Any]:
    """routing.json of ``checkpoint``, checked against the ranks in its weights."""
    meta_path, weights = checkpoint / CHECKPOINT_META, checkpoint / WEIGHTS
    for path in (meta_path, weights):
        if not path.is_file():
            raise ConfigError(
                f"{path} does not exist",
                hint="pass a checkpoint folder of a run with a `routing` section "
                "(e.g. RUN_DIR/checkpoints/checkpoint-40)",
            )
    meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
    ranks, targets = _adapter_shapes(weights)
    if ranks["retain"] == 0:
        raise ConfigError(f"{weights} holds no routing adapters")
    if ranks != {k: int(v) for k, v in meta["ranks"].items()}:
        raise ConfigError(
            f"{meta_path} says ranks {meta['ranks']} but the weights have {ranks}",
            hint="the checkpoint folder was modified by hand; re-run or restore it",
        )
    if targets != sorted(meta["target_modules"]):
        raise ConfigError(
            f"{meta_path} names target modules {sorted(meta['target_modules'])} but the "
            f"weights adapt {targets}"
        )
    meta["ranks"] = ranks
    return meta


def load_routed_model(
    checkpoint: Path, dtype: str = "float32", seed: int = 0
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, dict[str, Any]]:
    """(model, tokenizer, meta): the model with adapters of the checkpoint's ranks, every weight loaded."""
    import torch  # noqa: PLC0415 - lazy: this module stays importable without torch (_read_meta needs none)
    from safetensors.torch import load_file  # noqa: PLC0415 - lazy: this module stays importable without torch
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415 - lazy: this module stays importable without torch

    from sweepgen_trainer.routing.dual_lora import inject_adapters  # noqa: PLC0415 - dual_lora imports torch

    meta = _read_meta(checkpoint)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, local_files_only=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    state = load_file(str(checkpoint / WEIGHTS))
    # Built empty from the saved config; every weight then comes from the checkpoint (strict check below).
    # from_config is unannotated in transformers; it builds a model from its config
    build = cast(Callable[..., "PreTrainedModel"], AutoModelForCausalLM.from_config)
    model = build(_config(checkpoint), dtype=getattr(torch, dtype))
    inject_adapters(
        model, target_modules=meta["target_modules"], ranks=meta["ranks"], alphas=meta["alphas"], seed=seed
    )
    result = model.load_state_dict(state, strict=False)
    # Tied weights (lm_head = embed_tokens) are saved once; anything else missing is an error.
    missing = [k for k in result.missing_keys if k not in _tied_keys(model)]
    if missing or result.unexpected_keys:
        raise ConfigError(
            f"{checkpoint / WEIGHTS} does not match the model: missing {missing[:5]}, "
            f"unexpected {result.unexpected_keys[:5]}"
        )
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    cast("nn.Module", model).eval()  # PreTrainedModel's own eval() is unannotated
    return model, tokenizer, meta


def _config(checkpoint: Path) -> PretrainedConfig:
    from transformers import AutoConfig  # noqa: PLC0415 - lazy: this module stays importable without torch

    config: PretrainedConfig = AutoConfig.from_pretrained(checkpoint, local_files_only=True)
    return config


def _tied_keys(model: PreTrainedModel) -> set[str]:
    if getattr(model.config, "tie_word_embeddings", False):
        return {"lm_head.weight"}
    return set()
