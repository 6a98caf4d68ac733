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


# the names whose inferred direction the shared plural rule changed: each was max-is-better before
# (only `losses` and `errors` were listed by hand), so a report called the higher-nll arm the best
@pytest.mark.parametrize(
    "metric", ["nlls", "eval/nlls", "perplexities", "eval_perplexities", "regrets", "mses"]
)
def test_a_plural_of_a_lowered_word_is_lowered(metric):
    assert direction.lowered(metric) and direction.default_mode(metric) == "min"
    assert "min is better" in direction.inferred_words(metric, direction.default_mode(metric))


@pytest.mark.parametrize("metric", ["eval/losses", "errors", "train_losses"])
def test_the_plurals_listed_before_stay_lowered(metric):
    assert direction.lowered(metric)


@pytest.mark.parametrize("metric", ["kl", "entropy", "kls", "entropies", "rewards/accuracies", "lossy"])
def test_a_name_researchers_may_want_either_way_stays_raised_and_says_how_to_turn_it(metric):
    mode = direction.default_mode(metric)
    assert mode == "max" and "--mode min if a lower value is" in direction.inferred_words(metric, mode)


def test_plurals_are_read_by_the_same_rule_for_direction_and_for_proportions():
    assert direction.proportion_range("rewards/accuracies", [0.5]) == direction.UNIT
    assert not direction.LOWERED & {"losses", "errors"}  # the hand-listed plurals are gone: one rule
