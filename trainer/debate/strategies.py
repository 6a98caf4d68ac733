"""The five reward-shaping strategies, as pure functions of one GRPO group.

Each strategy maps a :class:`~sweepgen_trainer.debate.group.Group` of ``n`` debates to one value per role per
rollout. A strategy is of one of two kinds (see the registry):

- ``reward``: the values are shaped *rewards*; the trainer turns them into advantages with GRPO's
  group normalization, per role (``group_normalize``), exactly as plain GRPO does for one reward.
- ``advantage``: the values already are advantages (they carry their own baseline) and are applied
  to the tokens as they are.

The trainer then applies each role's value to every token that role generated.
"""

from __future__ import annotations

import math

from sweepgen_trainer.debate.group import (
    Group,
    RoleValues,
    Turn,
    TurnValues,
    uniform,
    with_default_action,
    with_turns_of,
)


def identity(group: Group) -> list[RoleValues]:
    """Plain GRPO: every role gets the team reward G of its rollout (kind ``reward``)."""
    return [uniform(g, group.roles) for g in group.team_rewards()]


def difference_rewards(group: Group, *, default_text: str) -> list[TurnValues]:
    """D_t = G(z) − G(z with turn t replaced by the default action, every later turn regenerated)
    (kind ``reward``, per turn; Wolpert & Tumer 2002).

    The team reward minus the team reward of the joint action in which this turn's speaker played the
    declared default ``c`` (a turn saying ``default_text``) instead; the rest of the debate after it is
    played again by the policy (``group.counterfactuals[i][t]``, one transcript, made by
    debate/branching.py), so a critic turn that changed the solver's final answer is credited for
    it. ``default_text`` is recorded by the trainer in the counterfactual; this function checks it.
    """
    team = group.team_rewards()
    out = []
    for i, turns in enumerate(group.rollouts):
        row = []
        for t, (alternatives, turn) in enumerate(
            zip(_counterfactuals(group, i, "difference_rewards"), turns)
        ):
            if (
                len(alternatives) != 1
                or alternatives[0][t].text != default_text
                or alternatives[0][t].role != turn.role
            ):
                raise ValueError(
                    f"difference_rewards needs one default-action counterfactual per turn saying "
                    f"{default_text!r}; rollout {i}, turn {t} has {len(alternatives)}"
                )
            row.append(team[i] - _finite(group.team_score(alternatives[0])))
        out.append(row)
    return out


def coma(group: Group, *, counterfactuals: int) -> list[TurnValues]:
    """COMA's counterfactual advantage per turn (kind ``advantage``; Foerster et al. 2018, eq. 4).

    ``A^a(s, u) = Q(s, u) − Σ_{u'^a} π^a(u'^a | τ^a) Q(s, (u^{−a}, u'^a))``. In a debate, turn t of
    rollout z_i is the action of the role speaking at t, τ is z_i's history before t, and Q of a joint
    action is the team reward of the debate that follows it. The sum over π^a is estimated by K
    Monte-Carlo samples u'_k ~ π(·|τ) of the same policy (``group.counterfactuals[i][t]``, made by
    sweepgen_trainer.debate.branching), each followed by the rest of the debate played again:

        A_{i,t} = G(z_i) − (1/K)·Σ_k G(z_i[:t] + u'_k + regenerated turns).

    The baseline does not depend on the action taken at t, so the estimate stays unbiased; a turn
    that changes nothing downstream gets an advantage whose mean is 0 (its samples' G spread around
    G(z_i)), not exactly 0. No std scaling here; the registry applies ``grpo.scale_rewards``.
    """
    team = group.team_rewards()
    out = []
    for i in range(group.size):
        row = []
        for t, alternatives in enumerate(_counterfactuals(group, i, "coma")):
            if len(alternatives) != counterfactuals:
                raise ValueError(
                    f"coma needs counterfactuals={counterfactuals} samples per turn; rollout {i}, turn {t} "
                    f"has {len(alternatives)}"
                )
            scores = [_finite(group.team_score(z)) for z in alternatives]
            # Relative to G_i with fsum: samples that all score G_i give exactly 0.
            row.append(-math.fsum(c - team[i] for c in scores) / len(scores))
        out.append(row)
    return out


def _counterfactuals(group: Group, i: int, name: str) -> tuple[tuple[tuple[Turn, ...], ...], ...]:
    if not group.counterfactuals:
        raise ValueError(
            f"{name} needs regenerated counterfactual transcripts (sweepgen_trainer.debate.branching); "
            "the group has none"
        )
    return group.counterfactuals[i]


