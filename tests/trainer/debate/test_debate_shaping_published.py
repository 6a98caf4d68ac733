"""Each reward-shaping strategy against a reference written from its paper, on debates that
follow the trainer's schedule (solver, critic, ..., solver) and a team reward that, like the trainer's,
scores only the solver's final answer (plus, where noted, one that also reads the critic)."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen_trainer.configfile import validate_config
from sweepgen_trainer.debate.group import ROLES, Group, Turn
from sweepgen_trainer.debate.shaping import advantages, shaped_values

TEXTS = ["7", "3", ""]


def right(text: str) -> float:
    return 1.0 if text == "7" else 0.0


def final_answer_score(turns) -> float:
    """The trainer's G: the score of the solver's last turn (written here without the trainer's helper)."""
    return right([t for t in turns if t.role == "solver"][-1].text)


def answer_and_critic_score(turns) -> float:
    """A team reward that also reads the critic: the final answer counts double if the critic agreed."""
    critic = [t.text for t in turns if t.role == "critic"]
    return final_answer_score(turns) * (2.0 if critic and critic[-1] == "7" else 1.0)


def schedule(n_turns: int) -> list[str]:
    return [ROLES[t % 2] for t in range(n_turns)]


@st.composite
def groups(draw, min_size: int = 2) -> tuple[tuple[Turn, ...], ...]:
    n_turns = draw(st.sampled_from([1, 3, 5]))
    n = draw(st.integers(min_size, 6))
    return tuple(
        tuple(
            Turn(role, draw(st.sampled_from(TEXTS)), draw(st.integers(0, 20)), 0.0)
            for role in schedule(n_turns)
        )
        for _ in range(n)
    )


# ---- references, from the papers --------------------------------------------------------------------


def joint_action(turns) -> dict[str, list[Turn]]:
    """A transcript as each agent's action: the ordered list of its turns."""
    return {role: [t for t in turns if t.role == role] for role in ROLES}


def transcript(actions: dict[str, list[Turn]], n_turns: int) -> tuple[Turn, ...]:
    """Play a joint action back in the debate's schedule."""
    cursor = dict.fromkeys(ROLES, 0)
    out = []
    for role in schedule(n_turns):
        out.append(actions[role][cursor[role]])
        cursor[role] += 1
    return tuple(out)


def coma_reference(rollouts, team) -> list[dict[str, float]]:
    """Foerster et al. 2018, eq. 4: A^a(s,u) = Q(s,u) − Σ_{u'^a} π^a(u'^a|τ^a) Q(s,(u^{-a},u'^a)), with π^a
    the empirical distribution of agent a's actions in the group (distinct actions, weighted by count)."""
    n_turns = len(rollouts[0])
    out = []
    for turns in rollouts:
        u = joint_action(turns)
        row = {}
        for a in ROLES:
            policy = Counter(tuple(joint_action(z)[a]) for z in rollouts)
            baseline = sum(
                count / len(rollouts) * team(transcript({**u, a: list(alt)}, n_turns))
                for alt, count in policy.items()
            )
            row[a] = team(turns) - baseline
        out.append(row)
    return out


def difference_reference(rollouts, team, default_text: str) -> list[dict[str, float]]:
    """Wolpert & Tumer: D_i = G(z) − G(z_{−i} + c_i), c_i the declared default action (a turn saying
    default_text in each of agent i's places)."""
    n_turns = len(rollouts[0])
    out = []
    for turns in rollouts:
        u = joint_action(turns)
        out.append(
            {
                a: team(turns) - team(transcript({**u, a: [Turn(a, default_text) for _ in u[a]]}, n_turns))
                for a in ROLES
            }
        )
    return out


def potential_reference(rollouts, team, gamma: float, length_scale: float) -> list[float]:
    """Ng, Harada & Russell 1999: return G + Σ_t F(s_t, s_{t+1}), F = γΦ(s') − Φ(s), Φ(terminal) = 0."""
    out = []
    for turns in rollouts:

        def phi(t: int, turns=turns) -> float:
            return 0.0 if t == len(turns) else sum(x.n_tokens for x in turns[:t]) / length_scale

        out.append(team(turns) + sum(gamma * phi(t + 1) - phi(t) for t in range(len(turns))))
    return out


# ---- properties -------------------------------------------------------------------------------------


@settings(max_examples=200)
@given(groups(), st.sampled_from([final_answer_score, answer_and_critic_score]))
def test_coma_equals_the_papers_counterfactual_baseline(rollouts, team):
    ours = advantages([Group(rollouts, team)], "coma_rescore", {}, "none")[0]
    for got, want in zip(ours, coma_reference(rollouts, team), strict=True):
        for role in ROLES:
            assert got[role] == pytest.approx(want[role], abs=1e-12)


@given(groups())
def test_coma_in_grpo_units_divides_by_the_group_std_of_g(rollouts):
    group = Group(rollouts, final_answer_score)
    g = group.team_rewards()
    mean = sum(g) / len(g)
    std = math.sqrt(sum((x - mean) ** 2 for x in g) / (len(g) - 1))
    scaled = advantages([group], "coma_rescore", {}, "group")[0]
    for got, want in zip(scaled, coma_reference(rollouts, final_answer_score), strict=True):
        assert got["solver"] == pytest.approx(want["solver"] / (std + 1e-4), abs=1e-9)
        # and the solver's COMA advantage is then exactly GRPO's (the answer is the solver's)
    grpo = advantages([group], "identity", {}, "group")[0]
    assert [a["solver"] for a in scaled] == pytest.approx([a["solver"] for a in grpo], abs=1e-9)


def test_coma_roles_differ():
    # Three-turn debates; the critic said 7 in the first two rollouts. With a team reward that reads
    # the critic, swapping the critic's turn changes G, so its advantage is its own, not the solver's.
    def d(s1, c, s2):
        return (Turn("solver", s1), Turn("critic", c), Turn("solver", s2))

    rollouts = (d("7", "7", "7"), d("3", "7", "3"), d("3", "3", "7"), d("7", "3", "3"))
    adv = shaped_values(Group(rollouts, answer_and_critic_score), "coma_rescore", {})
    assert [a["solver"] for a in adv] != [a["critic"] for a in adv]
    assert adv[0] == pytest.approx({"solver": 1.0, "critic": 0.5})
    # with the final-answer-only reward a re-scoring counterfactual cannot credit the critic
    plain = shaped_values(Group(rollouts, final_answer_score), "coma_rescore", {})
    assert all(a["critic"] == 0.0 for a in plain)


@settings(max_examples=200)
@given(
    groups(min_size=1),
    st.sampled_from(TEXTS),
    st.sampled_from([final_answer_score, answer_and_critic_score]),
)
def test_difference_rewards_equal_the_published_definition(rollouts, default_text, team):
    ours = shaped_values(Group(rollouts, team), "difference_rewards_rescore", {"default_text": default_text})
    assert ours == difference_reference(rollouts, team, default_text)


@given(groups(min_size=1))
def test_removing_the_solver_never_makes_the_critic_the_answer(rollouts):
    # The audit's case: the solver was trained on whether the critic wrote the right number.
    ours = shaped_values(Group(rollouts, final_answer_score), "difference_rewards_rescore", {})
    for turns, d in zip(rollouts, ours, strict=True):
        assert d["solver"] == final_answer_score(turns)  # G − G(default "" answer) = G − 0
        assert d["critic"] == 0.0


@settings(max_examples=200)
@given(groups(min_size=1), st.floats(0.5, 1.0), st.floats(1.0, 200.0))
def test_potential_based_equals_the_per_step_sum(rollouts, gamma, length_scale):
    params = {"gamma": gamma, "potential_type": "debate_length", "length_scale": length_scale}
    ours = shaped_values(Group(rollouts, final_answer_score), "potential_based", params)
    for got, want in zip(ours, potential_reference(rollouts, final_answer_score, gamma, length_scale)):
        assert got["solver"] == got["critic"] == pytest.approx(want, abs=1e-9)


@given(groups(min_size=1), st.floats(0.0, 1.0))
def test_reward_mixing_is_alpha_individual_plus_one_minus_alpha_team(rollouts, alpha):
    scored = tuple(tuple(Turn(t.role, t.text, t.n_tokens, right(t.text)) for t in z) for z in rollouts)
    ours = shaped_values(Group(scored, final_answer_score), "reward_mixing", {"alpha": alpha})
    for turns, got in zip(scored, ours, strict=True):
        g = final_answer_score(turns)
        for role in ROLES:
            mine = [right(t.text) for t in turns if t.role == role]
            individual = sum(mine) / len(mine) if mine else 0.0
            assert got[role] == pytest.approx(alpha * individual + (1 - alpha) * g, abs=1e-12)


def test_gamma_below_one_warns_at_start_and_one_names_the_reduction_to_identity():
    def cfg(gamma):
        return validate_config(
            {
                "run_name": "r",
                "output_dir": "runs/r",
                "debate": {},
                "reward_shaping": {
                    "strategy": "potential_based",
                    "params": {"gamma": gamma, "potential_type": "debate_length"},
                },
            }
        )

    (warning,) = cfg(0.99).warnings()
    assert "policy invariance does not hold" in warning and "undiscounted" in warning
    # gamma 1 is policy-invariant and, here, identity exactly: named at start
    (reduction,) = cfg(1).warnings()
    assert "reduces to identity" in reduction and "policy invariance" not in reduction


def test_the_old_coma_name_says_what_it_became():
    from sweepgen.errors import ConfigError

    with pytest.raises(ConfigError, match="leave_one_out"):
        validate_config(
            {
                "run_name": "r",
                "output_dir": "runs/r",
                "debate": {},
                "reward_shaping": {"strategy": "coma_advantage", "params": {"n_rollouts_per_prompt": 16}},
            }
        )
