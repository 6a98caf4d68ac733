"""SweepgenGRPOTrainer: TRL's GRPOTrainer plus our run-directory outputs and divergence checks.

It changes nothing about training: generation, rewards, advantages and the loss are TRL's (the
equivalence test holds that). Its features reach TRL through TRL's public arguments:
  - ``callbacks=``: ``RunOutputsCallback`` writes, after each logging step, one row in metrics.jsonl
    and the step's completions in samples.jsonl (and hands the row to ``on_step``);
  - ``reward_funcs=``: each reward function refuses a NaN/inf/None value itself (rewards.bind);
  - ``rollout_func=`` and more through ``extra_init_kwargs`` (debate).
Only two TRL methods are overridden, each because no public argument or callback reaches it:
``_get_train_sampler`` (the resumable prompt order) and ``training_step`` (NaN/inf loss stops the
run before the optimizer applies it); docs/TRAINER.md lists every override of TRL internals with the
TRL version it was checked against, and a test holds each to that version's source.

Parts that change the loss or the rollout's batch (gradient routing, debate advantages) subclass
SweepgenGRPOTrainer and override the hooks marked "extension point"; ``run.select_trainer_class``
is the one place that picks the class (one branch per section).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from transformers.trainer_callback import PrinterCallback, TrainerCallback
from trl.trainer.grpo_trainer import GRPOTrainer

from sweepgen_trainer import rewards
from sweepgen_trainer.rundir.outputs import RunDir, TrainingDiverged
from sweepgen_trainer.training.resume_sampler import EpochSeededRepeatSampler
from sweepgen_trainer.training.step_clock import StepClock

if TYPE_CHECKING:  # annotations only: at run time this module does not depend on the config model
    import torch
    from datasets import Dataset
    from torch import nn
    from torch.utils.data import Sampler
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from sweepgen_trainer.config import RunConfig

# A reward function as TRL's ``reward_funcs=`` calls it: prompts, completions and the dataset
# columns by keyword, one float per completion.
RewardFunc = Callable[..., list[float]]
# TRL's ``training_step`` (trl/trainer/grpo_trainer.py) is not annotated; its base in transformers is.
TrainingStep = Callable[["nn.Module", dict[str, Any], "torch.Tensor | int | None"], "torch.Tensor"]
ComputeLoss = Callable[..., "torch.Tensor"]

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
    # the last finished step's time/* columns (StepClockCallback replaces it at each step's end)
    step_times: dict[str, float | None] = {}  # replaced at each step, never mutated

    def __init__(
        self,
        *args: Any,
        run_config: RunConfig,
        run_dir: RunDir,
        elapsed_offset: float = 0.0,
        on_step: Callable[[dict[str, Any]], None] | None = None,
        **kwargs: Any,
    ) -> None:
        self.run_config = run_config
        self.run_dir = run_dir
        self.on_step = on_step
        self._elapsed_offset = elapsed_offset
        self._session_start = time.monotonic()
        self.clock = StepClock(cuda=False)  # on CUDA events once the device is known (_time_phases)
        kwargs["reward_funcs"] = [self._timed_reward(f) for f in kwargs.get("reward_funcs") or ()]
        callbacks = [StepClockCallback(self), RunOutputsCallback(self)]
        kwargs["callbacks"] = [*(kwargs.get("callbacks") or ()), *callbacks]
        super().__init__(*args, **kwargs)
        # With tqdm off, transformers prints every log dict; our on_step line replaces that.
        self.remove_callback(PrinterCallback)
        self._time_phases()

    def _timed_reward(self, func: Any) -> Any:
        if not callable(func) or hasattr(func, "forward"):  # a reward model: timed with the rest
            return func
        return self.clock.timed("reward", func)

    def _time_phases(self) -> None:
        """Stamps for the phases that no method of ours runs: our model's generation and the
        reference model's forward passes (timing only: arguments and results pass through)."""
        self.clock.cuda = self.accelerator.device.type == "cuda"
        for name in ("generate", "generate_batch"):
            method = getattr(self.model, name, None)
            if method is not None:
                object.__setattr__(self.model, name, self.clock.timed("generation", method))
        if self.ref_model is not None:
            self.ref_model.register_forward_pre_hook(lambda *_: self.clock.start("ref_logprobs"))
            self.ref_model.register_forward_hook(lambda *_: self.clock.stop("ref_logprobs"))

    # ---- extension points (classmethods: used before the instance exists) -------------------
    @classmethod
    def rewards_for(cls, cfg: RunConfig) -> list[RewardFunc]:
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
        row.update(self.step_times)  # time/*: where this step's time went (step_clock.py)
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

    # ---- TRL overrides: no public argument or callback reaches these ------------------------
    def _get_train_sampler(self, dataset: Dataset | None = None) -> Sampler[int]:
        # Kept: TRL builds its RepeatSampler here and takes no sampler argument. Ours is built by
        # RepeatSampler's own constructor from the arguments TRL chose, and resumes past the first
        # epoch in the uninterrupted order (resume_sampler.py).
        return EpochSeededRepeatSampler.like(super()._get_train_sampler(dataset))

    def training_step(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        # Kept: no callback sees a micro-batch's loss, and it must stop before the optimizer steps on it.
        self.clock.start("prepare")
        loss = cast(TrainingStep, super().training_step)(model, inputs, num_items_in_batch)
        self.clock.stop("backward")
        self.clock.start("optimizer")  # the last micro-batch's start is the one that counts
        if not math.isfinite(float(loss)):
            raise TrainingDiverged(
                f"loss is {float(loss)} at step {self.state.global_step + 1}",
                key="grpo.learning_rate",
                hint="training diverged; lower grpo.learning_rate, keep grpo.max_grad_norm > 0, "
                "or check the reward scale",
            )
        return loss

    def compute_loss(
        self,
        model: nn.Module,
        inputs: dict[str, torch.Tensor | Any],
        return_outputs: bool = False,
        num_items_in_batch: torch.Tensor | int | None = None,
    ) -> torch.Tensor:
        # Kept: timing only; transformers' training_step calls it between input preparation
        # (generation, rewards) and backward, the one boundary no callback marks.
        self.clock.stop("prepare")
        self.clock.start("loss_forward")
        loss = cast(ComputeLoss, super().compute_loss)(model, inputs, return_outputs, num_items_in_batch)
        self.clock.stop("loss_forward")
        self.clock.start("backward")
        return loss


class StepClockCallback(TrainerCallback):
    """The optimizer step's boundaries for ``StepClock`` (transformers' public callback events)."""

    def __init__(self, trainer: SweepgenGRPOTrainer) -> None:
        self.trainer = trainer

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.trainer.clock.step_begin()

    def on_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.trainer.clock.stop("optimizer")

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self.trainer.step_times = self.trainer.clock.close()


class RunOutputsCallback(TrainerCallback):
    """metrics.jsonl and samples.jsonl rows from TRL's logs, through transformers' ``on_log``.

    TRL has merged its averaged metrics into ``logs`` before the callbacks see it. The rows come from
    the trainer's extension points (``metrics_row``, ``sample_rows``), so subclasses add their keys."""

    def __init__(self, trainer: SweepgenGRPOTrainer) -> None:
        self.trainer = trainer

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        t = self.trainer
        if logs is None or "loss" not in logs or not getattr(t.model, "training", False):
            return  # the end-of-training summary log, or an eval log
        if not state.is_world_process_zero:
            return  # under DDP every rank holds the same gathered logs: rank 0 writes them once
        # With num_iterations > 1 only every num_iterations-th step generates: the others log a loss
        # but no reward (reward_mean None) and write no samples (they would repeat the last batch).
        row = t.metrics_row(logs)
        t.run_dir.append(t.run_dir.metrics, [row])
        if "reward" in logs:
            t.run_dir.append(t.run_dir.samples, t.sample_rows())
        if t.on_step is not None:
            t.on_step(row)
