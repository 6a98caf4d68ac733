"""Which way a metric is better when nobody said: a name with a lowered word (a loss, an error, a
perplexity) is lowered, any other name raised."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen import direction


@pytest.mark.parametrize(
    "metric",
    ["loss", "eval_loss", "train/nll", "valLoss", "eval/WER", "test-error", "ppl", "eval_perplexity@5"],
)
def test_a_name_with_a_lowered_word_is_lowered(metric):
    assert direction.lowered(metric) and direction.default_mode(metric) == "min"


@pytest.mark.parametrize(
    "metric",
    ["reward", "eval_acc", "rewards/mean", "kl", "entropy", "completion_length", "glossary", "lossy"],
)
def test_any_other_name_is_raised(metric):
    assert not direction.lowered(metric) and direction.default_mode(metric) == "max"


def test_no_metric_is_the_bundled_reward_which_is_raised():
    assert direction.default_mode(None) == "max"


@given(st.text(), st.sampled_from(sorted(direction.LOWERED)), st.sampled_from(["_", "/", ".", "-", "@2"]))
def test_a_lowered_word_anywhere_between_separators_makes_the_name_lowered(prefix, word, sep):
    assert direction.lowered(f"{prefix}{sep}{word}{sep}")
