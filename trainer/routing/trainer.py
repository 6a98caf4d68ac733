"""RoutedGRPOTrainer: SweepgenGRPOTrainer with retain/forget adapters and per-sample routed updates.

What it changes, in the order a step runs:
  1. The reward (TRL's public ``reward_funcs=``) is wrapped by ``FlaggingReward``: the detector flags
     each completion (``is_hack``) from the same texts and columns the reward scores, and logs their
     mean through TRL's ``log_metric``. ``_generate_and_score_completions`` puts the flags in TRL's
     inputs dict as a bool tensor, so TRL's ``shuffle_sequence_dict``/``split_tensor_dict`` permute
     and slice them with their rows (both act on every tensor with a batch dimension).
  2. ``compute_loss``: installs the mode's per-sample masks on the adapters; TRL's ``_compute_loss``
     then runs its one forward over the whole per-device batch (batch_size=None: no chunking), so the
     loss and its normalisation are TRL's own.
  3. ``training_step``: clears the masks only after backward returned, so layers recomputed by
     gradient checkpointing during backward see the masks of their first forward.
  4. A callback runs the three-mode eval every ``eval_every`` steps and at the last step; the results
     go into that step's metrics.jsonl row and, from the last step, into summary.json.
The baseline mode uses the same class with one adapter and no masks, so everything else is equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch
from transformers import TrainerCallback

from sweepgen_trainer import rewards
from sweepgen_trainer.routing import detectors
from sweepgen_trainer.routing.checkpoint import (
    CHECKPOINT_META,  # read back by `python -m sweepgen_trainer.eval`
)
from sweepgen_trainer.routing.config import RoutingConfig
from sweepgen_trainer.routing.dual_lora import inject_adapters, set_masks
from sweepgen_trainer.routing.evaluation import METRICS, PREFIX, eval_prompts_origin, evaluate_run
from sweepgen_trainer.routing.masks import ROUTED_MODES, masks_for
from sweepgen_trainer.rundir.outputs import atomic_write_text
from sweepgen_trainer.training.grpo import SweepgenGRPOTrainer

if TYPE_CHECKING:  # annotations only
    from torch import nn
    from transformers import PreTrainedTokenizerBase, TrainerControl, TrainerState, TrainingArguments

    from sweepgen_trainer.training.grpo import TrainingStep

TRAIN_HACK_RATE = f"{PREFIX}/train_hack_rate"
# TRL's ``compute_loss`` (trl/trainer/grpo_trainer.py) is not annotated; it returns the loss tensor.
ComputeLoss = Callable[["nn.Module", dict[str, Any], bool, "torch.Tensor | int | None"], torch.Tensor]


class FlaggingReward:
    """The run's reward function, which also runs the detector on the very completions and dataset
    columns it scores. The flags wait in ``pending`` until the batch is built; their mean is logged
    through TRL's ``log_metric`` as ``routing/train_hack_rate``."""

    def __init__(self, reward: Callable[..., list[float]], detector: detectors.DetectorFn) -> None:
        self.reward = reward
        self.detector = detector
        self.pending: torch.Tensor | None = None
        self.__name__ = reward.__name__  # TRL names the reward's logged metrics after it

    def __call__(
        self, prompts: list[Any] | None = None, completions: list[Any] | None = None, **kwargs: Any
    ) -> list[float]:
        values = self.reward(prompts=prompts, completions=completions, **kwargs)
        texts = [rewards._as_text(c) for c in completions or ()]
        self.pending = torch.tensor(self.detector(texts, rewards.dataset_columns(kwargs)), dtype=torch.bool)
        kwargs["log_metric"](TRAIN_HACK_RATE, self.pending.float().mean().item())
        return values


