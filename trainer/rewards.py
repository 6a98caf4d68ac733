"""Named reward functions and their parameters, bound from the config with ``functools.partial``.

Pure Python (no torch): ``config.py`` validates reward names and parameters through this registry,
so a typo in a generated config fails at ``sweepgen check``, long before a model loads.

A reward function takes the decoded completions and the dataset columns of the same rows (TRL passes
them as keyword arguments) and returns one float per completion. Its tunable parameters are
keyword-only and typed; the registry turns them into a pydantic model, so unknown or mistyped
parameters are rejected and omitted ones are filled in (the resolved config shows every value).
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic
from pydantic import Field

from sweepgen.errors import UserError
from sweepgen_trainer import registry

PositiveInt = Annotated[int, Field(ge=1)]

RewardFn = Callable[..., list[float]]


@dataclass(frozen=True)
class RewardSpec:
    name: str
    fn: RewardFn
    params_model: type[pydantic.BaseModel]
    doc: str


REWARDS: dict[str, RewardSpec] = {}


class RewardParamError(ValueError):
    """A reward name or its parameters are wrong; the message lists what exists.

    ``key`` is the offending path inside the reward section (``name``, ``params.cap``), so the
    config loader can point at its line.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def register(name: str) -> Callable[[RewardFn], RewardFn]:
    """Add ``fn`` to the registry under ``name``; its keyword-only parameters become the params model."""

    def add(fn: RewardFn) -> RewardFn:
        REWARDS[name] = RewardSpec(name, fn, registry.params_model_of(name, fn), inspect.getdoc(fn) or "")
        return fn

    return add


def resolve_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Validate ``params`` for reward ``name``; return them with every default filled in."""
    return registry.resolve_params("reward", "rewards", REWARDS, name, params, RewardParamError)


def resolve_full(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """``resolve_params`` plus, for ``weighted_sum``, every term resolved and checked: the one
    config-time check of a reward, used wherever a config names one."""
    resolved = resolve_params(name, params)
    if name == "weighted_sum":
        resolved["terms"] = _check_weighted_terms(resolved["terms"])
    return resolved


def bind(name: str, params: dict[str, Any]) -> Callable[..., list[float]]:
    """A TRL-ready reward function: ``f(prompts, completions, **columns) -> list[float]``.

    The returned function is named after the reward, because TRL names its logged metrics
    (``rewards/<name>/mean``) after the function.
    """
    resolved = resolve_full(name, params)
    fn = functools.partial(REWARDS[name].fn, **resolved)

    def reward(
        prompts: list[Any] | None = None, completions: list[Any] | None = None, **columns: Any
    ) -> list[float]:
        # TRL adds bookkeeping kwargs (trainer_state, log_extra, ...); keep only dataset columns.
        texts = [_as_text(c) for c in completions or ()]
        return checked_values(name, fn(texts, columns), prompts, columns)

    reward.__name__ = reward.__qualname__ = name
    return reward


class RewardValueError(UserError):
    """A reward returned None, NaN or a non-number for a row: training on it would be training on garbage."""


def checked_values(name: str, values: Sequence[Any], prompts: Any, columns: dict[str, Any]) -> list[float]:
    """``values`` as floats, or RewardValueError naming the reward, the row and the value."""
    out = []
    for i, value in enumerate(values):
        number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
        if number is None or not _trainable(number):
            prompt = prompts[i] if prompts is not None and i < len(prompts) else None
            row = {k: v[i] for k, v in columns.items() if k not in _TRL_KWARGS and isinstance(v, list)}
            raise RewardValueError(
                f"reward `{name}` returned {value!r} for row {i} of the batch "
                f"(prompt {str(prompt)[:80]!r}, columns {row}); a reward must be a finite number",
                key="reward",
                hint="fix the reward function or the data row it fails on; a None or NaN reward "
                "is never trained on",
            )
        out.append(float(number))
    return out


# The smallest double that float32 rounds to inf: TRL keeps rewards in a float32 tensor.
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def _trainable(number: float) -> bool:
    """Finite, and still finite in TRL's float32 rewards tensor (False for NaN, inf, huge ints)."""
    return abs(number) < _FLOAT32_OVERFLOW


