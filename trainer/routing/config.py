"""The ``routing`` section of RunConfig (pure pydantic, no torch): present means enabled.

``mode`` chooses what trains: ``classic`` / ``exclusive`` (two routed adapters) or ``baseline`` (one
plain LoRA of rank ``retain_rank + forget_rank`` and alpha ``retain_alpha + forget_alpha``, so with
equal alpha/rank ratios its scaling equals each routed adapter's; the base model stays frozen in all
three). A spec comparing routing with its baseline then differs in ``routing.mode`` alone.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sweepgen_trainer import rewards
from sweepgen_trainer.routing import detectors

LLAMA_LINEARS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, strict=True, allow_inf_nan=False)


class DetectorConfig(_Section):
    """Which completions are reward hacks; computed per completion together with the rewards."""

    name: str = Field(
        description="detector from sweepgen_trainer.routing.detectors.DETECTORS: "
        "`happy_count` (word count above threshold) or `reward_above` (any reward)"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters; defaults filled in")

    @model_validator(mode="after")
    def _known_detector(self) -> DetectorConfig:
        object.__setattr__(self, "params", detectors.resolve_params(self.name, self.params))
        return self


class TaskRewardConfig(_Section):
    """The reward that measures the intended task (without the hackable bonus), for routing eval."""

    name: str = Field(description="reward from sweepgen_trainer.rewards.REWARDS")
    params: dict[str, Any] = Field(default_factory=dict, description="its parameters; defaults filled in")

    @model_validator(mode="after")
    def _known_reward(self) -> TaskRewardConfig:
        params = rewards.resolve_full(self.name, self.params)
        object.__setattr__(self, "params", params)
        return self


class RoutingConfig(_Section):
    """Gradient routing: retain/forget LoRA adapters; hacked samples update only the forget adapter."""

    mode: Literal["classic", "exclusive", "baseline"] = Field(
        description="classic: hacked samples update forget only, clean ones both; exclusive: hacked "
        "update forget only, clean update retain only; baseline: one plain LoRA, no routing"
    )
    detector: DetectorConfig = Field(description="reward-hacking detector (sets is_hack per completion)")
    task_reward: TaskRewardConfig = Field(description="task reward reported by the routing eval")
    retain_rank: int = Field(8, ge=1, description="rank of the retain adapter")
    retain_alpha: float = Field(
        16.0, gt=0, description="LoRA alpha of the retain adapter (scaling alpha/rank)"
    )
    forget_rank: int = Field(8, ge=1, description="rank of the forget adapter")
    forget_alpha: float = Field(16.0, gt=0, description="LoRA alpha of the forget adapter")
    target_modules: list[str] = Field(
        default_factory=lambda: list(LLAMA_LINEARS),
        min_length=1,
        description="names of the linear layers that get adapters (a name matching none is an error)",
    )
    eval_every: int = Field(
        0, ge=0, description="run the three-mode routing eval every N steps (0: only at the end)"
    )
    eval_prompts: int = Field(
        16, ge=1, description="eval prompts: the first N rows of the dataset, in file order"
    )
    eval_data: str | None = Field(
        None,
        description="held-out eval prompts: a .jsonl file (relative to the working directory) with the "
        "training data's prompt field and the columns the rewards read; unset: the first eval_prompts "
        "rows of the training data, which training also sees (summary.json says which was used)",
    )
    eval_generations: int = Field(4, ge=1, description="completions sampled per eval prompt and mode")
    eval_temperature: float = Field(1.0, gt=0, description="sampling temperature of eval completions")

    @model_validator(mode="after")
    def _eval_data_is_jsonl(self) -> RoutingConfig:
        if self.eval_data is not None and not self.eval_data.endswith(".jsonl"):
            raise ValueError(f"routing.eval_data {self.eval_data!r} must be a .jsonl file")
        return self

    def adapter_ranks(self) -> dict[str, int]:
        """Ranks per adapter as built; baseline has one adapter (named retain) and no forget."""
        if self.mode == "baseline":
            return {"retain": self.retain_rank + self.forget_rank, "forget": 0}
        return {"retain": self.retain_rank, "forget": self.forget_rank}

    def adapter_alphas(self) -> dict[str, float]:
        if self.mode == "baseline":
            return {"retain": self.retain_alpha + self.forget_alpha, "forget": 0.0}
        return {"retain": self.retain_alpha, "forget": self.forget_alpha}

    def eval_modes(self) -> dict[str, tuple[float, float]]:
        """Eval mode -> (retain scale, forget scale); a baseline has only its one adapter on."""
        if self.mode == "baseline":
            return {"both": (1.0, 1.0)}
        return {"both": (1.0, 1.0), "retain_only": (1.0, 0.0), "forget_only": (0.0, 1.0)}
