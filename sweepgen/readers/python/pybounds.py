"""Bounds on what the Python config reader computes, checked before computing it.

The reader evaluates the parts of a config that are data; an input must not make it build a
billion-character string or a million-digit integer (``'%0*d' % (10**9, 1)``, ``'a' * 10**9``,
``x = x * x`` in a loop). The limits are those of the Jinja sandbox templates run in
(``sweepgen.compile.template.sandbox``): integers up to 10,000 bits, strings and sequences up to a million
items here. An expression past a limit is not an error: it stays a not-evaluated node, compared by
its source, as anything else the reader does not run.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable
from typing import Any

import re2

MAX_INT_BITS = 10_000  # about 3,000 decimal digits, as in the template sandbox
MAX_SIZE = 1_000_000  # characters of a string, items of a list or tuple

# RE2, linear: Python's engine looked for the `)` of every `%(` again (quadratic in a `%(%(%(...` text)
_PERCENT = re2.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|[0-9]*)(?:\.(\*|[0-9]*))?[hlL]?([a-zA-Z%])")
_SPEC_NUMBERS = re.compile(r"[0-9]+")


def _bits(value: Any) -> int:
    return value.bit_length() if type(value) is int else 0


def _length(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, bytes)) else 0


def binop_fits(op: ast.operator, left: Any, right: Any) -> bool:
    """Would ``left <op> right`` stay within the bounds? Decided without computing it; the
    operators that cannot grow a value (``-``, ``/``, ``&``...) always fit."""
    fits = _BINOP_FITS.get(type(op))
    return fits is None or fits(left, right)


def _pow_fits(left: Any, right: Any) -> bool:
    if type(left) is int and type(right) is int:
        return abs(left) <= 1 or right < 0 or right * max(left.bit_length(), 1) <= MAX_INT_BITS
    if isinstance(right, (int, float)):
        return abs(right) <= 4096
    return True


def _lshift_fits(left: Any, right: Any) -> bool:
    if type(right) is not int:
        return True
    return right <= MAX_INT_BITS and _bits(left) + right <= MAX_INT_BITS


def _mult_fits(left: Any, right: Any) -> bool:
    """Integers by their bits; a sequence repeated by its length times the count."""
    if type(left) is int and type(right) is int:
        return _bits(left) + _bits(right) <= MAX_INT_BITS
    count = right if type(right) is int else left if type(left) is int else None
    if count is None:
        return True
    return max(count, 0) * (_length(left) or _length(right)) <= MAX_SIZE


def _add_fits(left: Any, right: Any) -> bool:
    return _length(left) + _length(right) <= MAX_SIZE


def _mod_fits(left: Any, right: Any) -> bool:
    return _percent_fits(left, right) if isinstance(left, str) else True


_BINOP_FITS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Pow: _pow_fits,
    ast.LShift: _lshift_fits,
    ast.Mult: _mult_fits,
    ast.Add: _add_fits,
    ast.Mod: _mod_fits,
}


def _percent_fits(template: str, args: Any) -> bool:
    """``template % args`` within bounds: widths and precisions (``*`` ones too) and the
    arguments' own sizes add up to at most ``MAX_SIZE`` characters."""
    items = list(args) if isinstance(args, tuple) else [args]
    total = len(template)
    for width, precision, _ in _PERCENT.findall(template):
        for part in (width, precision):
            size = _field_size(part, items)
            if size is None:
                return False
            total += size
    for item in items if isinstance(args, tuple) else [args]:
        total += _printed_size(item)
    return total <= MAX_SIZE


def _field_size(part: str, items: list[Any]) -> int | None:
    """A width or precision: ``*`` takes the next argument (None unless an int), digits are their
    number (nine or more are past any bound), nothing is 0."""
    if part == "*":
        star = items.pop(0) if items else 0
        return abs(star) if type(star) is int else None
    if part:
        return int(part) if len(part) < 9 else MAX_SIZE + 1
    return 0


def _printed_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if type(value) is int:
        return value.bit_length() // 3 + 2
    if isinstance(value, (float, bool)) or value is None:
        return 32
    return MAX_SIZE + 1  # a container (`'%(a)s' % mapping` too): not worth sizing, kept as source


def bounded_sum(items: Any, start: Any = 0) -> Any:
    """``sum(items, start)``, with a list or tuple ``start`` concatenated in one pass: Python's ``sum``
    copies the growing result at every step (quadratic: ``sum([[0] * 1000] * 5000, [])`` runs for
    minutes). None when the result would pass ``MAX_SIZE``; TypeError where Python's ``sum`` raises."""
    if not isinstance(start, (list, tuple)):
        return sum(items, start)  # numbers: the builtin's own loop is linear
    return _concatenated(start, items)


def _concatenated(start: list[Any] | tuple[Any, ...], items: Any) -> Any:
    kind = type(start)
    parts = [start, *items]
    if any(type(part) is not kind for part in parts):
        raise TypeError(f"can only concatenate {kind.__name__} to {kind.__name__}")
    if sum(len(part) for part in parts) > MAX_SIZE:
        return None
    joined = [item for part in parts for item in part]
    return joined if kind is list else tuple(joined)


def format_spec_fits(spec: str) -> bool:
    """A ``format()`` spec (``>10``, ``.3f``) whose width and precision are at most ``MAX_SIZE``."""
    return all(len(n) < 9 and int(n) <= MAX_SIZE for n in _SPEC_NUMBERS.findall(spec))


def str_method_fits(receiver: str, method: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """``receiver.method(*args)`` within bounds, for the string methods the reader evaluates; the
    methods that cannot grow the string always fit."""
    fits = _STR_METHOD_FITS.get(method)
    return fits is None or fits(receiver, args, [*args, *kwargs.values()])


def _format_fits(receiver: str, args: list[Any], values: list[Any]) -> bool:
    try:
        specs = [spec or "" for _, _, spec, _ in string.Formatter().parse(receiver)]
    except ValueError:
        return False
    if any("{" in spec for spec in specs):  # a width given as an argument: `{:>{}}`
        return False
    return all(format_spec_fits(spec) for spec in specs) and sum(map(_printed_size, values)) <= MAX_SIZE


def _join_fits(receiver: str, args: list[Any], values: list[Any]) -> bool:
    if not args or not isinstance(args[0], (list, tuple)):
        return True
    return sum(_printed_size(v) for v in args[0]) + len(receiver) * len(args[0]) <= MAX_SIZE


def _replace_fits(receiver: str, args: list[Any], values: list[Any]) -> bool:
    if len(args) < 2 or not isinstance(args[1], str):
        return True
    return len(receiver) * (len(args[1]) + 1) <= MAX_SIZE or len(receiver) + len(args[1]) <= 1000


def _pad_fits(receiver: str, args: list[Any], values: list[Any]) -> bool:
    return all(type(v) is not int or v <= MAX_SIZE for v in values)


_STR_METHOD_FITS: dict[str, Callable[[str, list[Any], list[Any]], bool]] = {
    "format": _format_fits,
    "join": _join_fits,
    "replace": _replace_fits,
    **dict.fromkeys(("zfill", "center", "ljust", "rjust"), _pad_fits),
}
