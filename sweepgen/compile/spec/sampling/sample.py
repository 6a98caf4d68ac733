"""Random search: the spec's ``sample:`` block and the seeded draw of its points.

The draw is identical on every platform, Python build and hash seed:

* ``method: random`` uses ``random.Random(seed).random()``, the one part of the stdlib generator
  whose sequence Python guarantees across versions; each point takes one uniform per axis, in the
  order the axes are written, and every distribution is a closed formula of its uniform (so adding,
  removing or reordering axes changes the draws: the seed, the axes and their order together name a
  sample; a larger ``n`` keeps the first points).
* ``method: sobol | lhs`` uses ``scipy.stats.qmc`` (scrambled, seeded), whose generator is numpy's
  PCG64: also platform-independent. scipy is imported only for these methods.
* ``log_uniform`` goes through ``exp``/``log``, which libm may round differently in the last
  place on another machine, so continuous draws are rounded to 12 significant digits: far below any
  hyper-parameter's meaning, far above libm's error. The lock records the rounded value, which is
  exactly what the config holds.
"""

from __future__ import annotations

import math
import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, model_validator

from sweepgen.compile.spec.sampling.digits import MAX_DIGITS

Number = StrictInt | StrictFloat
_STRICT = ConfigDict(extra="forbid", strict=True)
DRAW_DIGITS = 12  # significant digits kept from a continuous draw (see the module docstring)


class Distribution(BaseModel):
    """One sampled axis: exactly one of the four keys."""

    model_config = _STRICT
    uniform: list[Number] | None = Field(
        default=None, min_length=2, max_length=2, description="[low, high]: a float uniform in the range"
    )
    log_uniform: list[Number] | None = Field(
        default=None,
        min_length=2,
        max_length=2,
        description="[low, high], 0 < low: a float whose logarithm is uniform (learning rates, KL betas)",
    )
    int_uniform: list[StrictInt] | None = Field(
        default=None, min_length=2, max_length=2, description="[low, high]: an integer, both ends included"
    )
    choice: list[Any] | None = Field(default=None, min_length=1, description="one of the listed values")

    @model_validator(mode="after")
    def _one_kind(self) -> Distribution:
        given = [k for k in KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(KINDS)} (got {', '.join(given) or 'none'})")
        kind = given[0]
        if kind != "choice":  # a choice's values are taken as listed: no range to check
            lo, hi = getattr(self, kind)
            _ordered(kind, lo, hi)
            _drawable(kind, lo, hi)
        return self


def _ordered(kind: str, lo: float, hi: float) -> None:
    """A range's ends in order (and above 0 for a logarithm): a reversed or empty range has no
    draw that means what was written."""
    if not lo < hi:
        raise ValueError(f"{kind} needs low < high, got [{lo}, {hi}]")
    if kind == "log_uniform" and not lo > 0:
        raise ValueError(f"log_uniform needs 0 < low < high, got [{lo}, {hi}]")


INT_SPAN = 2**53  # integers a float draw reaches exactly: `u * (hi - lo + 1)` is a float product


def _drawable(kind: str, lo: float, hi: float) -> None:
    """Bounds a draw can use: finite, a uniform's span too (`[-1e308, 1e308]` drew `.inf`), and an
    int_uniform's ends within 2**53 (past it the float product loses integers, then overflows)."""
    if kind == "int_uniform":
        if max(abs(lo), abs(hi)) > INT_SPAN:  # the values themselves may be thousands of digits
            raise ValueError(f"int_uniform's ends must lie within ±2**53 ({INT_SPAN:,})")
    elif not math.isfinite(hi - lo):  # an infinite end makes the span infinite (or NaN: not < )
        raise ValueError(f"{kind} needs finite ends and a finite span (high - low), got [{lo}, {hi}]")


KINDS = ("uniform", "log_uniform", "int_uniform", "choice")


class SampleBlock(BaseModel):
    """Seeded random (or quasi-random) search: ``n`` points, each crossed with the named variants."""

    model_config = _STRICT
    n: StrictInt = Field(ge=1, description="number of points to draw")
    seed: StrictInt = Field(ge=0, description="seed of the draw; the same seed gives the same points")
    method: Literal["random", "sobol", "lhs"] = Field(
        default="random",
        description="random: seeded pseudo-random; sobol / lhs: quasi-random through scipy.stats.qmc",
    )
    digits: StrictInt = Field(
        default=3, ge=1, le=MAX_DIGITS, description="significant digits of a drawn number in variant names"
    )
    axes: dict[StrictStr, Distribution] = Field(
        min_length=1,
        description="dotted path -> {uniform: [lo, hi]} | {log_uniform: [lo, hi]} | "
        "{int_uniform: [lo, hi]} | {choice: [values]}",
    )


def _unit_points(block: SampleBlock) -> list[list[float]]:
    """``n`` points in the unit cube, one coordinate per axis, in the order the axes are written."""
    dims = len(block.axes)
    if block.method == "random":
        rng = random.Random(block.seed)
        return [[rng.random() for _ in range(dims)] for _ in range(block.n)]
    # function-local: scipy is an optional extra, and costs ~0.3 s to import
    from scipy.stats import qmc

    engine: Any
    if block.method == "sobol":
        engine = qmc.Sobol(d=dims, scramble=True, seed=block.seed)
    else:
        engine = qmc.LatinHypercube(d=dims, seed=block.seed)
    return [[float(x) for x in row] for row in engine.random(block.n)]


def value_at(dist: Distribution, u: float) -> Any:
    """The value of one axis at unit coordinate ``u`` in [0, 1)."""
    if dist.uniform is not None:
        lo, hi = dist.uniform
        return _round(lo + (hi - lo) * u)
    if dist.log_uniform is not None:
        lo, hi = dist.log_uniform
        return _round(math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * u))
    if dist.int_uniform is not None:
        lo, hi = dist.int_uniform
        return lo + min(int(u * (hi - lo + 1)), hi - lo)
    assert dist.choice is not None  # _one_kind guarantees exactly one kind
    return dist.choice[min(int(u * len(dist.choice)), len(dist.choice) - 1)]


def draw(block: SampleBlock) -> list[list[Any]]:
    """Every point's values, axis by axis in written order."""
    dists = list(block.axes.values())
    return [[value_at(d, u) for d, u in zip(dists, point)] for point in _unit_points(block)]


def short_number(value: float, digits: int) -> str:
    """A readable label for a drawn number: ``digits`` significant digits, shortest spelling."""
    return f"{value:.{digits}g}"


def _round(x: float) -> float:
    return float(f"{x:.{DRAW_DIGITS}g}")
