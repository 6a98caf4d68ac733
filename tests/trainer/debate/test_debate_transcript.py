"""Role attribution of transcript tokens and the per-step debate metrics (pure Python)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen_trainer.debate.group import ROLES, Group, Turn
from sweepgen_trainer.debate.metrics import debate_metrics
from sweepgen_trainer.debate.shaping import advantages, shaped_values
from sweepgen_trainer.debate.transcript import PROMPT_TOKEN, TurnTokens, assemble, turn_token_advantages

turn_st = st.builds(
    TurnTokens,
    role=st.sampled_from(ROLES),
    prompt_ids=st.lists(st.integers(0, 99), max_size=4).map(tuple),
    generated_ids=st.lists(st.integers(0, 99), min_size=1, max_size=6).map(tuple),
    text=st.just("x"),
)


@given(st.lists(turn_st, min_size=1, max_size=6), st.data())
def test_each_token_gets_its_turns_advantage(turns, data):
    transcript = assemble(turns)
    values = [data.draw(st.floats(-3, 3)) for _ in turns]
    per_token = turn_token_advantages(transcript.token_turns, values)
    position = 0
    for index, turn in enumerate(turns):
        for _ in turn.prompt_ids:  # inserted role prompt: not trained on, no advantage
            assert transcript.env_mask[position] == 0
            assert transcript.token_roles[position] == transcript.token_turns[position] == PROMPT_TOKEN
            assert per_token[position] == 0.0
            position += 1
        for tok in turn.generated_ids:
            assert transcript.completion_ids[position] == tok
            assert transcript.env_mask[position] == 1
            assert ROLES[transcript.token_roles[position]] == turn.role
            assert per_token[position] == values[index]
            position += 1
    assert position == len(transcript.completion_ids) == len(per_token)
    assert [t.n_tokens for t in transcript.turns] == [len(t.generated_ids) for t in turns]


def test_a_worked_transcript():
    turns = [
        TurnTokens("solver", (), (5, 6), "56"),
        TurnTokens("critic", (1, 2), (7,), "7"),
        TurnTokens("solver", (3,), (8, 9), "89"),
    ]
    t = assemble(turns)
    assert t.completion_ids == [5, 6, 1, 2, 7, 3, 8, 9]
    assert t.env_mask == [1, 1, 0, 0, 1, 0, 1, 1]
    assert t.token_roles == [0, 0, -1, -1, 1, -1, 0, 0]
    assert turn_token_advantages(t.token_turns, [0.5, -1.0, 0.25]) == [
        0.5,
        0.5,
        0.0,
        0.0,
        -1.0,
        0.0,
        0.25,
        0.25,
    ]


def final(turns):
    return turns[-1].correct if turns else 0.0


def debate(*correct, tokens=4):
    return tuple(Turn(ROLES[i % 2], "", tokens, float(c)) for i, c in enumerate(correct))


def test_debate_metrics_on_hand_built_groups():
    groups = [
        Group((debate(1, 0, 1), debate(0, 0, 0)), final),  # G = [1, 0]
        Group((debate(1, 1, 1), debate(1, 1, 1)), final),  # constant: no advantage at all
    ]
    shaped = [shaped_values(g, "identity", {}) for g in groups]
    adv = advantages(groups, "identity", {}, "none")
    m = debate_metrics(groups, shaped, adv)
    assert m["debate/team_accuracy"] == 0.75
    assert m["debate/reward/solver"] == pytest.approx((1 + 0 + 1 + 1) / 4)
    assert m["debate/reward/critic"] == pytest.approx((0 + 0 + 1 + 1) / 4)
    assert m["debate/zero_advantage_groups"] == 0.5
    assert m["debate/advantage_mean/solver"] == 0.0
    assert m["debate/advantage_std/critic"] == pytest.approx(((0.25 + 0.25) / 4) ** 0.5)
    assert m["debate/shaped/solver"] == 0.75
    assert m["debate/length_tokens"] == 12.0
    assert m["debate/turns"] == 3.0
