"""What every reader returns: the file's data as a plain mapping, where each path is written, and
the parts the reader could not evaluate.

A reader understands most of a config and compares it as values. What it cannot evaluate (a call to
code it must not run, a shell command substitution, a condition it cannot decide) stays in the data
as a ``NotEvaluated`` node: equal to another one exactly when their normalised source is equal, so
such a part is never silently equal to a changed one and never a fake change after re-formatting.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

Path = tuple[Any, ...]


class NotEvaluated:
    """A part of a config the reader kept as normalised source instead of a value."""

    __slots__ = ("line", "source", "where")

    def __init__(self, source: str, where: str = "", line: int = 0) -> None:
        self.source = source
        self.where = where  # the file, for messages only: never part of equality
        self.line = line

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotEvaluated) and other.source == self.source

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("NotEvaluated", self.source))

    @property
    def at(self) -> str:
        return f"{self.where}:{self.line}" if self.line else self.where

    def __repr__(self) -> str:
        return f"<not evaluated{' at ' + self.at if self.at else ''}: {self.source}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> NotEvaluated:
        return self


class Ref(str):
    """A reference to a Python name or dotted attribute (``torch.bfloat16``), not a string literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class BigInt(str):
    """An integer longer than Python converts from text (4,300 digits): kept as its canonical
    decimal digits, so two are equal exactly when their values are, without the quadratic cost
    of building the number."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


BIG_DIGITS = 4000  # below Python's 4,300-digit int/str conversion limit


def big_int(text: str) -> BigInt | None:
    """``text`` as a ``BigInt`` when it is a decimal integer too long to convert; else None."""
    digits = text.replace("_", "")
    sign = "-" if digits.startswith("-") else ""
    digits = digits.lstrip("+-")
    if len(digits) <= BIG_DIGITS or not digits.isdigit():
        return None
    digits = digits.lstrip("0") or "0"
    return BigInt(("" if digits == "0" else sign) + digits)


@dataclass
class ReadResult:
    """A config read from one file: its data, the line of each path it knows, and warnings."""

    path: str
    data: Any
    lines: dict[Path, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # mappings whose keys number repeated entries (a script's `train.py`, `train.py #2`): compared
    # by content, not by their numbers (``sweepgen.readers.align.realign_occurrences``)
    numbered: tuple[Path, ...] = ()
    # mappings whose entries' order is meaning though keyed by name (a Hydra ``defaults:`` list read
    # as group -> option: the later entry wins where two write one key): ``@order`` when it differs
    ordered: tuple[Path, ...] = ()
    # a YAML stream of several documents, read as ``{"@documents": ...}``
    # (``sweepgen.readers.structured.yamldocs``)
    several_documents: bool = False

    def line_of(self, path: Path) -> int:
        """The line of ``path``, or of its closest enclosing path that has one; 0 if none."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 0)


MAX_VALUES = 2_000_000


def tree_size(value: Any, limit: int = MAX_VALUES) -> int:
    """How many values ``value`` holds when written out as a tree (a shared object counts each
    time it is reached, as a diff walks it), computed over the shared structure in linear time;
    stops counting past ``limit``."""
    memo: dict[int, int] = {}

    def size(item: Any) -> int:
        if not isinstance(item, (dict, list, tuple)):
            return 1
        known = memo.get(id(item))
        if known is not None:
            return known
        memo[id(item)] = limit + 1  # a cycle counts as too big
        children = list(item.values()) if isinstance(item, dict) else list(item)
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                break
        memo[id(item)] = min(total, limit + 1)
        return memo[id(item)]

    return size(value)


def not_evaluated(value: Any) -> Iterator[NotEvaluated]:
    """Every ``NotEvaluated`` node in ``value``, depth first."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, NotEvaluated):
            yield item
        elif isinstance(item, (dict, list, tuple)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(reversed(list(item.values() if isinstance(item, dict) else item)))
