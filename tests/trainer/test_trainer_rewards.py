"""The reward registry: values, parameter binding, errors that list what exists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen_trainer import rewards
from sweepgen_trainer.rewards import RewardParamError, bind, resolve_params


def test_happy_count_counts_whole_words_and_caps():
    f = bind("happy_count", {"cap": 2})
    assert f(completions=["", "happy", "Happy happy!", "happy happy happy", "unhappy happyness"]) == [
        0.0,
        0.5,
        1.0,
        1.0,
        0.0,
    ]
    assert f.__name__ == "happy_count"  # TRL names its reward metrics after the function


@given(st.lists(st.sampled_from(["happy", "sad", "the", "Happy.", "x"]), max_size=20), st.integers(1, 6))
def test_happy_count_is_count_over_cap_clipped(words, cap):
    text = " ".join(words)
    count = sum(w.lower().strip(".") == "happy" for w in words)
    (value,) = bind("happy_count", {"cap": cap})(completions=[text])
    assert value == min(count, cap) / cap
    assert 0.0 <= value <= 1.0


def test_happy_binary_and_case_sensitivity():
    assert bind("happy_binary", {})(completions=["so happy", "sad"]) == [1.0, 0.0]
    assert bind("happy_binary", {"min_count": 2})(completions=["happy happy", "happy"]) == [1.0, 0.0]
    assert bind("happy_count", {"cap": 1, "case_sensitive": True})(completions=["Happy"]) == [0.0]


def test_sentence_length_scores_distance_to_target():
    f = bind("sentence_length", {"target_words": 4})
    assert f(completions=["one two three four.", "a b. c d e f g h i j", "", "..."]) == [
        1.0,
        (0.5 + 0.0) / 2,
        0.0,
        0.0,
    ]


def test_exact_answer_reads_the_answer_column():
    f = bind("exact_answer", {})
    got = f(completions=["it is 7", "3 then 8", "no number", "7.0"], answer=[7, 7, 7, 7])
    assert got == [1.0, 0.0, 0.0, 1.0]
    first = bind("exact_answer", {"which": "first"})
    assert first(completions=["3 then 8"], answer=[3]) == [1.0]


def test_exact_answer_without_column_is_an_error_not_zero():
    with pytest.raises(RewardParamError, match="needs a dataset column `answer`"):
        bind("exact_answer", {})(completions=["7"], prompts=["q"], trainer_state=None)


def test_weighted_sum_adds_weighted_terms():
    f = bind(
        "weighted_sum",
        {"terms": [{"name": "exact_answer"}, {"name": "happy_count", "params": {"cap": 1}, "weight": 0.5}]},
    )
    assert f(completions=["happy 7", "8", "happy"], answer=[7, 7, 7]) == [1.5, 0.0, 0.5]


def test_conversational_completions_are_read_as_text():
    f = bind("happy_count", {"cap": 1})
    assert f(completions=[[{"role": "assistant", "content": "so happy"}]]) == [1.0]


def test_unknown_name_and_params_list_what_exists():
    with pytest.raises(RewardParamError) as info:
        resolve_params("sad_count", {})
    for name in ("happy_count", "happy_binary", "sentence_length", "exact_answer"):
        assert name in str(info.value)
    with pytest.raises(RewardParamError, match="its parameters are: target_words"):
        resolve_params("sentence_length", {"target": 3})
    with pytest.raises(RewardParamError, match="bad parameters"):
        resolve_params("sentence_length", {"target_words": 2.5})
    with pytest.raises(RewardParamError, match="greater than or equal to 1") as info:
        resolve_params("happy_count", {"cap": 0})
    assert info.value.key == "params.cap"
    with pytest.raises(RewardParamError, match="which"):
        resolve_params("exact_answer", {"which": "middle"})


def test_defaults_are_filled_in():
    assert resolve_params("happy_binary", {}) == {"word": "happy", "min_count": 1, "case_sensitive": False}


def test_registry_has_the_required_rewards():
    assert {"happy_count", "happy_binary", "sentence_length", "exact_answer"} <= set(rewards.REWARDS)


def test_resolve_full_checks_weighted_sum_terms():
    from sweepgen_trainer.rewards import resolve_full

    out = resolve_full("weighted_sum", {"terms": [{"name": "happy_binary"}]})
    assert out["terms"][0] == {
        "name": "happy_binary",
        "params": resolve_params("happy_binary", {}),
        "weight": 1.0,
    }
    with pytest.raises(RewardParamError, match="unknown reward `nope`"):
        resolve_full("weighted_sum", {"terms": [{"name": "nope"}]})
    assert resolve_full("happy_count", {}) == resolve_params("happy_count", {})
