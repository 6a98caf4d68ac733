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

import re
import string
from collections.abc import Iterable, Iterator
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
        if kind is int:
            return 1 + _big_digits([item])
        if not isinstance(item, (list, tuple, dict)):
            return 1
        known = seen.get(id(item))
        if known is not None:
            return known
        if depth > 200:  # deeper than any config: counted as too heavy rather than recursed
            return limit + 1
        seen[id(item)] = limit + 1  # a cycle counts as too heavy
        children: Any = [x for pair in item.items() for x in pair] if isinstance(item, dict) else item
        kinds = set(map(type, children))
        if kinds <= _SCALARS:  # a flat list of numbers: counted at C speed
            total = 1 + len(children) + (_big_digits(children, kinds) if int in kinds else 0)
        else:
            total = 1
            for child in children:
                total += visit(child, depth + 1)
                if total > limit:
                    break
        seen[id(item)] = total = min(total, limit + 1)
        return total

    return visit(value, 0)


def _big_digits(items: Any, kinds: Any = frozenset({int})) -> int:
    """The digits of the integers among ``items`` past 64 bits: a 10,000-bit integer prints as 3,011
    characters, so `[2**9999] * 300000` (weighed as 300,000 items) printed 900 MB in one C call.
    Smaller numbers print at most 20 characters, as many as a float, and count as one item."""
    ints = items if kinds <= {int, bool} else [x for x in items if type(x) is int]
    if max(map(int.bit_length, ints), default=0) <= 64:
        return 0
    return sum(bits * 31 // 100 for bits in map(int.bit_length, ints) if bits > 64)


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


def check_batch(linecount: Any = None, fill_with: Any = None) -> None:
    """``batch(n, fill)`` pads its last batch to ``n`` items: `[1] | batch(10**9, 'x')` a billion."""
    if fill_with is not None and type(linecount) is int and linecount > MAX_WEIGHT:
        raise LimitExceeded(f"`batch` of {linecount:,} filled items, more than {MAX_WEIGHT:,}")


def check_slices(value: Any, slices: Any) -> None:
    if type(slices) is int and slices > MAX_WEIGHT:
        raise LimitExceeded(f"`slice` into {slices:,} lists, more than {MAX_WEIGHT:,}")


def printed_size(value: Any) -> int:
    """At most how many characters ``str(value)`` prints: a string's length; anything else from its
    weight, each item or character as up to 24 (a float's digits, a container's quotes and commas)."""
    return len(value) if isinstance(value, str) else 24 * weight(value)


def _widest(texts: Iterable[str]) -> int:
    """The largest width or precision written in these format specs (seven digits at most: a longer
    one is refused before this is asked)."""
    return max((int(n[:8]) for text in texts for n in _DIGITS.findall(text)), default=0)


_DIGITS = re.compile(r"[0-9]+")


def check_formatted(what: str, text: str, fields: int, width: int, values: Iterable[Any]) -> None:
    """A format string of ``fields`` fields filled from ``values``, before it is built: one value
    repeated in every field (`('{a}' * 1000000).format(a=s)`) or a width in every field builds a
    string far larger than its inputs, in one C call no deadline stops."""
    if not fields:
        return
    biggest = max((printed_size(v) for v in values), default=0)
    if len(text) + fields * max(width, biggest) > MAX_WEIGHT:
        raise LimitExceeded(
            f"`{what}` would build a string of more than {MAX_WEIGHT:,} characters ({fields:,} fields)"
        )


def check_str_format(what: str, text: str, values: list[Any], widths_from_values: bool) -> None:
    """``text.format(...)`` / ``format_map``; ``widths_from_values``: a spec takes its width from an
    argument (`{:>{}}`), so any integer argument may be one."""
    try:
        parsed = [(name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name is not None]
    except ValueError:
        return  # Python refuses the string itself, building nothing
    width = _widest(spec or "" for _, spec in parsed)
    if widths_from_values:
        width = max([width, *(v for v in values if type(v) is int)])
    check_formatted(what, text, len(parsed), width, values)


def check_percent_format(text: str, right: Any) -> None:
    """``text % right`` (the operator and the `format` filter): each `%` a field at most."""
    if isinstance(right, dict):
        values = list(right.values())
    else:
        values = list(right) if type(right) is tuple else [right]
    width = _widest(re.findall(r"%[-#0 +]*([0-9]*(?:\.[0-9]*)?)", text))
    if "*" in text:  # `%*d`: the width is an argument
        width = max([width, *(v for v in values if type(v) is int)])
    check_formatted("%", text, text.count("%"), width, values)


def joined(parts: Iterable[Any], separator: Any) -> Iterator[Any]:
    """``parts`` for `separator.join` (the method and the filter), counting what the result will
    hold as they are handed over: `('a' * 1000).join('b' * 1000000)` built a gigabyte at once."""
    size, step = 0, len(separator) if isinstance(separator, str) else 0
    for i, part in enumerate(parts):
        size += printed_size(part) + (step if i else 0)
        if size > MAX_WEIGHT:
            raise LimitExceeded(f"`join` would build a string of more than {MAX_WEIGHT:,} characters")
        yield part


def check_expandtabs(text: str, tabsize: Any = 8) -> None:
    """``text.expandtabs(tabsize)``: each tab becomes up to ``tabsize`` blanks."""
    if type(tabsize) is int and len(text) + text.count("\t") * max(tabsize - 1, 0) > MAX_WEIGHT:
        raise LimitExceeded(f"`expandtabs` would build a string of more than {MAX_WEIGHT:,} characters")


def check_translate(text: str, table: Any) -> None:
    """``text.translate(table)``: each character its table's string."""
    if _translated_size(text, table) > MAX_WEIGHT:
        raise LimitExceeded(f"`translate` would build a string of more than {MAX_WEIGHT:,} characters")


def _translated_size(text: str, table: Any) -> int:
    """A mapping of a few hundred entries counted exactly (each key's occurrences); a longer table
    or a list as if every character became its longest string."""
    if isinstance(table, dict) and len(table) <= 256:
        return len(text) + sum(text.count(chr(k)) * (len(v) - 1) for k, v in _growing(table))
    return len(text) * max((len(v) for v in _children(table) if isinstance(v, str)), default=1)


def _growing(table: dict[Any, Any]) -> list[tuple[int, str]]:
    """The entries of a translation table that replace a character with a longer string."""
    entries = [(k, v) for k, v in table.items() if type(k) is int and isinstance(v, str)]
    return [(k, v) for k, v in entries if len(v) > 1 and 0 <= k <= 0x10FFFF]


def _children(item: Any) -> Any:
    return item.values() if isinstance(item, dict) else item if isinstance(item, list | tuple) else ()


def check_indent(what: str, value: Any, unit: Any, *, per_level: bool) -> None:
    """An indented dump of ``value`` (`to_json(indent=N)`, `to_yaml(indent=N)`): every line it writes
    carries ``unit`` characters, times its nesting level when ``per_level`` (JSON), so a large indent
    multiplies the value's size (`tojson(indent=9999999)` of ten nested lists: a gigabyte). The walk
    ends as soon as the lines' indentation alone passes the bound."""
    width = len(unit) if isinstance(unit, str) else unit if type(unit) is int else 0
    if width <= 0 or not isinstance(value, dict | list | tuple):
        return
    total, pending = 0, [(value, 0)]
    while pending:
        item, depth = pending.pop()
        total += width * ((depth + 1) * 2 if per_level else 1)
        if total > MAX_WEIGHT:
            raise LimitExceeded(
                f"`{what}` with indent {width:,} would write more than {MAX_WEIGHT:,} characters"
            )
        pending.extend((child, depth + 1) for child in _children(item))