def difference_rewards_rescore(group: Group, *, default_text: str) -> list[RoleValues]:
    """D^role = G(z) − G(z with the role's actions replaced by the default action) (kind ``reward``).

    **Re-scoring only, blind to downstream effects**: the later turns are not regenerated.

    Wolpert & Tumer's difference reward (Wolpert & Tumer 2002; Agogino & Tumer 2004): the team reward
    minus the team reward of the same joint action with this agent's action replaced by a declared
    default ``c_i``. Here the default action is a turn saying ``default_text`` (``""``: saying nothing),
    put in the role's place; the team reward is re-scored on that transcript, nothing is regenerated.
    The final answer is always the solver's last turn (``group.team_score`` reads it), so replacing the
    solver scores the default text as the answer, and replacing the critic leaves the answer as it
    was: with a team reward that reads only the final answer, the critic's D is exactly 0, because a
    re-scoring counterfactual cannot see the critic's influence on the solver's later turns.
    """
    out = []
    for turns, g in zip(group.rollouts, group.team_rewards(), strict=True):
        out.append(
            {
                role: g - _finite(group.team_score(with_default_action(turns, role, default_text)))
                for role in group.roles
            }
        )
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
      with gamma < 1 a debate loses (1 − gamma)·Φ for each intermediate state: long debates pay). When
      every debate has the same length, Φ is the same for all and the strategy is identity.
    - ``answer_correct``: Φ(s_t) = the score of the latest turn before t (did the debate's latest
      statement give the right answer; Φ(s_0) = 0); with gamma < 1 a debate pays (1 − gamma) for each
      intermediate state whose latest statement was right.
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


def _phi_answer_correct(turns: tuple[Turn, ...], t: int, length_scale: float) -> float:
    return turns[t - 1].correct if t > 0 else 0.0


POTENTIALS = {"debate_length": _phi_debate_length, "answer_correct": _phi_answer_correct}


def coma_rescore(group: Group) -> list[RoleValues]:
    """COMA's baseline over the group's own samples of a role's turns, re-scored (kind ``advantage``).

    **Blind to downstream effects**: the other role's turns are kept as they were, never regenerated,
    so a turn whose effect is on what is said later (the critic's) is never credited; and the
    alternatives come from other rollouts, generated after different earlier turns, so they are not
    samples of π^a(·|τ^a) given this rollout's history. Kept so that earlier runs can be
    reproduced; ``coma`` is the regenerating estimator.

    COMA: ``A^a(s, u) = Q(s, u) − Σ_{u'^a} π^a(u'^a | τ^a) Q(s, (u^{−a}, u'^a))``: the value of the joint
    action minus its expectation over agent a's own actions with the other agents' actions fixed.
    Estimator in a debate (no critic network, so Q is the team reward of a transcript):

    - the joint action of rollout i is its transcript z_i; role r's action is r's turns in z_i;
    - the alternatives for r are the n samples of r's turns in the group (rollouts j = 1..n of the
      same prompt, i included), each of weight 1/n: a Monte-Carlo estimate of the sum over π^r;
    - Q(s, (u^{−r}, u'^r)) = G(z_i with r's turns swapped for z_j's), re-scored, not regenerated.

    So ``A_i^r = G(z_i) − (1/n)·Σ_j G(swap_r(z_i, z_j))``. The two roles differ in general: with a team
    reward that reads only the solver's final answer, swapping the solver's turns gives G_j, so the
    solver's A_i is G_i − mean_j G_j (GRPO's centred reward), while swapping the critic's turns leaves
    the answer as it was, so the critic's A is 0: re-scoring cannot credit the critic for what the
    solver wrote after reading it. No std scaling here; the registry applies ``grpo.scale_rewards``.
    """
    n = group.size
    team = group.team_rewards()
    out: list[RoleValues] = [{} for _ in range(n)]
    for role in group.roles:
        for i, turns in enumerate(group.rollouts):
            counterfactual = [
                _finite(group.team_score(with_turns_of(turns, role, donor))) for donor in group.rollouts
            ]
            # Relative to G_i with fsum: a role that changes nothing gets exactly 0.
            out[i][role] = -math.fsum(c - team[i] for c in counterfactual) / n
    return out


def leave_one_out(group: Group, *, n_rollouts_per_prompt: int) -> list[RoleValues]:
    """Leave-one-out baseline (kind ``advantage``): ``A_i = G_i − mean_{j ≠ i} G_j``, same for every role.

    Its old name ``coma_advantage`` is refused (``shaping.RENAMED``): it is not COMA (it has no per-role
    counterfactual): it equals n/(n−1)·(G_i − mean_j G_j), so the advantages sum to zero within a group,
    are unchanged by adding a constant to every G, are zero for a constant group, and G = [1, 0, 0, 0]
    gives [1, −1/3, −1/3, −1/3]. The registry applies ``grpo.scale_rewards`` like for COMA.

    ``n_rollouts_per_prompt`` must equal the group size (the GRPO ``num_generations``); the config
    is rejected before training otherwise, and this function checks it again on the real group.
    """
    n = group.size
    if n != n_rollouts_per_prompt:
        raise ValueError(
            f"leave_one_out expects groups of n_rollouts_per_prompt={n_rollouts_per_prompt} rollouts, got {n}"
        )
    if n < 2:
        raise ValueError("leave_one_out needs at least 2 rollouts per prompt")
    rewards = group.team_rewards()
    # Work relative to the first reward: a constant group then gives exactly 0, not rounding noise.
    deltas = [g - rewards[0] for g in rewards]
    total = math.fsum(deltas)
    return [uniform(d - (total - d) / (n - 1), group.roles) for d in deltas]


def _finite(value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"a counterfactual team reward is {value}; rewards must be finite")
    return value


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
