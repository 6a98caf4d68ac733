"""A metric's logged values as two machine arrays: ``Points``, (step, value) pairs sorted by step.

A report holds every run's every metric at once, and a point as a tuple of Python objects took about
100 bytes: a 256 MiB metrics.jsonl held 1.7 GB while `report` ran. Here a point is 16 bytes (a
step beyond 64 bits, which no trainer logs, moves the steps into a list); the values are kept exactly,
so every statistic reads what it read before.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableSequence, Sequence
from typing import Any, overload


class Points(Sequence[tuple[int, float]]):
    """(step, value) pairs sorted by step, compared equal to any sequence of the same pairs."""

    __slots__ = ("_steps", "_values")

    def __init__(self, steps: Sequence[int] = (), values: Sequence[float] = ()) -> None:
        self._steps = steps
        self._values = values

    @classmethod
    def of(cls, pairs: Iterator[tuple[int, float]] | Sequence[tuple[int, float]]) -> Points:
        """Points of pairs already sorted by step."""
        builder = Builder()
        for step, value in pairs:
            builder.add(step, value)
        return builder.points()

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> tuple[int, float]: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[tuple[int, float], ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(zip(self._steps[index], self._values[index]))
        return (self._steps[index], self._values[index])

    def __iter__(self) -> Iterator[tuple[int, float]]:
        return zip(self._steps, self._values)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Points({tuple(self)!r})"


class Builder:
    """One metric's points as a log gives them: appended in the order logged; a step logged again
    keeps its last value, and steps logged out of order are sorted once at the end."""

    __slots__ = ("ordered", "steps", "values")

    def __init__(self) -> None:
        self.steps: MutableSequence[int] = array("q")
        self.values: MutableSequence[float] = array("d")
        self.ordered = True

    def add(self, step: int, value: float) -> None:
        steps = self.steps
        if steps and step <= steps[-1]:
            if step == steps[-1]:  # the same step again: the last value logged wins
                self.values[-1] = value
                return
            self.ordered = False
        try:
            steps.append(step)
        except OverflowError:  # a step beyond 64 bits: kept, as Python integers
            self.steps = steps = list(steps)
            steps.append(step)
        self.values.append(value)

    def points(self) -> Points:
        if self.ordered:
            return Points(self.steps, self.values)
        steps, values = self.steps, self.values
        order = sorted(range(len(steps)), key=steps.__getitem__)  # stable: the later of a step last
        last = [i for at, i in enumerate(order) if at + 1 == len(order) or steps[order[at + 1]] != steps[i]]
        return Points.of((steps[i], values[i]) for i in last)
