"""SweepgenGRPOTrainer: TRL's GRPOTrainer plus our run-directory outputs and divergence checks.

It changes nothing about training: generation, rewards, advantages and the loss are TRL's (the
equivalence test holds that). What it adds:
  - after each logging step, one row in metrics.jsonl and the step's completions in samples.jsonl;
  - NaN/inf in a reward or the loss stops the run with TrainingDiverged.

Parts that need their own behaviour (gradient routing, debate rollouts) subclass SweepgenGRPOTrainer
and override the hooks marked "extension point"; ``trainer.run.select_trainer_class`` is the one
place that picks the class (one branch per section).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from transformers.trainer_callback import PrinterCallback
from trl import GRPOTrainer

from trainer import rewards
from trainer.outputs import RunDir, TrainingDiverged
from trainer.resume_sampler import EpochSeededRepeatSampler

if TYPE_CHECKING:  # annotations only: at run time this module does not depend on the config model
    from trainer.config import RunConfig

# TRL log key -> our metrics.jsonl key (docs/ARCHITECTURE.md); other TRL keys are kept verbatim.
RENAMES = {
    "reward": "reward_mean",
    "reward_std": "reward_std",
    "kl": "kl",
    "loss": "loss",
    "entropy": "entropy",
    "completions/mean_length": "completion_length",
    "step_time": "step_time",
}


class SweepgenGRPOTrainer(GRPOTrainer):
    def __init__(
        self,
        *args: Any,
        run_config: RunConfig,
        run_dir: RunDir,
        elapsed_offset: float = 0.0,
        on_step: Callable[[dict], None] | None = None,
        **kwargs: Any,
    ) -> None:
        self.run_config = run_config
        self.run_dir = run_dir
        self.on_step = on_step
        self._elapsed_offset = elapsed_offset
        self._session_start = time.monotonic()
        super().__init__(*args, **kwargs)
        # With tqdm off, transformers prints every log dict; our on_step line replaces that.

        self.remove_callback(PrinterCallback)

    # ---- extension points (classmethods: used before the instance exists) -------------------
    @classmethod
    def rewards_for(cls, cfg: RunConfig) -> list[Callable]:
        """The reward functions handed to TRL. Extension point."""
        return [rewards.bind(cfg.reward.name, cfg.reward.params)]

    @classmethod
    def extra_init_kwargs(cls, cfg: RunConfig) -> dict[str, Any]:
        """More GRPOTrainer arguments (``peft_config``, ``rollout_func``, ...). Extension point."""
        return {}

    def metrics_row(self, logs: dict[str, Any]) -> dict[str, Any]:
        """One metrics.jsonl row from TRL's averaged logs. Extension point: add keys, keep these."""
        row: dict[str, Any] = {"step": self.state.global_step}
        for trl_key, ours in RENAMES.items():
            row[ours] = logs.get(trl_key)  # None, e.g. kl when beta == 0 (TRL does not compute it)
        for key, value in logs.items():
            if key not in RENAMES and isinstance(value, (int, float)):
                row[key] = value
        # Completions cut at grpo.max_completion_length (no EOS) are scored on the cut text: say how many.
        row["truncated_fraction"] = logs.get("completions/clipped_ratio")
        row["elapsed_s"] = self._elapsed_offset + time.monotonic() - self._session_start
        return row

    def sample_rows(self) -> list[dict[str, Any]]:
        """The last generation batch's completions with their (weighted) rewards. Extension point."""
        logs: dict[str, Any] = self._logs  # TRL types it loosely (Collection)
        names = self.reward_func_names
        weights = self.reward_weights.tolist()
        step = self.state.global_step
        rows = []
        for i, (prompt, completion) in enumerate(zip(logs["prompt"], logs["completion"])):
            per_func = {name: logs["rewards"][name][i] for name in names}
            row = {
                "step": step,
                "prompt": prompt,
                "completion": completion,
                "reward": sum(w * per_func[n] for w, n in zip(weights, names)),
                "advantage": logs["advantages"][i],
            }
            if len(names) > 1:
                row["rewards"] = per_func
            rows.append(row)
        limit = self.run_config.logging.samples_per_log
        return rows if limit is None else rows[:limit]

    def summary_extras(self) -> dict[str, Any]:
        """Extra keys for summary.json (e.g. routing eval results). Extension point."""
        return {}

    # ---- TRL overrides -----------------------------------------------------------------------
    def _get_train_sampler(self, dataset=None):
        # TRL's sampler with the same arguments, made resumable past the first epoch (resume_sampler.py)

        sampler = super()._get_train_sampler(dataset)
        resumable = EpochSeededRepeatSampler.__new__(EpochSeededRepeatSampler)
        resumable.__dict__.update(sampler.__dict__)
        return resumable

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        if not torch.isfinite(rewards_per_func).all():
            bad = [
                name
                for i, name in enumerate(self.reward_func_names)
                if not torch.isfinite(rewards_per_func[:, i]).all()
            ]
            raise TrainingDiverged(
                f"reward {', '.join(bad)} returned NaN or inf at step {self.state.global_step}",
                key="reward",
                hint="a reward function must return a finite float for every completion",
            )
        return rewards_per_func

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        if not math.isfinite(float(loss)):
            raise TrainingDiverged(
                f"loss is {float(loss)} at step {self.state.global_step + 1}",
                key="grpo.learning_rate",
                hint="training diverged; lower grpo.learning_rate, keep grpo.max_grad_norm > 0, "
                "or check the reward scale",
            )
        return loss

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        super().log(logs, start_time)  # merges TRL's averaged metrics into `logs`
        if "loss" not in logs or not getattr(self.model, "training", False):
            return  # the end-of-training summary log, or an eval log
        # With num_iterations > 1 only every num_iterations-th step generates: the others log a loss
        # but no reward (reward_mean None) and write no samples (they would repeat the last batch).
        row = self.metrics_row(logs)
        self.run_dir.append(self.run_dir.metrics, [row])
        if "reward" in logs:
            self.run_dir.append(self.run_dir.samples, self.sample_rows())
        if self.on_step is not None:
            self.on_step(row)