def dataset_columns(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The dataset columns among the keyword arguments TRL hands a reward function."""
    return {k: v for k, v in kwargs.items() if k not in _TRL_KWARGS}


def _as_text(completion: Any) -> str:
    # Conversational datasets give [{"role": "assistant", "content": ...}]; plain ones give strings.
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content", "") for m in completion)


def _count_word(text: str, word: str, case_sensitive: bool) -> int:
    flags = 0 if case_sensitive else re.IGNORECASE
    return len(re.findall(rf"\b{re.escape(word)}\b", text, flags))


@register("happy_count")
def happy_count(
    completions: Sequence[str],
    columns: dict[str, Any],
    *,
    cap: PositiveInt = 4,
    word: str = "happy",
    case_sensitive: bool = False,
) -> list[float]:
    """Whole-word occurrences of ``word``, divided by ``cap`` and clipped to 1 (so 0..1)."""
    return [min(_count_word(t, word, case_sensitive), cap) / cap for t in completions]


@register("happy_binary")
def happy_binary(
    completions: Sequence[str],
    columns: dict[str, Any],
    *,
    word: str = "happy",
    min_count: PositiveInt = 1,
    case_sensitive: bool = False,
) -> list[float]:
    """1.0 when ``word`` occurs at least ``min_count`` times as a whole word, else 0.0."""
    return [float(_count_word(t, word, case_sensitive) >= min_count) for t in completions]


_SENTENCE_END = re.compile(r"[.!?]+")


@register("sentence_length")
def sentence_length(
    completions: Sequence[str],
    columns: dict[str, Any],
    *,
    target_words: PositiveInt = 10,
) -> list[float]:
    """Mean over sentences of ``max(0, 1 - |words - target_words| / target_words)``; 0 if no words.

    Sentences are split at ``.``, ``!`` and ``?``; a trailing fragment counts as a sentence.
    """
    out = []
    for text in completions:
        lengths = [len(s.split()) for s in _SENTENCE_END.split(text) if s.split()]
        if not lengths:
            out.append(0.0)
            continue
        scores = [max(0.0, 1.0 - abs(n - target_words) / target_words) for n in lengths]
        out.append(sum(scores) / len(scores))
    return out


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@register("exact_answer")
def exact_answer(
    completions: Sequence[str],
    columns: dict[str, Any],
    *,
    answer_field: str = "answer",
    which: Literal["first", "last"] = "last",
) -> list[float]:
    """1.0 when the ``which`` (``first``/``last``) number in the completion equals the row's answer.

    The answer comes from the dataset column ``answer_field``; a missing column is an error, not 0.
    """
    if answer_field not in columns:
        raise RewardParamError(
            f"exact_answer needs a dataset column `{answer_field}`; the data has: "
            f"{', '.join(sorted(k for k in columns if k not in _TRL_KWARGS)) or '(none)'}"
        )
    out = []
    for text, answer in zip(completions, columns[answer_field], strict=True):
        numbers = _NUMBER.findall(text)
        if not numbers:
            out.append(0.0)
            continue
        got = numbers[-1] if which == "last" else numbers[0]
        out.append(float(float(got) == float(answer)))
    return out


def required_columns(name: str, params: dict[str, Any]) -> dict[str, str]:
    """Dataset columns reward ``name`` reads, with the kind each value must have (``number``: an int,
    a float or a string that parses as one; never null). Checked on every row before the model loads."""
    if name == "exact_answer":
        return {params["answer_field"]: "number"}
    if name == "weighted_sum":
        out: dict[str, str] = {}
        for term in params["terms"]:
            out.update(required_columns(term["name"], term["params"]))
        return out
    return {}


_TRL_KWARGS = {"trainer_state", "log_extra", "log_metric", "completion_ids", "prompts", "environments"}


@register("weighted_sum")
def weighted_sum(
    completions: Sequence[str],
    columns: dict[str, Any],
    *,
    terms: list[dict[str, Any]],
) -> list[float]:
    """Sum of other rewards: ``terms: [{name, params, weight}]`` (``params`` and ``weight`` optional)."""
    total = [0.0] * len(completions)
    for term in _check_weighted_terms(terms):
        values = REWARDS[term["name"]].fn(completions, columns, **term["params"])
        total = [t + term["weight"] * v for t, v in zip(total, values, strict=True)]
    return total


def _check_weighted_terms(terms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Resolve each term of a ``weighted_sum`` at config time (names, params, weights all explicit)."""
    resolved = []
    for index, term in enumerate(terms):
        at = f"params.terms.{index}"
        extra = set(term) - {"name", "params", "weight"}
        if "name" not in term or extra:
            raise RewardParamError(
                f"weighted_sum: each term is {{name, params, weight}}; got keys {sorted(term)}", key=at
            )
        if term["name"] == "weighted_sum":
            raise RewardParamError("weighted_sum: terms cannot nest another weighted_sum", key=f"{at}.name")
        params = resolve_params(term["name"], term.get("params", {}))
        weight = term.get("weight", 1.0)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool):
            raise RewardParamError(
                f"weighted_sum: weight of `{term['name']}` must be a number", key=f"{at}.weight"
            )
        if not math.isfinite(weight):
            raise RewardParamError(
                f"weighted_sum: weight of `{term['name']}` is {weight}; weights must be finite numbers",
                key=f"{at}.weight",
            )
        resolved.append({"name": term["name"], "params": params, "weight": float(weight)})
    return resolved
