"""What a call the Python reader does not follow was given, when a name's object changes after it.

``c = Trainer(args); args.lr = 2`` keeps ``args`` in ``c``'s record by reference, as an object
that keeps its argument sees it: ``lr`` 2. An object that copies what it is given (most trainers
copy their config) saw ``lr`` 1 there, and which one a call is only its code tells. So where an
argument the call was handed by a name (``args``, ``cfg.optim``, ``parts[0]``) holds something
else at the end than when the call ran, the record keeps what it held then under ``@given``
(only the arguments that changed): moving the assignment across the call, or editing a value a
later assignment overwrites, is then a change, never "no differences".
"""

from __future__ import annotations

import ast
from typing import Any

from sweepgen.readers.diff import strictly_equal
from sweepgen.readers.python.pyvalues import CallData

# an argument spelled as a reference to an object some name holds: a literal, a nested call or an
# expression builds a new object that only the record holds (a change to it goes through the
# record: detectron2's LazyCall, read as the call's own keywords)
_REFERENCES = (ast.Name, ast.Attribute, ast.Subscript)


class GivenArguments:
    """The arguments held by a name of each call kept as a record, with a copy of each as given."""

    def __init__(self) -> None:
        self.calls: list[tuple[CallData, list[tuple[str, Any, Any, Any]]]] = []

    def note(self, record: CallData, node: ast.Call) -> None:
        """Copies the arguments of ``node`` (just made into ``record``) that a name holds, or that a
        spread (``*args``, ``**cfg``) gave: a spread copies the container, never its items."""
        held = _positional(record, node) + _keywords(record, node)
        if held:
            self.calls.append((record, held))

    def settle(self) -> None:
        """Adds ``@given`` to each record whose named arguments changed after the call."""
        for record, held in self.calls:
            given: dict[str, dict[Any, Any]] = {}
            for part, key, value, then in held:
                if not strictly_equal(value, then):
                    given.setdefault(part, {})[key] = then
            if given:
                record["@given"] = given


def _positional(record: CallData, node: ast.Call) -> list[tuple[str, Any, Any, Any]]:
    """The positional arguments a name or a ``*args`` spread handed over, each with its copy."""
    spread = any(isinstance(a, ast.Starred) for a in node.args)
    sources: list[ast.expr | None] = [None] * len(record["args"]) if spread else list(node.args)
    return [
        ("args", index, value, _copied(value, {}))
        for index, (arg, value) in enumerate(zip(sources, record["args"]))
        if _shared(arg, value)
    ]


def _keywords(record: CallData, node: ast.Call) -> list[tuple[str, Any, Any, Any]]:
    """The keyword arguments a name or a ``**cfg`` spread handed over, each with its copy."""
    named = {k.arg: k.value for k in node.keywords if k.arg is not None}
    spreads = any(k.arg is None for k in node.keywords)
    return [
        ("kwargs", key, value, _copied(value, {}))
        for key, value in record["kwargs"].items()
        if (key in named or spreads) and _shared(named.get(key), value)
    ]


def _shared(node: ast.expr | None, value: Any) -> bool:
    """A container handed over by a name, or by a spread (``node`` None)."""
    return (node is None or isinstance(node, _REFERENCES)) and isinstance(value, (dict, list, set))


def _copied(value: Any, memo: dict[int, Any]) -> Any:
    """The containers of ``value`` copied, what they hold (a function, a reference, a value not
    evaluated) kept itself, so that only a change to the data is a change; shared parts stay
    shared, as ``copy.deepcopy`` keeps them."""
    if not isinstance(value, (dict, list, set, tuple)):
        return value
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, dict):
        out: Any = type(value)()
        memo[id(value)] = out
        out.update((k, _copied(v, memo)) for k, v in value.items())
        return out
    if isinstance(value, list):
        items: list[Any] = []
        memo[id(value)] = items
        items.extend(_copied(v, memo) for v in value)
        return items
    return type(value)(_copied(v, memo) for v in value)
