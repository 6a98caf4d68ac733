"""RunConfig → ``trl.GRPOConfig``: every field set explicitly, in one table.

Keeping the mapping in one dict (``grpo_kwargs``, pure Python) makes it testable without trl and lets
the equivalence test build a plain ``trl.GRPOConfig`` from the very same arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sweepgen.errors import ConfigError
from sweepgen_trainer.config import RunConfig

if TYPE_CHECKING:  # annotations only: grpo_kwargs is pure Python, tested without trl
    from trl.trainer.grpo_config import GRPOConfig

# Our GRPO fields that are passed to TRL under the same name.
_SAME_NAME = (
    "loss_type",
    "beta",
    "scale_rewards",
    "learning_rate",
    "num_generations",
    "gradient_accumulation_steps",
    "max_steps",
    "max_completion_length",
    "temperature",
    "top_p",
    "top_k",
    "repetition_penalty",
    "epsilon",
    "epsilon_high",
    "num_iterations",
    "importance_sampling_level",
    "mask_truncated_completions",
    "optim",
    "weight_decay",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "max_grad_norm",
    "lr_scheduler_type",
    "warmup_steps",
    "bf16",
    "gradient_checkpointing",
    "disable_dropout",
    "use_bias_correction_kl",
    "sapo_temperature_pos",
    "sapo_temperature_neg",
    "use_transformers_continuous_batching",
    "cache_implementation",
    "generation_batch_size",
)

# Loss- and sampling-affecting TRL options we do not expose, pinned to their neutral value so a TRL
# release that changes one of these defaults cannot change our results.
NEUTRAL_PINS: dict[str, Any] = {
    "delta": None,  # two-sided clipping off
    "min_p": None,
    "top_entropy_quantile": 1.0,  # train on all tokens
    "entropy_coef": 0.0,
    "use_adaptive_entropy": False,
    "off_policy_mask_threshold": None,
    "multi_objective_aggregation": "sum_then_normalize",
    "reward_weights": None,
    "sync_ref_model": False,
    "use_vllm": False,
    "generation_kwargs": None,
    "steps_per_generation": None,
    "cast_lm_head_to_fp32": False,
    "label_smoothing_factor": 0.0,
    "neftune_noise_alpha": None,
    "use_liger_kernel": False,
    "torch_compile": False,
    "tf32": None,
    "num_train_epochs": 3.0,  # ignored: max_steps > 0 wins
}


def grpo_kwargs(cfg: RunConfig, checkpoints_dir: str) -> dict[str, Any]:
    """Keyword arguments for ``trl.GRPOConfig``; nothing that changes results is left to TRL."""
    g = cfg.grpo
    kwargs: dict[str, Any] = {name: getattr(g, name) for name in _SAME_NAME}
    kwargs.update(NEUTRAL_PINS)
    kwargs.update(
        output_dir=checkpoints_dir,
        per_device_train_batch_size=g.batch_size,
        seed=cfg.seed,
        data_seed=cfg.seed,
        shuffle_dataset=cfg.data.shuffle,
        fp16=False,
        # transformers 5 renamed gradient_checkpointing; set the new name so TRL's default (on)
        # can never win through the alias.
        activation_checkpointing=g.gradient_checkpointing,
        # Bookkeeping: log every step to our files, checkpoint as configured, nothing to the hub.
        logging_steps=cfg.logging.logging_steps,
        save_strategy="steps",
        save_steps=cfg.logging.save_steps,
        save_total_limit=cfg.logging.save_total_limit,
        save_only_model=False,  # optimizer, scheduler and RNG states are needed to resume
        report_to="none",  # trackers are fed our metrics.jsonl rows by trainer/tracking.py
        disable_tqdm=True,
        log_completions=False,
        remove_unused_columns=False,  # reward functions read dataset columns such as `answer`
        dataloader_num_workers=0,
        push_to_hub=False,
    )
    return kwargs


def grpo_config_from(kwargs: dict[str, Any]) -> GRPOConfig:
    """The ``trl.GRPOConfig`` of ``grpo_kwargs``' result; what TRL/transformers reject (bf16 without
    hardware support, ...) is a ConfigError (exit 2), raised before the run directory is written."""
    from trl.trainer.grpo_config import GRPOConfig  # noqa: PLC0415 - lazy: grpo_kwargs is pure Python, tested without trl

    try:
        return GRPOConfig(**kwargs)
    except ValueError as err:
        raise ConfigError(
            f"TRL rejects this config: {err}",
            key="grpo",
            hint="change the `grpo` setting it names (e.g. bf16: false where the hardware has no "
            "bf16 support)",
        ) from err
