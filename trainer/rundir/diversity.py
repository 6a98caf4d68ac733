"""Diversity of sampled completions: how many are distinct, how much they overlap.

Pure functions over strings. A policy that collapsed onto one completion (reward hacking by
repetition) shows a low unique ratio and a high mean pairwise Jaccard similarity.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations


def unique_ratio(samples: Sequence[str]) -> float:
    """Distinct completions / completions (1.0 for an empty list: nothing repeated)."""
    return len(set(samples)) / len(samples) if samples else 1.0


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| of two word sets; two empty sets are identical (1.0)."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def mean_pairwise_jaccard(samples: Sequence[str]) -> float:
    """Mean Jaccard similarity of the word sets over all pairs (0.0 with fewer than two samples)."""
    sets = [frozenset(s.split()) for s in samples]
    pairs = list(combinations(sets, 2))
    if not pairs:
        return 0.0
    return sum(jaccard(a, b) for a, b in pairs) / len(pairs)


def diversity(samples: Sequence[str]) -> dict[str, float]:
    return {
        "n_samples": len(samples),
        "unique_ratio": unique_ratio(samples),
        "mean_pairwise_jaccard": mean_pairwise_jaccard(samples),
    }


def is_degenerate(div: dict[str, float], *, min_unique_ratio: float, max_jaccard: float) -> bool:
    return div["unique_ratio"] < min_unique_ratio or div["mean_pairwise_jaccard"] > max_jaccard
