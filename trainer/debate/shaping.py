"""The registry of reward-shaping strategies: names, parameters, and the one place that checks them.

``resolve(name, params)`` is what the config model and the trainer call. Parameters are strict
pydantic models checked by sweepgen_trainer.registry (the mechanism the rewards and detectors share): an
unknown strategy, an unknown or missing parameter, a wrong type or an out-of-range value is a
``ValueError`` whose message lists what exists, so pydantic reports it at the config's
``reward_shaping`` key (and ``sweepgen check`` at the spec's file:line:col). The returned parameters
have every default written out, so the resolved config in the run directory shows the whole truth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pydantic

from sweepgen_trainer import registry
from sweepgen_trainer.debate import strategies
from sweepgen_trainer.debate.group import (
    Group,
    RoleValues,
    TurnValues,
    batch_normalize,
    group_normalize,
    role_to_turns,
    sample_std,
    turns_to_roles,
)


class ShapingParamError(ValueError):
    """A strategy name or its parameters are wrong; the message lists what exists."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class _NoParams(pydantic.BaseModel):
    model_config = registry.STRICT_PARAMS


class _DifferenceParams(_NoParams):
    default_text: str = pydantic.Field(
        "", description="what the declared default action says in each of the role's turns ('': nothing)"
    )


class _ComaParams(_NoParams):
    counterfactuals: int = pydantic.Field(
        ge=1,
        le=64,
        description="K: alternative turns sampled per turn of every debate, each followed by the rest "
        "of the debate regenerated (cost: about 1 + K·(T+1)/2 times the generation of plain GRPO)",
    )


class _PotentialParams(_NoParams):
    gamma: float = pydantic.Field(gt=0, le=1, allow_inf_nan=False, description="γ in F = γ·Φ(s') − Φ(s)")
    potential_type: Literal["debate_length", "answer_correct"] = pydantic.Field(
        description="the potential Φ: debate_length (tokens so far / length_scale) or answer_correct "
        "(the score of the latest turn)"
    )
    length_scale: float = pydantic.Field(
        100.0, gt=0, allow_inf_nan=False, description="tokens per unit of the debate_length potential"
    )


class _LeaveOneOutParams(_NoParams):
    n_rollouts_per_prompt: int = pydantic.Field(
        ge=2, description="rollouts per prompt; must equal grpo.num_generations"
    )


class _MixingParams(_NoParams):
    alpha: float = pydantic.Field(
        ge=0, le=1, allow_inf_nan=False, description="weight of the individual reward I^role"
    )


@dataclass(frozen=True)
class Strategy:
    name: str
    fn: Callable[..., list[Any]]
    kind: Literal["reward", "advantage"]
    params_model: type[pydantic.BaseModel]
    help: str
    # what the rollout must play besides the debates: nothing, K policy samples per turn, or the
    # default action per turn (each followed by the rest of the debate regenerated); turn-level
    # strategies return one value per turn (TurnValues), the others one per role (RoleValues)
    counterfactuals: Literal["none", "sample", "default"] = "none"

    @property
    def per_turn(self) -> bool:
        return self.counterfactuals != "none"


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "identity", strategies.identity, "reward", _NoParams, "team reward G for every role (plain GRPO)"
        ),
        Strategy(
            "difference_rewards",
            strategies.difference_rewards,
            "reward",
            _DifferenceParams,
            "per turn: G(z) − G(z with the turn replaced by the default action and every later turn "
            "regenerated)",
            counterfactuals="default",
        ),
        Strategy(
            "difference_rewards_rescore",
            strategies.difference_rewards_rescore,
            "reward",
            _DifferenceParams,
            "G(z) − G(z with the role's turns replaced by the default action), re-scored without "
            "regenerating: blind to a turn whose effect is downstream (the critic gets 0)",
        ),
        Strategy(
            "potential_based",
            strategies.potential_based,
            "reward",
            _PotentialParams,
            "G plus potential-based shaping per turn, Φ(terminal) = 0",
        ),
        Strategy(
            "coma",
            strategies.coma,
            "advantage",
            _ComaParams,
            "per turn: G minus the mean G of K debates in which the turn is sampled again from the "
            "policy given the same history and every later turn regenerated (COMA, eq. 4)",
            counterfactuals="sample",
        ),
        Strategy(
            "coma_rescore",
            strategies.coma_rescore,
            "advantage",
            _NoParams,
            "G minus the mean G over the group's other samples of the role's turns, re-scored without "
            "regenerating: blind to a turn whose effect is downstream (the critic gets 0)",
        ),
        Strategy(
            "leave_one_out",
            strategies.leave_one_out,
            "advantage",
            _LeaveOneOutParams,
            "G minus the mean G of the other rollouts of the same prompt, same for every role",
        ),
        Strategy(
            "reward_mixing",
            strategies.reward_mixing,
            "reward",
            _MixingParams,
            "alpha·I^role + (1 − alpha)·G",
        ),
    )
}

# Names that existed once and now mean something else: an error that says what to write instead.
RENAMED = {
    "coma_advantage": "it was a leave-one-out baseline, now `leave_one_out`; COMA's per-role "
    "counterfactual baseline is `coma`",
}

