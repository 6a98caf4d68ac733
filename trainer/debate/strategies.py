"""The five reward-shaping strategies, as pure functions of one GRPO group.

Each strategy maps a :class:`~trainer.debate.group.Group` of ``n`` debates to one value per role per
rollout. A strategy is of one of two kinds (see the registry):

- ``reward``: the values are shaped *rewards*; the trainer turns them into advantages with GRPO's
  group normalization, per role (``group_normalize``), exactly as plain GRPO does for one reward.
- ``advantage``: the values already are advantages (they carry their own baseline) and are applied
  to the tokens as they are.

The trainer then applies each role's value to every token that role generated.
"""

from __future__ import annotations

import math

from trainer.debate.group import Group, RoleValues, Turn, uniform, without_role


def identity(group: Group) -> list[RoleValues]:
    """Plain GRPO: every role gets the team reward G of its rollout (kind ``reward``)."""
    return [uniform(g, group.roles) for g in group.team_rewards()]


def difference_rewards(group: Group) -> list[RoleValues]:
    """D^role = G(transcript) − G(transcript with that role's turns removed) (kind ``reward``).

    The counterfactual is a re-scoring of the same transcript without the role's turns, not a new
    generation: a role whose turns the team reward never looks at gets exactly 0.
    """
    out = []
    for turns, g in zip(group.rollouts, group.team_rewards(), strict=True):
        out.append({role: g - float(group.team_score(without_role(turns, role))) for role in group.roles})
    return out


def potential_based(
    group: Group, *, gamma: float, potential_type: str, length_scale: float
) -> list[RoleValues]:
    """Potential-based shaping of the team return (kind ``reward``; Ng, Harada & Russell 1999).

    Turns t = 0..T−1 move the debate from state s_t (the transcript before turn t) to s_{t+1}; s_T is
    terminal and Φ(s_T) = 0. Each turn adds F_t = gamma·Φ(s_{t+1}) − Φ(s_t) to the team reward, and
    every role gets the shaped return ``G + Σ_t F_t``. Collecting the terms per state gives

        G + gamma·Φ(s_T) − Φ(s_0) + (gamma − 1)·Σ_{t=1}^{T−1} Φ(s_t)
            =  G − Φ(s_0) + (gamma − 1)·Σ_{t=1}^{T−1} Φ(s_t),

    which is what is computed (the telescoped form is exact in floating point). Φ(s_0) is the same for
    every rollout of a prompt, so with gamma = 1 the GRPO advantages equal identity's exactly; with
    gamma < 1 a debate pays (1 − gamma)·Φ for every intermediate state it passes through.

    Potentials (``potential_type``):
    - ``debate_length``: Φ(s_t) = tokens generated before turn t / ``length_scale`` (so Φ(s_0) = 0, and
      with gamma < 1 a debate loses (1 − gamma)·Φ for each intermediate state: long debates pay).
    """
    potential = POTENTIALS[potential_type]
    out = []
    for turns, g in zip(group.rollouts, group.team_rewards(), strict=True):
        phi = [potential(turns, t, length_scale) for t in range(len(turns))]
        # phi[0] is Φ(s_0); the intermediate states are s_1..s_{T-1}; Φ(s_T) = 0 by definition.
        shaped = g - phi[0] + (gamma - 1.0) * sum(phi[1:]) if phi else g
        out.append(uniform(shaped, group.roles))
    return out


def _phi_debate_length(turns: tuple[Turn, ...], t: int, length_scale: float) -> float:
    return sum(turn.n_tokens for turn in turns[:t]) / length_scale


POTENTIALS = {"debate_length": _phi_debate_length}


def coma_advantage(group: Group, *, n_rollouts_per_prompt: int) -> list[RoleValues]:
    """Leave-one-out counterfactual advantage (kind ``advantage``).

    Definition: ``A_i = G_i − mean_{j ≠ i} G_j``, the team reward minus the mean team reward of the
    *other* rollouts of the same prompt; every role of rollout i gets A_i. Equivalently
    ``A_i = n/(n−1)·(G_i − mean_j G_j)``, so the advantages sum to zero within a group, are unchanged
    by adding a constant to every G, are zero for a constant group, and G = [1, 0, 0, 0] gives
    [0.75, −0.25, −0.25, −0.25]·4/3 = [1, −1/3, −1/3, −1/3]. No std scaling is applied: the baseline
    is the whole point, and the values are used as advantages directly.

    ``n_rollouts_per_prompt`` must equal the group size (the GRPO ``num_generations``); the config
    is rejected before training otherwise, and this function checks it again on the real group.
    """
    n = group.size
    if n != n_rollouts_per_prompt:
        raise ValueError(
            f"coma_advantage expects groups of n_rollouts_per_prompt={n_rollouts_per_prompt} rollouts, "
            f"got {n}"
        )
    if n < 2:
        raise ValueError("coma_advantage needs at least 2 rollouts per prompt for a leave-one-out baseline")
    rewards = group.team_rewards()
    # Work relative to the first reward: a constant group then gives exactly 0, not rounding noise.
    deltas = [g - rewards[0] for g in rewards]
    total = math.fsum(deltas)
    return [uniform(d - (total - d) / (n - 1), group.roles) for d in deltas]


def reward_mixing(group: Group, *, alpha: float) -> list[RoleValues]:
    """alpha·I^role + (1 − alpha)·G per role (kind ``reward``): alpha 0 is identity, 1 the individual reward.

    The endpoints are returned exactly (no ``0·x + 1·G`` rounding), so alpha 0 reproduces identity bit
    for bit.
    """
    out = []
    for g, ind in zip(group.team_rewards(), group.individual_rewards(), strict=True):
        if alpha == 0.0:
            out.append(uniform(g, group.roles))
        elif alpha == 1.0:
            out.append(dict(ind))
        else:
            out.append({role: alpha * ind[role] + (1.0 - alpha) * g for role in group.roles})
    return out
