"""The ``reward_shaping`` section of a trainer config (pure pydantic: no torch at import).

``strategy`` and ``params`` are checked against the registry when the config is loaded, so a typo
fails at ``sweepgen check`` instead of hours into a run; the resolved params carry every default.
The cross-section rule (COMA's ``n_rollouts_per_prompt`` equals ``grpo.num_generations``) lives in
:func:`check_group_size`, which RunConfig calls because only it sees both sections.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trainer.shaping import registry


class RewardShapingConfig(BaseModel):
    """Which reward-shaping strategy turns debate rewards into per-role advantages."""

    model_config = ConfigDict(extra="forbid", strict=True)

    strategy: str = Field(
        description="one of: " + ", ".join(f"{s.name} ({s.help})" for s in registry.STRATEGIES.values()),
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the strategy's parameters; unknown ones are rejected, defaults are written out",
    )

    @model_validator(mode="after")
    def _resolve(self) -> RewardShapingConfig:
        # Resolving here (not at training time) makes a bad strategy a config error with a location.
        self.params = registry.resolve(self.strategy, self.params)
        return self


def check_group_size(shaping: RewardShapingConfig | None, num_generations: int) -> None:
    """COMA's leave-one-out groups must be the GRPO groups; a mismatch would silently mis-baseline."""
    if shaping is None or shaping.strategy != "coma_advantage":
        return
    n = shaping.params["n_rollouts_per_prompt"]
    if n != num_generations:
        raise ValueError(
            f"reward_shaping.params.n_rollouts_per_prompt is {n} but grpo.num_generations is "
            f"{num_generations}; the COMA baseline is taken over the GRPO group, "
            "so set both to the same value"
        )
