"""The registry of reward-shaping strategies: names, parameters, and the one place that checks them.

``resolve(name, params)`` is what the config model and the trainer call: an unknown strategy, an
unknown or missing parameter, a wrong type or an out-of-range value is a ``ValueError`` whose message
lists what exists, so pydantic reports it at the config's ``reward_shaping`` key (and ``sweepgen
check`` at the spec's file:line:col). The returned parameters have every default written out, so the
resolved config in the run directory shows the whole truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from trainer.debate import strategies
from trainer.debate.group import Group, RoleValues, batch_normalize, group_normalize, sample_std


@dataclass(frozen=True)
class Param:
    """One parameter of a strategy. ``check`` returns an error message for a bad value, else None."""

    name: str
    type: type
    help: str
    required: bool = True
    default: Any = None
    choices: tuple[Any, ...] | None = None
    check: Callable[[Any], str | None] | None = None


@dataclass(frozen=True)
class Strategy:
    name: str
    fn: Callable[..., list[RoleValues]]
    kind: Literal["reward", "advantage"]
    params: tuple[Param, ...]
    help: str


def _in_unit(value: float) -> str | None:
    return None if 0.0 <= value <= 1.0 else "must be between 0 and 1"


def _gamma(value: float) -> str | None:
    return None if 0.0 < value <= 1.0 else "must be in (0, 1]"


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


def _at_least_two(value: int) -> str | None:
    return None if value >= 2 else "must be at least 2 (a leave-one-out baseline needs another rollout)"


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("identity", strategies.identity, "reward", (), "team reward G for every role (plain GRPO)"),
        Strategy(
            "difference_rewards",
            strategies.difference_rewards,
            "reward",
            (
                Param(
                    "default_text",
                    str,
                    "what the declared default action says in each of the role's turns ('': nothing)",
                    required=False,
                    default="",
                ),
            ),
            "G(z) − G(z with the role's turns replaced by the default action); the answer is the solver's",
        ),
        Strategy(
            "potential_based",
            strategies.potential_based,
            "reward",
            (
                Param("gamma", float, "discount in F = gamma·Φ(s') − Φ(s)", check=_gamma),
                Param("potential_type", str, "the potential Φ", choices=tuple(strategies.POTENTIALS)),
                Param(
                    "length_scale",
                    float,
                    "tokens per unit of the debate_length potential",
                    required=False,
                    default=100.0,
                    check=_positive,
                ),
            ),
            "G plus potential-based shaping per turn, Φ(terminal) = 0",
        ),
        Strategy(
            "coma",
            strategies.coma,
            "advantage",
            (),
            "G minus the mean G over the group's samples of the role's own turns, the other role's "
            "fixed (COMA's counterfactual baseline, per role)",
        ),
        Strategy(
            "leave_one_out",
            strategies.leave_one_out,
            "advantage",
            (
                Param(
                    "n_rollouts_per_prompt",
                    int,
                    "rollouts per prompt; must equal grpo.num_generations",
                    check=_at_least_two,
                ),
            ),
            "G minus the mean G of the other rollouts of the same prompt, same for every role",
        ),
        Strategy(
            "reward_mixing",
            strategies.reward_mixing,
            "reward",
            (Param("alpha", float, "weight of the individual reward I^role", check=_in_unit),),
            "alpha·I^role + (1 − alpha)·G",
        ),
    )
}


def resolve(name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check ``params`` against strategy ``name``; return them with defaults filled in."""
    strategy = get(name)
    params = dict(params or {})
    known = {p.name: p for p in strategy.params}
    unknown = sorted(set(params) - set(known))
    if unknown:
        listed = ", ".join(known) if known else "none"
        raise ValueError(
            f"unknown parameter(s) {unknown} for reward-shaping strategy {name!r}; "
            f"its parameters are: {listed}"
        )
    resolved: dict[str, Any] = {}
    for p in strategy.params:
        if p.name not in params:
            if p.required:
                raise ValueError(f"reward-shaping strategy {name!r} needs parameter {p.name!r} ({p.help})")
            resolved[p.name] = p.default
            continue
        resolved[p.name] = _coerce(name, p, params[p.name])
    return resolved


# Names that existed once and now mean something else: an error that says what to write instead.
RENAMED = {
    "coma_advantage": "it was a leave-one-out baseline, now `leave_one_out`; COMA's per-role "
    "counterfactual baseline is `coma`",
}


def get(name: str) -> Strategy:
    if name in RENAMED:
        raise ValueError(f"reward-shaping strategy {name!r} no longer exists: {RENAMED[name]}")
    if name not in STRATEGIES:
        raise ValueError(f"unknown reward-shaping strategy {name!r}; choose one of: {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


def _coerce(strategy: str, p: Param, value: Any) -> Any:
    where = f"parameter {p.name!r} of reward-shaping strategy {strategy!r}"
    # bool is an int in Python; `alpha: true` is a typo, not 1.0.
    if isinstance(value, bool) or not _type_ok(p.type, value):
        raise ValueError(f"{where} must be a {p.type.__name__}, got {value!r}")
    value = p.type(value)
    if p.type is float and not math.isfinite(value):
        raise ValueError(f"{where} must be finite, got {value!r}")
    if p.choices is not None and value not in p.choices:
        raise ValueError(f"{where} is {value!r}; choose one of: {', '.join(map(str, p.choices))}")
    if p.check is not None and (problem := p.check(value)):
        raise ValueError(f"{where} {problem}, got {value!r}")
    return value


def _type_ok(expected: type, value: Any) -> bool:
    if expected is float:
        return isinstance(value, (int, float))  # an int such as 1 is a fine float
    return isinstance(value, expected)


def shaped_values(group: Group, name: str, params: Mapping[str, Any]) -> list[RoleValues]:
    """The strategy's raw per-role values for one group (rewards or advantages, by its kind)."""
    return get(name).fn(group, **resolve(name, params))


def advantages(
    groups: Sequence[Group], name: str, params: Mapping[str, Any], scale: str
) -> list[list[RoleValues]]:
    """Per-role advantages of every rollout of every group: what the trainer applies to the tokens.

    ``reward`` strategies go through GRPO's normalization per role (``scale`` is the trainer's
    ``scale_rewards``: ``group``, ``batch`` or ``none``). ``advantage`` strategies carry their own
    baseline; ``scale`` divides them by the std of the team reward G (of the group, or of the batch;
    ``none``: as they are), the unit GRPO's advantages are in, so COMA's solver values equal GRPO's.
    """
    strategy = get(name)
    resolved = resolve(name, params)
    values = [strategy.fn(group, **resolved) for group in groups]
    if strategy.kind == "advantage":
        return scale_advantages(groups, values, scale)
    roles = groups[0].roles if groups else ()
    if scale == "batch":
        return batch_normalize(values, roles)
    return [group_normalize(v, roles, scale) for v in values]


def scale_advantages(
    groups: Sequence[Group], values: list[list[RoleValues]], scale: str
) -> list[list[RoleValues]]:
    """Advantage-kind values divided by the std of G (+1e-4, TRL's epsilon), per ``scale``."""
    if scale == "none":
        return values
    if scale not in ("group", "batch"):
        raise ValueError(f"unknown scale {scale!r}; use 'group', 'batch' or 'none'")
    team = [g.team_rewards() for g in groups]
    batch_std = sample_std([r for rewards in team for r in rewards])
    out = []
    for rewards, group_values in zip(team, values, strict=True):
        std = sample_std(rewards) if scale == "group" else batch_std
        out.append([{role: v / (std + 1e-4) for role, v in row.items()} for row in group_values])
    return out
