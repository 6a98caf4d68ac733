"""Property tests of the five reward-shaping strategies on hand-built debate groups."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sweepgen_trainer.debate.group import ROLES, Group, Turn, group_normalize
from sweepgen_trainer.debate.shaping import advantages, shaped_values


# A team reward that, like the trainer's, scores the final turn of the transcript.
def final_turn_correct(turns):
    return turns[-1].correct if turns else 0.0


def solver_only(turns):
    """A team reward that ignores the critic entirely: the last solver turn's correctness."""
    solver = [t for t in turns if t.role == "solver"]
    return solver[-1].correct if solver else 0.0


def debate(*correct_by_turn, tokens=5):
    """solver, critic, solver, ... with the given correctness per turn."""
    return tuple(
        Turn(role=ROLES[i % 2], text=f"t{i}", n_tokens=tokens + i, correct=float(c))
        for i, c in enumerate(correct_by_turn)
    )


turns_st = st.lists(
    st.builds(
        Turn,
        role=st.sampled_from(ROLES),
        text=st.just(""),
        n_tokens=st.integers(0, 40),
        correct=st.sampled_from([0.0, 1.0]),
    ),
    min_size=1,
    max_size=5,
).map(tuple)
group_st = st.lists(turns_st, min_size=2, max_size=6).map(tuple)
scale_st = st.sampled_from(["group", "none", "batch"])


def team_only(turns):
    """Team reward as any real number, to test shift properties on non-binary rewards."""
    return sum(t.n_tokens * (1 if t.role == "solver" else -0.5) for t in turns) / 7.0


@given(group_st)
def test_identity_returns_its_input(rollouts):
    group = Group(rollouts, final_turn_correct)
    values = shaped_values(group, "identity", {})
    assert values == [{r: final_turn_correct(t) for r in ROLES} for t in rollouts]


@given(group_st, scale_st)
def test_identity_advantages_are_plain_grpo(rollouts, scale):
    group = Group(rollouts, final_turn_correct)
    g = group.team_rewards()
    adv = advantages([group], "identity", {}, scale)[0]
    n, mean = len(g), sum(g) / len(g)
    std = math.sqrt(sum((x - mean) ** 2 for x in g) / (n - 1))
    expected = [(x - mean) / (std + 1e-4) if scale != "none" else x - mean for x in g]
    for a, e in zip(adv, expected):
        assert a["solver"] == a["critic"] == pytest.approx(e, abs=1e-12)


@given(group_st)
def test_leave_one_out_sums_to_zero_per_group(rollouts):
    group = Group(rollouts, team_only)
    adv = advantages([group], "leave_one_out", {"n_rollouts_per_prompt": len(rollouts)}, "none")[0]
    for role in ROLES:
        assert sum(a[role] for a in adv) == pytest.approx(0.0, abs=1e-9)


@given(group_st, st.floats(-50, 50, allow_nan=False))
def test_leave_one_out_is_shift_invariant(rollouts, shift):
    n = len(rollouts)
    base = shaped_values(Group(rollouts, team_only), "leave_one_out", {"n_rollouts_per_prompt": n})
    shifted = shaped_values(
        Group(rollouts, lambda t: team_only(t) + shift), "leave_one_out", {"n_rollouts_per_prompt": n}
    )
    for a, b in zip(base, shifted):
        assert a["solver"] == pytest.approx(b["solver"], abs=1e-9)


@given(st.integers(2, 8), st.floats(-10, 10, allow_nan=False))
def test_leave_one_out_is_zero_for_a_constant_group(n, value):
    group = Group(tuple(debate(1, 0, 1) for _ in range(n)), lambda t: value)
    assert (
        shaped_values(group, "leave_one_out", {"n_rollouts_per_prompt": n})
        == [{"solver": 0.0, "critic": 0.0}] * n
    )


def test_leave_one_out_worked_example():
    # G = [1, 0, 0, 0]: A = [0.75, -0.25, -0.25, -0.25] * n/(n-1) with n = 4, i.e. [1, -1/3, -1/3, -1/3].
    rollouts = (debate(0, 0, 1), debate(0, 0, 0), debate(1, 1, 0), debate(0, 1, 0))
    adv = shaped_values(Group(rollouts, final_turn_correct), "leave_one_out", {"n_rollouts_per_prompt": 4})
    expected = [x * 4 / 3 for x in (0.75, -0.25, -0.25, -0.25)]
    assert [a["solver"] for a in adv] == pytest.approx(expected, abs=1e-15)
    assert [a["critic"] for a in adv] == pytest.approx(expected, abs=1e-15)


def test_leave_one_out_rejects_a_group_of_the_wrong_size():
    group = Group((debate(1, 0, 1),) * 3, final_turn_correct)
    with pytest.raises(ValueError, match="n_rollouts_per_prompt=4 rollouts, got 3"):
        shaped_values(group, "leave_one_out", {"n_rollouts_per_prompt": 4})


