"""Issue 38: ``potential_based`` checked against its definition on a hand-computed group.

Ng, Harada & Russell 1999: F(s, s') = γΦ(s') − Φ(s), added to the reward of every transition, with
Φ(terminal) = 0. The review found a critic that was right getting a mean advantage of −1.6 in groups
whose team reward is all 0. The numbers below are computed by hand from that definition; they show
the sign is Ng's and where the −1.6 comes from: with γ < 1 and GRPO's undiscounted return, a state of
high potential is paid γΦ on entry and charged Φ on exit, a net −(1 − γ)Φ, so under Φ =
answer_correct a right intermediate statement costs the debate 0.01, and where the team rewards of a
group are all equal that cost is the group's only spread, which GRPO's std normalization blows up.
"""

from __future__ import annotations

import pytest

from sweepgen_trainer.debate.group import Group, Turn
from sweepgen_trainer.debate.shaping import advantages, shaped_values

PARAMS = {"gamma": 0.99, "potential_type": "answer_correct"}


def final_answer(turns) -> float:
    return turns[-1].correct


def debate(critic_right: bool) -> tuple[Turn, ...]:
    # solver wrong, critic right or wrong, final answer wrong: team reward G = 0
    return (
        Turn("solver", "3", 1, 0.0),
        Turn("critic", "7", 1, float(critic_right)),
        Turn("solver", "3", 1, 0.0),
    )


GROUP = Group((debate(True), debate(False), debate(False), debate(False)), final_answer)


def test_the_shaped_return_is_g_plus_ngs_f_summed_over_the_turns():
    # Debate 0: Φ(s0) = 0, Φ(s1) = 0 (the solver was wrong), Φ(s2) = 1 (the critic was right), Φ(s3) = 0.
    # F0 = 0.99·0 − 0 = 0; F1 = 0.99·1 − 0 = +0.99; F2 = 0.99·0 − 1 = −1; G = 0: shaped = −0.01.
    values = shaped_values(GROUP, "potential_based", PARAMS)
    assert values[0] == {"solver": pytest.approx(-0.01), "critic": pytest.approx(-0.01)}
    assert all(v == {"solver": 0.0, "critic": 0.0} for v in values[1:])  # Φ = 0 everywhere: F = 0


def test_a_right_critic_in_an_all_zero_group_gets_a_negative_advantage_and_why():
    # group normalization of [−0.01, 0, 0, 0]: mean −0.0025, centred [−0.0075, +0.0025 ×3], sample std
    # sqrt((0.0075² + 3·0.0025²)/3) = 0.005, divided by 0.005 + 1e-4:
    adv = advantages([GROUP], "potential_based", PARAMS, "group")[0]
    assert adv[0]["critic"] == pytest.approx(-0.0075 / 0.0051)  # −1.4706: the right critic pushed down
    assert [a["critic"] for a in adv[1:]] == pytest.approx([0.0025 / 0.0051] * 3)  # +0.4902
    # γ = 1 (the only policy-invariant choice for an undiscounted return): no cost, no advantage
    exact = advantages([GROUP], "potential_based", {**PARAMS, "gamma": 1.0}, "group")[0]
    assert all(a == {"solver": 0.0, "critic": 0.0} for a in exact)


def test_the_sign_follows_the_potential_a_right_final_answer_is_not_charged():
    # Φ(s_T) = 0 and the final turn's state s_T is terminal: a right final answer is paid G = 1 and
    # never charged as an intermediate state; a right critic before it is charged 1 − γ.
    both = (Turn("solver", "3", 1, 0.0), Turn("critic", "7", 1, 1.0), Turn("solver", "7", 1, 1.0))
    only_final = (Turn("solver", "3", 1, 0.0), Turn("critic", "3", 1, 0.0), Turn("solver", "7", 1, 1.0))
    values = shaped_values(Group((both, only_final), final_answer), "potential_based", PARAMS)
    assert values[0]["critic"] == pytest.approx(1 - 0.01) and values[1]["critic"] == pytest.approx(1.0)