class RoutedGRPOTrainer(SweepgenGRPOTrainer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        cfg = kwargs["run_config"]
        routing: RoutingConfig = cfg.routing
        self.routing = routing
        first, *rest = kwargs["reward_funcs"]
        self._flags = FlaggingReward(first, detectors.build(routing.detector.name, routing.detector.params))
        kwargs["reward_funcs"] = [self._flags, *rest]
        # Adapters go in before TRL sees the model; the reference model TRL loads from disk has none,
        # which is the initial policy exactly (every B starts at zero).
        inject_adapters(
            kwargs["model"],
            target_modules=routing.target_modules,
            ranks=routing.adapter_ranks(),
            alphas=routing.adapter_alphas(),
            seed=cfg.seed,
        )
        self._pending_eval: dict[str, float] = {}
        self.final_routing_eval: dict[str, Any] | None = None
        kwargs["callbacks"] = [*(kwargs.get("callbacks") or ()), _RoutingCallback(self)]
        super().__init__(*args, **kwargs)

    # ---- is_hack: carried as a row-aligned tensor --------------------------------------------
    def _generate_and_score_completions(
        self, inputs: list[dict[str, torch.Tensor | Any]]
    ) -> dict[str, torch.Tensor | Any]:
        # Kept: no public argument adds a row-aligned tensor to the batch the loss reads (is_hack).
        output = super()._generate_and_score_completions(inputs)
        hack, self._flags.pending = self._flags.pending, None
        rows = output["completion_ids"].shape[0]
        if hack is None or hack.shape[0] != rows:
            raise RuntimeError(f"is_hack has {None if hack is None else hack.shape[0]} flags for {rows} rows")
        output["is_hack"] = hack.to(output["completion_ids"].device)
        return output

    # ---- the routed update -------------------------------------------------------------------
    def compute_loss(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        # Kept: the loss changes (per-sample gradient masks on the adapters); no public hook.
        if self.routing.mode in ROUTED_MODES and model.training:
            set_masks(model, masks_for(self.routing.mode, inputs["is_hack"]))
        return cast(ComputeLoss, super().compute_loss)(model, inputs, return_outputs, num_items_in_batch)

    def training_step(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        # Kept: the masks must outlive backward (the loss change above); no callback runs after it.
        try:
            return cast("TrainingStep", super().training_step)(model, inputs, num_items_in_batch)
        finally:
            set_masks(model, None)  # after backward (and any checkpoint recompute) has finished

    # ---- eval and outputs --------------------------------------------------------------------
    def run_routing_eval(self) -> dict[str, float]:
        model = self.accelerator.unwrap_model(self.model)
        # build_trainer hands TRL the tokenizer as processing_class (TRL types it as any processor)
        tokenizer = cast("PreTrainedTokenizerBase", self.processing_class)
        return evaluate_run(model, tokenizer, self.run_config, modes=self.routing.eval_modes())

    def metrics_row(self, logs: dict[str, Any]) -> dict[str, Any]:
        row = super().metrics_row(logs)
        row.update(self._pending_eval)
        self._pending_eval = {}
        return row

    def summary_extras(self) -> dict[str, Any]:
        extras = super().summary_extras()
        if self.final_routing_eval is not None:
            extras["routing"] = self.final_routing_eval
            extras["routing_eval_prompts"] = eval_prompts_origin(self.run_config)
        return extras

    def checkpoint_meta(self) -> dict[str, Any]:
        r = self.routing
        return {
            "mode": r.mode,
            "ranks": r.adapter_ranks(),
            "alphas": r.adapter_alphas(),
            "target_modules": r.target_modules,
            "eval_modes": {k: list(v) for k, v in r.eval_modes().items()},
        }


def nest_eval(flat: dict[str, float], mode: str, step: int) -> dict[str, Any]:
    """summary.json form: ``{"mode", "step", "<eval mode>": {metric: value}}``."""
    nested: dict[str, Any] = {"mode": mode, "step": step}
    for key, value in flat.items():
        _, eval_mode, metric = key.split("/")
        nested.setdefault(eval_mode, {})[metric] = value
    for eval_mode in nested:
        if isinstance(nested[eval_mode], dict):
            assert set(nested[eval_mode]) == set(METRICS), nested[eval_mode]
    return nested


class _RoutingCallback(TrainerCallback):
    """Eval every ``eval_every`` steps and at the last step; routing.json into each checkpoint."""

    def __init__(self, trainer: RoutedGRPOTrainer) -> None:
        self.trainer = trainer

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> TrainerControl:
        t, every = self.trainer, self.trainer.routing.eval_every
        last = state.global_step >= state.max_steps
        if last or (every and state.global_step % every == 0):
            # on_step_end runs before this step's log, so the results land in this step's row; an
            # eval step that is not a logging step is logged anyway, or its results would land in
            # a later step's row (or be lost at the end).
            t._pending_eval = t.run_routing_eval()
            control.should_log = True
            if last:
                t.final_routing_eval = nest_eval(t._pending_eval, t.routing.mode, state.global_step)
        return control

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> TrainerControl:
        if args.output_dir is None:  # grpo_kwargs always sets it (the run's checkpoints folder)
            raise RuntimeError("TRL saved a checkpoint without an output_dir")
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if folder.is_dir():
            atomic_write_text(
                folder / CHECKPOINT_META,
                json.dumps(self.trainer.checkpoint_meta(), indent=2, sort_keys=True) + "\n",
            )
        return control


__all__ = ["CHECKPOINT_META", "FlaggingReward", "RoutedGRPOTrainer", "TRAIN_HACK_RATE", "nest_eval"]