KIND, PLURAL = "reward-shaping strategy", "reward-shaping strategies"


def resolve(name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check ``params`` against strategy ``name`` (registry.py); return them with defaults filled in."""
    get(name)
    return registry.resolve_params(KIND, PLURAL, STRATEGIES, name, params, ShapingParamError)


def get(name: str) -> Strategy:
    if name in RENAMED:
        raise ShapingParamError(f"{KIND} `{name}` no longer exists: {RENAMED[name]}", key="strategy")
    strategy: Strategy = registry.lookup(KIND, PLURAL, STRATEGIES, name, ShapingParamError)
    return strategy


def shaped_values(group: Group, name: str, params: Mapping[str, Any]) -> list[RoleValues]:
    """The strategy's raw per-role values for one group (rewards or advantages, by its kind); for a
    per-turn strategy, each role's mean over its turns."""
    strategy = get(name)
    values = strategy.fn(group, **resolve(name, params))
    if not strategy.per_turn:
        return values
    return [turns_to_roles(v, turns, group.roles) for v, turns in zip(values, group.rollouts, strict=True)]


def advantages(
    groups: Sequence[Group], name: str, params: Mapping[str, Any], scale: str
) -> list[list[RoleValues]]:
    """Per-role advantages of every rollout of every group (for a per-turn strategy, each role's mean
    over its turns of :func:`turn_advantages`)."""
    strategy = get(name)
    if strategy.per_turn:
        turn_level = turn_advantages(groups, name, params, scale)
        return [
            [turns_to_roles(v, turns, g.roles) for v, turns in zip(values, g.rollouts, strict=True)]
            for values, g in zip(turn_level, groups, strict=True)
        ]
    values = [strategy.fn(group, **resolve(name, params)) for group in groups]
    if strategy.kind == "advantage":
        return _scale_advantages(groups, values, scale)
    roles = groups[0].roles if groups else ()
    if scale == "batch":
        return batch_normalize(values, roles)
    return [group_normalize(v, roles, scale) for v in values]


def turn_advantages(
    groups: Sequence[Group], name: str, params: Mapping[str, Any], scale: str
) -> list[list[TurnValues]]:
    """The advantage of every turn of every rollout: what the trainer applies to the turn's tokens.

    ``reward`` strategies go through GRPO's normalization per column (``scale`` is the trainer's
    ``scale_rewards``: ``group``, ``batch`` or ``none``): a role-level strategy per role, exactly as
    plain GRPO does for one reward, a per-turn one per turn position. ``advantage`` strategies carry
    their own baseline; ``scale`` divides them by the std of the team reward G (of the group, or of
    the batch; ``none``: as they are), the unit GRPO's advantages are in.
    """
    strategy = get(name)
    if not strategy.per_turn:
        return [
            [role_to_turns(v, turns) for v, turns in zip(values, g.rollouts, strict=True)]
            for values, g in zip(advantages(groups, name, params, scale), groups, strict=True)
        ]
    resolved = resolve(name, params)
    columns = [[_columns(v) for v in strategy.fn(group, **resolved)] for group in groups]
    keys = tuple(columns[0][0]) if groups else ()
    if strategy.kind == "advantage":
        scaled = _scale_advantages(groups, columns, scale, pooled=True)
    elif scale == "batch":
        scaled = batch_normalize(columns, keys)
    else:
        scaled = [group_normalize(v, keys, scale) for v in columns]
    return [[[row[k] for k in keys] for row in group] for group in scaled]


def _pooled_rewards(group: Group) -> list[float]:
    cf = [group.team_score(z) for row in group.counterfactuals for per_turn in row for z in per_turn]
    return group.team_rewards() + [float(x) for x in cf]


def _columns(values: TurnValues) -> RoleValues:
    # per-turn values as columns keyed by turn position, so GRPO's per-column normalization applies
    return {str(t): float(v) for t, v in enumerate(values)}


def _scale_advantages(
    groups: Sequence[Group], values: list[list[RoleValues]], scale: str, *, pooled: bool = False
) -> list[list[RoleValues]]:
    """Advantage-kind values divided by the std of G (+1e-4, TRL's epsilon), per ``scale``.

    ``pooled``: the std of every team reward the estimate used, the debates' and their
    counterfactuals' together. A regenerating estimator's advantage is non-zero when a counterfactual
    scored differently, even in a group whose debates all scored the same; dividing by those debates'
    std (0) would blow it up by 1e4, and the pooled std is never 0 when an advantage is not."""
    if scale == "none":
        return values
    if scale not in ("group", "batch"):
        raise ValueError(f"unknown scale {scale!r}; use 'group', 'batch' or 'none'")
    team = [_pooled_rewards(g) if pooled else g.team_rewards() for g in groups]
    batch_std = sample_std([r for rewards in team for r in rewards])
    out = []
    for rewards, group_values in zip(team, values, strict=True):
        std = sample_std(rewards) if scale == "group" else batch_std
        out.append([{role: v / (std + 1e-4) for role, v in row.items()} for row in group_values])
    return out