@given(group_st, scale_st, st.floats(1.0, 1000.0))
def test_potential_based_with_gamma_one_is_exactly_identity(rollouts, scale, length_scale):
    group = Group(rollouts, final_turn_correct)
    params = {"gamma": 1.0, "potential_type": "debate_length", "length_scale": length_scale}
    assert advantages([group], "potential_based", params, scale) == advantages([group], "identity", {}, scale)


def test_potential_based_with_gamma_below_one_charges_long_debates():
    # Same correctness, different lengths: Φ(s_t) = tokens so far / 10; intermediate states s_1, s_2.
    short = (
        Turn("solver", n_tokens=10, correct=1),
        Turn("critic", n_tokens=10),
        Turn("solver", n_tokens=10, correct=1),
    )
    long = (
        Turn("solver", n_tokens=30, correct=1),
        Turn("critic", n_tokens=30),
        Turn("solver", n_tokens=30, correct=1),
    )
    params = {"gamma": 0.9, "potential_type": "debate_length", "length_scale": 10.0}
    values = shaped_values(Group((short, long), final_turn_correct), "potential_based", params)
    # G + (gamma - 1) * (Φ(s_1) + Φ(s_2)): short 1 - 0.1*(1+2), long 1 - 0.1*(3+6)
    assert values[0]["solver"] == pytest.approx(0.7)
    assert values[1]["critic"] == pytest.approx(0.1)


@given(group_st, scale_st)
def test_reward_mixing_alpha_zero_is_identity(rollouts, scale):
    group = Group(rollouts, final_turn_correct)
    assert shaped_values(group, "reward_mixing", {"alpha": 0.0}) == shaped_values(group, "identity", {})
    assert advantages([group], "reward_mixing", {"alpha": 0}, scale) == advantages(
        [group], "identity", {}, scale
    )


@given(group_st)
def test_reward_mixing_alpha_one_is_the_individual_reward(rollouts):
    group = Group(rollouts, final_turn_correct)
    assert shaped_values(group, "reward_mixing", {"alpha": 1.0}) == group.individual_rewards()


def test_reward_mixing_half_way():
    # solver turns correct 1 and 0 -> I^solver = 0.5; critic correct -> I^critic = 1; G = final = 0.
    group = Group((debate(1, 1, 0), debate(0, 0, 0)), final_turn_correct)
    values = shaped_values(group, "reward_mixing", {"alpha": 0.5})
    assert values[0] == {"solver": 0.25, "critic": 0.5}
    assert values[1] == {"solver": 0.0, "critic": 0.0}


@given(group_st)
def test_difference_rewards_are_zero_for_a_role_the_team_reward_ignores(rollouts):
    values = shaped_values(Group(rollouts, solver_only), "difference_rewards_rescore", {})
    assert all(v["critic"] == 0.0 for v in values)


def test_difference_rewards_never_score_the_critic_as_the_answer():
    # Final solver turn wrong, critic right: replacing the solver by the default action (empty text,
    # correct 0) keeps the final answer the solver's, so D^solver = 0 - 0, not 0 - 1.
    group = Group((debate(1, 1, 0), debate(0, 0, 1)), solver_only)
    values = shaped_values(group, "difference_rewards_rescore", {})
    assert values[0] == {"solver": 0.0, "critic": 0.0}
    # Second: G = 1; with the solver's turns replaced G' = 0 -> D = 1; the critic changes nothing.
    assert values[1] == {"solver": 1.0, "critic": 0.0}


@settings(max_examples=50)
@given(st.lists(group_st, min_size=1, max_size=4), scale_st)
def test_every_strategy_gives_finite_advantages_for_every_role(groups, scale):
    built = [Group(r, final_turn_correct) for r in groups]
    for name, params in [
        ("identity", {}),
        ("difference_rewards_rescore", {}),
        ("potential_based", {"gamma": 0.99, "potential_type": "debate_length"}),
        ("reward_mixing", {"alpha": 0.3}),
    ]:
        for group_adv, group in zip(advantages(built, name, params, scale), built):
            assert len(group_adv) == group.size
            assert all(math.isfinite(a[r]) for a in group_adv for r in ROLES)


def test_group_normalize_matches_trl_for_one_reward():
    # TRL: (r - mean) / (std_unbiased + 1e-4); [1, 0, 0, 0] -> std = 0.5
    out = group_normalize([{"solver": x} for x in (1.0, 0.0, 0.0, 0.0)], ("solver",), "group")
    assert [o["solver"] for o in out] == pytest.approx(
        [0.75 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001, -0.25 / 0.5001]
    )


def test_a_nan_team_reward_is_an_error_not_a_shaped_value():
    group = Group((debate(1),) * 2, lambda t: float("nan"))
    with pytest.raises(ValueError, match="must be finite"):
        shaped_values(group, "identity", {})
