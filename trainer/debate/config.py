"""The ``debate`` and ``reward_shaping`` sections of a trainer config (pure pydantic: no torch at import).

A debate is ``max_turns`` turns in which the policy alternately plays the solver and the critic,
starting and ending with the solver; the last turn is the solver's final answer, which the team
reward scores. Each turn is introduced by a role prompt (inserted text, never trained on) and is at
most ``max_turn_tokens`` generated tokens long.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sweepgen_trainer.debate import shaping as registry
from sweepgen_trainer.debate.group import ROLES
from sweepgen_trainer.registry import KeyedValueError


class DebateConfig(BaseModel):
    """Two-role debate rollouts: solver, critic, ..., solver's final answer."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    max_turns: int = Field(
        3, ge=1, description="turns per debate, odd: solver, critic, ..., solver's final answer"
    )
    max_turn_tokens: int = Field(16, ge=1, description="most tokens the policy generates per turn")
    solver_prompt: str = Field(
        " ", description="text inserted before each solver turn except the last (after the question)"
    )
    critic_prompt: str = Field("\nCritic: the answer is", description="text inserted before each critic turn")
    final_prompt: str = Field(
        "\nFinal answer:", description="text inserted before the solver's final turn (the scored one)"
    )

    @model_validator(mode="after")
    def _solver_speaks_last(self) -> DebateConfig:
        if self.max_turns % 2 == 0:
            raise KeyedValueError(
                f"debate.max_turns is {self.max_turns}; it must be odd so that the solver gives the "
                f"final answer (1: answer only, 3: solver, critic, final answer, 5: ...)",
                key="max_turns",
            )
        return self

    def schedule(self) -> list[tuple[str, str]]:
        """(role, role prompt) of every turn, in order."""
        turns = []
        for t in range(self.max_turns):
            role = ROLES[t % 2]
            if t == self.max_turns - 1:
                prompt = self.final_prompt
            else:
                prompt = self.solver_prompt if role == "solver" else self.critic_prompt
            turns.append((role, prompt))
        return turns


def check_against_grpo(
    debate: DebateConfig | None, shaping: object | None, max_completion_length: int
) -> None:
    """Cross-section rules RunConfig calls: debate and reward_shaping come together, lengths fit.

    ``grpo.max_completion_length`` is the budget of one whole transcript; a debate that could exceed
    it would be cut silently, so the config is rejected instead.
    """
    if (debate is None) != (shaping is None):
        missing, present = ("reward_shaping", "debate") if shaping is None else ("debate", "reward_shaping")
        raise KeyedValueError(
            f"`{present}` is set but `{missing}` is not; debates need a reward-shaping strategy and the "
            "strategies only apply to debates (use reward_shaping.strategy: identity for plain GRPO)",
            key=present,
        )
    if debate is None:
        return
    budget = debate.max_turns * debate.max_turn_tokens
    if budget > max_completion_length:
        raise KeyedValueError(
            f"a debate generates up to debate.max_turns × debate.max_turn_tokens = {budget} tokens, more "
            f"than grpo.max_completion_length = {max_completion_length}; raise max_completion_length or "
            "lower the turn budget",
            key="debate.max_turn_tokens",
        )


class RewardShapingConfig(BaseModel):
    """Which reward-shaping strategy turns debate rewards into per-role advantages."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

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
    """The leave-one-out groups must be the GRPO groups; a mismatch would silently mis-baseline."""
    if shaping is None or shaping.strategy != "leave_one_out":
        return
    n = shaping.params["n_rollouts_per_prompt"]
    if n != num_generations:
        raise KeyedValueError(
            f"reward_shaping.params.n_rollouts_per_prompt is {n} but grpo.num_generations is "
            f"{num_generations}; the leave-one-out baseline is taken over the GRPO group, "
            "so set both to the same value",
            key="reward_shaping.params.n_rollouts_per_prompt",
        )


def shaping_warnings(
    shaping: RewardShapingConfig | None, debate: DebateConfig | None = None, num_generations: int = 2
) -> list[str]:
    """What a run with this shaping must say at start: choices that are valid but change what it means,
    above all a strategy that, under this config, reduces to another one (so the arm cannot differ)."""
    if shaping is None:
        return []
    name, params = shaping.strategy, shaping.params
    out = []
    if name == "potential_based" and params["gamma"] != 1.0:
        gamma = params["gamma"]
        out.append(
            f"reward_shaping.params.gamma is {gamma}, not 1: potential-based shaping keeps the optimal "
            "policy only when gamma is the discount of the return (Ng, Harada & Russell 1999), and GRPO's "
            f"returns are undiscounted, so policy invariance does not hold here; the shaping adds "
            f"({gamma} − 1)·Φ for every intermediate state, a penalty on long debates"
        )
    if name == "potential_based" and params["gamma"] == 1.0:
        out.append(
            "potential_based with gamma 1 reduces to identity: the shaped return is G − Φ(s_0), and Φ(s_0) "
            "is the same for every debate of a prompt, so the GRPO advantages are identity's exactly"
        )
    if name == "reward_mixing" and params["alpha"] == 0.0:
        out.append("reward_mixing with alpha 0 reduces to identity: every role gets the team reward G")
    if name == "leave_one_out":
        out.append(
            f"leave_one_out reduces to identity with a larger step: its advantage is n/(n−1) = "
            f"{num_generations}/{num_generations - 1} times identity's (G_i − mean_j G_j, same std scaling)"
        )
    if name in ("coma_rescore", "difference_rewards_rescore"):
        out.append(
            f"{name} re-scores counterfactuals without regenerating the turns after them, and the team "
            "reward reads only the solver's final answer: the critic's value is exactly 0 in every rollout, "
            "so this arm trains the solver only and cannot credit the critic (coma_rescore and "
            "difference_rewards_rescore are then the same run); use coma or difference_rewards"
        )
    if name == "difference_rewards" and debate is not None and debate.max_turns == 1:
        out.append(
            "difference_rewards with debate.max_turns 1 reduces to identity: the only turn is the final "
            "answer, whose default action scores the same for every debate of a prompt, so D = G − constant"
        )
    return out
