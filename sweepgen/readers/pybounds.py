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
from typing import Any

MAX_INT_BITS = 10_000  # about 3,000 decimal digits, as in the template sandbox
MAX_SIZE = 1_000_000  # characters of a string, items of a list or tuple

_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|[0-9]*)(?:\.(\*|[0-9]*))?[hlL]?([a-zA-Z%])")
_SPEC_NUMBERS = re.compile(r"[0-9]+")


def _bits(value: Any) -> int:
    return value.bit_length() if type(value) is int else 0


def _length(value: Any) -> int:
    return len(value) if isinstance(value, (str, list, tuple, bytes)) else 0


def binop_fits(op: ast.operator, left: Any, right: Any) -> bool:
    """Would ``left <op> right`` stay within the bounds? Decided without computing it."""
    if isinstance(op, ast.Pow) and type(left) is int and type(right) is int:
        return abs(left) <= 1 or right < 0 or right * max(left.bit_length(), 1) <= MAX_INT_BITS
    if isinstance(op, ast.Pow) and isinstance(right, (int, float)):
        return abs(right) <= 4096
    if isinstance(op, ast.LShift) and type(right) is int:
        return right <= MAX_INT_BITS and _bits(left) + right <= MAX_INT_BITS
    if isinstance(op, ast.Mult):
        if type(left) is int and type(right) is int:
            return _bits(left) + _bits(right) <= MAX_INT_BITS
        count = right if type(right) is int else left if type(left) is int else None
        if count is not None:
            return max(count, 0) * (_length(left) or _length(right)) <= MAX_SIZE
    if isinstance(op, ast.Add):
        return _length(left) + _length(right) <= MAX_SIZE
    if isinstance(op, ast.Mod) and isinstance(left, str):
        return _percent_fits(left, right)
    return True


def _percent_fits(template: str, args: Any) -> bool:
    """``template % args`` within bounds: widths and precisions (``*`` ones too) and the
    arguments' own sizes add up to at most ``MAX_SIZE`` characters."""
    items = list(args) if isinstance(args, tuple) else [args]
    total = len(template)
    for width, precision, _ in _PERCENT.findall(template):
        for part in (width, precision):
            if part == "*":
                star = items.pop(0) if items else 0
                if type(star) is not int:
                    return False
                total += abs(star)
            elif part:
                total += int(part) if len(part) < 9 else MAX_SIZE + 1
    for item in items if isinstance(args, tuple) else [args]:
        total += _printed_size(item)
    return total <= MAX_SIZE


def _printed_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if type(value) is int:
        return value.bit_length() // 3 + 2
    if isinstance(value, (float, bool)) or value is None:
        return 32
    if isinstance(value, dict):
        return MAX_SIZE + 1  # `'%(a)s' % mapping`: only a mapping of small values is worth it
    return MAX_SIZE + 1


def bounded_sum(items: Any, start: Any = 0) -> Any:
    """``sum(items, start)``, with a list or tuple ``start`` concatenated in one pass: Python's ``sum``
    copies the growing result at every step (quadratic: ``sum([[0] * 1000] * 5000, [])`` runs for
    minutes). None when the result would pass ``MAX_SIZE``; TypeError where Python's ``sum`` raises."""
    if not isinstance(start, (list, tuple)):
        return sum(items, start)  # numbers: the builtin's own loop is linear
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
    return all(int(n) <= MAX_SIZE for n in _SPEC_NUMBERS.findall(spec) if len(n) < 9) and not any(
        len(n) >= 9 for n in _SPEC_NUMBERS.findall(spec)
    )


def str_method_fits(receiver: str, method: str, args: list[Any], kwargs: dict[str, Any]) -> bool:
    """``receiver.method(*args)`` within bounds, for the string methods the reader evaluates."""
    values = [*args, *kwargs.values()]
    if method == "format":
        try:
            specs = [spec or "" for _, _, spec, _ in string.Formatter().parse(receiver)]
        except ValueError:
            return False
        if any("{" in spec for spec in specs):  # a width given as an argument: `{:>{}}`
            return False
        return all(format_spec_fits(spec) for spec in specs) and sum(map(_printed_size, values)) <= MAX_SIZE
    if method == "join" and args and isinstance(args[0], (list, tuple)):
        return sum(_printed_size(v) for v in args[0]) + len(receiver) * len(args[0]) <= MAX_SIZE
    if method == "replace" and len(args) >= 2 and isinstance(args[1], str):
        return len(receiver) * (len(args[1]) + 1) <= MAX_SIZE or len(receiver) + len(args[1]) <= 1000
    if method in ("zfill", "center", "ljust", "rjust"):
        return all(type(v) is not int or v <= MAX_SIZE for v in values)
    return True
