"""Which way a metric is better when nobody said: a loss is lowered, anything else is raised.

`report --metric loss` without `--mode` once named the run with the highest loss the best and
called the lower-loss arms "worse". A name counts as lowered only when one of its words says so
(split at `_ / . - @`, digits and camelCase: `eval_loss`, `train/nll`, `valLoss`, `wer`), so a
name RL runs may want either way (`kl`, `entropy`, `completion_length`) stays raised unless the
user says otherwise, and every inferred `min` is printed with how to override it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

# singular words: a plural in a name (`losses`, `eval/nlls`, `perplexities`, `regrets`) is read through
# `_singular`, the one rule `lowered` and `proportion_range` share (a hand-listed plural once left
# `nlls` and `perplexities` max-is-better)
LOWERED = frozenset(
    {
        "loss",
        "nll",
        "perplexity",
        "ppl",
        "error",
        "err",
        "mse",
        "mae",
        "rmse",
        "wer",
        "cer",
        "regret",
    }
)
UNIT = (0.0, 1.0)
# words that name a share of items or of steps: a metric named so, with every value in [0, 1], is a
# proportion, whose intervals `report` and a search's best line keep inside [0, 1]
# (sweepgen/run/report/stats/bounds.py says why)
PROPORTION_WORDS = frozenset(
    {
        "acc",
        "accuracy",
        "pass",
        "precision",
        "recall",
        "success",
        "correct",
        "rate",
        "ratio",
        "fraction",
        "frac",
    }
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SEPARATORS = re.compile(r"[^a-z]+")


def words(metric: str) -> set[str]:
    """The words of a metric's name: split at non-letters and camelCase, lower case."""
    return set(_SEPARATORS.split(_CAMEL.sub(" ", metric).lower()))


def _singular(word: str) -> str:
    """A plural's singular, as metric names form it: TRL's DPO and reward trainers log
    `rewards/accuracies`, a share like `accuracy`."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):  # successes, passes
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):  # never `pass`, `success`
        return word[:-1]
    return word


def singular_words(metric: str) -> set[str]:
    """The words of a metric's name, each plural read as its singular."""
    return {_singular(word) for word in words(metric)}


def lowered(metric: str) -> bool:
    """True when a word of ``metric`` names something lowered (a loss, an error, a perplexity)."""
    return bool(singular_words(metric) & LOWERED)


def default_mode(metric: str | None) -> str:
    """``min`` for a metric whose name says it is lowered, else ``max`` (the bundled trainer's
    reward, when no metric is named)."""
    return "min" if metric is not None and lowered(metric) else "max"


def inferred_words(metric: str | None, mode: str) -> str:
    """How a direction nobody gave was chosen, to print beside it."""
    if mode == "min":
        return f"min is better: `{metric}` names something lowered; --mode max if it is not"
    return "max is better: --mode min if a lower value is"


def proportion_range(metric: str | None, values: Iterable[float]) -> tuple[float, float] | None:
    """[0, 1] for a metric whose name says it is a proportion and whose every value lies there;
    None otherwise (no bound is assumed: a reward or a loss has none)."""
    if metric is None or not singular_words(metric) & PROPORTION_WORDS:
        return None
    return UNIT if all(math.isfinite(v) and UNIT[0] <= v <= UNIT[1] for v in values) else None
