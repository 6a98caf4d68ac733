"""Diversity metrics of sampled completions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sweepgen_trainer.rundir.diversity import (
    diversity,
    is_degenerate,
    jaccard,
    mean_pairwise_jaccard,
    unique_ratio,
)

texts = st.lists(st.text(alphabet="ab c", max_size=8), max_size=8)


def test_examples():
    assert unique_ratio(["a", "a", "b", "c"]) == 0.75
    assert mean_pairwise_jaccard(["a b", "b c"]) == pytest.approx(1 / 3)
    assert mean_pairwise_jaccard(["x y", "x y", "x y"]) == 1.0
    assert mean_pairwise_jaccard(["only one"]) == 0.0


@given(texts)
def test_bounds(samples):
    d = diversity(samples)
    assert 0.0 <= d["unique_ratio"] <= 1.0
    assert 0.0 <= d["mean_pairwise_jaccard"] <= 1.0
    assert d["n_samples"] == len(samples)


@given(st.text(alphabet="ab c", max_size=8), st.integers(2, 6))
def test_collapsed_policy_is_degenerate(text, n):
    d = diversity([text] * n)
    assert d["unique_ratio"] == 1 / n and d["mean_pairwise_jaccard"] == 1.0
    assert is_degenerate(d, min_unique_ratio=0.5, max_jaccard=0.8)


@given(st.frozensets(st.sampled_from("abcdef")), st.frozensets(st.sampled_from("abcdef")))
def test_jaccard_symmetric(a, b):
    assert jaccard(a, b) == jaccard(b, a)
    assert (jaccard(a, b) == 1.0) == (a == b)
