"""Per-call cost bounds of the template sandbox: what one filter, method or operator may build.

The time budget (``sandbox.time_budget``) is noticed between steps, and a call still running in
Python past the deadline is interrupted there; a call inside C (a sort, a string method) is not, so
one call must be bounded on its own. Two kinds of call can run long: those that build a value far
larger than their inputs (``"x" * n``, ``[x] * n``, ``replace``, ``lipsum(n)``, a padding width),
and those whose work grows faster than what they build (``sum(lists, start=[])`` and ``wordwrap``
of one long word are quadratic). The first are refused from the size of the result, computed
before it is built; the second are done linearly or refused from the size of their input.

A value's *weight* counts what a walk over it visits: one per item and per character, a shared
list once per reference. ``[x] * 1000`` of a million-item ``x`` is a thousand items that ``==``,
``{{ }}``, ``tojson``, ``to_yaml`` or ``pyrepr`` would walk as a billion: the value is refused where it
is built (``*``, ``+``, a list, tuple or dict written in the template), so every walk of a value the
sandbox holds stays within ``MAX_WEIGHT``.
"""

from __future__ import annotations

from typing import Any

from jinja2 import pass_environment
from jinja2.exceptions import TemplateRuntimeError
from jinja2.filters import make_attrgetter

MAX_WEIGHT = 10_000_000  # items and characters a walk over one value may visit
MAX_WRAP = 100_000  # characters `wordwrap` takes: textwrap is quadratic in one long word
MAX_LIPSUM_WORDS = 100_000  # `lipsum`'s paragraphs times its words per paragraph


class LimitExceeded(TemplateRuntimeError):
    """A sandboxed operation would build a value beyond its bounds (here and in ``sandbox``)."""


_SCALARS = frozenset({int, float, bool, type(None)})


def weight(value: Any, limit: int = MAX_WEIGHT, memo: dict[int, int] | None = None) -> int:
    """What a walk over ``value`` visits (see the module's docstring), computed over the shared
    structure once per distinct object (``memo``: shared between calls on parts of one value);
    stops counting past ``limit``."""
    seen: dict[int, int] = {} if memo is None else memo

    def visit(item: Any, depth: int) -> int:
        kind = type(item)
        if kind is str:
            return 1 + len(item)
        if not isinstance(item, (list, tuple, dict)):
            return 1
        known = seen.get(id(item))
        if known is not None:
            return known
        if depth > 200:  # deeper than any config: counted as too heavy rather than recursed
            return limit + 1
        seen[id(item)] = limit + 1  # a cycle counts as too heavy
        children: Any = [x for pair in item.items() for x in pair] if isinstance(item, dict) else item
        if set(map(type, children)) <= _SCALARS:  # a flat list of numbers: counted at C speed
            total = 1 + len(children)
        else:
            total = 1
            for child in children:
                total += visit(child, depth + 1)
                if total > limit:
                    break
        seen[id(item)] = total = min(total, limit + 1)
        return total

    return visit(value, 0)


def check_weight(what: str, *values: Any) -> None:
    total, memo = 0, dict[int, int]()
    for value in values:
        total += weight(value, MAX_WEIGHT - total, memo)
        if total > MAX_WEIGHT:
            raise LimitExceeded(
                f"{what} would build a value of more than {MAX_WEIGHT:,} items and characters"
            )


def check_repeat(sequence: Any, count: int) -> None:
    """``sequence * count``: its weight times the count."""
    if count > 0 and weight(sequence) * count > MAX_WEIGHT:
        raise LimitExceeded(f"`*` would build a value of more than {MAX_WEIGHT:,} items and characters")


@pass_environment
def sum_filter(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """Jinja's ``sum``, with a list or tuple ``start`` concatenated in one pass and bounded: Python's
    ``sum`` copies the growing result at every step (quadratic in the item count)."""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    if not isinstance(start, (list, tuple)):
        return sum(iterable, start)  # numbers: linear (a string start is Python's TypeError)
    items = list(iterable)
    kind = type(start)
    if any(type(part) is not kind for part in items):
        raise TypeError(f"can only concatenate {kind.__name__} (not another type) to {kind.__name__}")
    check_weight("`sum`", start, *items)
    joined = [item for part in (start, *items) for item in part]
    return joined if kind is list else tuple(joined)


def check_wrap(text: Any, width: Any) -> None:
    if isinstance(text, str) and len(text) > MAX_WRAP:
        raise LimitExceeded(f"`wordwrap` of {len(text):,} characters, more than {MAX_WRAP:,}")
    if type(width) is int and width < 1:
        raise LimitExceeded(f"`wordwrap` width {width} (must be at least 1)")


def check_lipsum(*args: Any, **kwargs: Any) -> None:
    """``lipsum(n=5, html=True, min=20, max=100)``: at most ``MAX_LIPSUM_WORDS`` words in all."""
    named = dict(zip(("n", "html", "min", "max"), args), **kwargs)
    n, low, high = named.get("n", 5), named.get("min", 20), named.get("max", 100)
    words = (n if type(n) is int else 0) * (high if type(high) is int else 0)
    if words > MAX_LIPSUM_WORDS or (type(low) is int and low > MAX_LIPSUM_WORDS):
        raise LimitExceeded(f"`lipsum` of more than {MAX_LIPSUM_WORDS:,} words")


def check_replace(text: Any, old: Any, new: Any, count: Any = -1) -> None:
    """``text.replace(old, new)`` (the method and the filter): the result's size, before building it."""
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    hits = text.count(old) if old else len(text) + 1
    if type(count) is int and count >= 0:
        hits = min(hits, count)
    if len(text) + hits * (len(new) - len(old)) > MAX_WEIGHT:
        raise LimitExceeded(f"`replace` would build a string of more than {MAX_WEIGHT:,} characters")


def check_slices(value: Any, slices: Any) -> None:
    if type(slices) is int and slices > MAX_WEIGHT:
        raise LimitExceeded(f"`slice` into {slices:,} lists, more than {MAX_WEIGHT:,}")
