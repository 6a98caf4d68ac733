"""Per-step debate metrics, computed from the groups and their shaped advantages (pure Python).

Names are the keys that reach ``metrics.jsonl`` (through TRL's metric log, averaged over the
generation batches of a logging step):

- ``debate/team_accuracy``: mean team reward G (the final answer's score);
- ``debate/reward/<role>``: mean individual reward I^role;
- ``debate/shaped/<role>``: mean of the strategy's raw value for the role (before normalization);
- ``debate/advantage_mean/<role>``, ``debate/advantage_std/<role>``: the applied advantages;
- ``debate/zero_advantage_groups``: fraction of groups whose every advantage (all roles) is 0,
  i.e. groups that teach nothing this step;
- ``debate/length_tokens``, ``debate/turns``: generated tokens and turns per debate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from sweepgen_trainer.debate.group import Group

Values = Sequence[Sequence[Mapping[str, float]]]


def debate_metrics(groups: Sequence[Group], shaped: Values, advantages: Values) -> dict[str, float]:
    rollouts = [turns for g in groups for turns in g.rollouts]
    roles = groups[0].roles
    out: dict[str, float] = {"debate/team_accuracy": _mean([r for g in groups for r in g.team_rewards()])}
    individual = [ind for g in groups for ind in g.individual_rewards()]
    flat_shaped = [v for g in shaped for v in g]
    flat_adv = [a for g in advantages for a in g]
    for role in roles:
        out[f"debate/reward/{role}"] = _mean([ind[role] for ind in individual])
        out[f"debate/shaped/{role}"] = _mean([v[role] for v in flat_shaped])
        column = [a[role] for a in flat_adv]
        out[f"debate/advantage_mean/{role}"] = _mean(column)
        out[f"debate/advantage_std/{role}"] = _std(column)
    zero = [all(a[role] == 0.0 for a in group for role in roles) for group in advantages]
    out["debate/zero_advantage_groups"] = _mean([float(z) for z in zero])
    out["debate/length_tokens"] = _mean([float(sum(t.n_tokens for t in turns)) for turns in rollouts])
    out["debate/turns"] = _mean([float(len(turns)) for turns in rollouts])
    return out


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _std(values: Sequence[float]) -> float:
    # Population std of the applied advantages: a description of the batch, not an estimator.
    if not values:
        return 0.0
    mean = _mean(values)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
