"""What a Python ``if`` (or ``for``) the reader cannot decide does to a config: the state before it
stays, and each change a branch would make is recorded where it would land, under its condition.

``cfg.train.batch_size = 1`` inside ``if os.environ.get("X") == "y":`` turns the value ``8`` into::

    {"@value": 8, "@when": {"os.environ.get('X') == 'y'": 1}}

so a change before the branch, inside it, or to its condition is a change of the data, and no known
value is dropped because a branch might have touched it. A branch is run on a copy of the state;
``overlay`` writes the differences back into the original objects, so every name that aliases a
mapping sees the same conditional value (as it would see the branch's assignment).
"""

from __future__ import annotations

from typing import Any

from sweepgen.paths import same

DELETED = "(deleted)"  # what a branch that deletes a key leaves there
_MISSING = object()


def _conditional(old: Any, branches: list[tuple[str, Any]]) -> dict[str, Any]:
    """``old`` as it stands, with the value each branch would give it under that branch's condition."""
    when = {cond: (DELETED if new is _MISSING else new) for cond, new in branches}
    return {"@when": when} if old is _MISSING else {"@value": old, "@when": when}


def overlay(old: dict[Any, Any], branches: list[tuple[str, dict[Any, Any]]], seen: set[int]) -> None:
    """Write into ``old`` (in place) what each branch's copy of it changed, under its condition."""
    if id(old) in seen:
        return
    seen.add(id(old))
    keys = list(old)
    for _, new in branches:
        keys.extend(k for k in new if k not in old and k not in keys)
    for key in keys:
        before = old.get(key, _MISSING)
        after = [(cond, new.get(key, _MISSING)) for cond, new in branches]
        changed = [(cond, value) for cond, value in after if not _same_or_missing(before, value)]
        if not changed:
            continue
        if isinstance(before, dict) and all(type(v) is type(before) for _, v in changed):
            overlay(before, changed, seen)
        elif (
            isinstance(before, list)
            and all(type(v) is list and len(v) == len(before) for _, v in changed)
            and id(before) not in seen
        ):
            seen.add(id(before))
            for index, item in enumerate(before):
                moved = [(cond, v[index]) for cond, v in changed if not same(item, v[index])]
                if moved and isinstance(item, dict) and all(type(v) is type(item) for _, v in moved):
                    overlay(item, moved, seen)
                elif moved:
                    before[index] = _conditional(item, moved)
        else:
            old[key] = _conditional(before, changed)


def _same_or_missing(a: Any, b: Any) -> bool:
    return (a is _MISSING and b is _MISSING) or (a is not _MISSING and b is not _MISSING and same(a, b))
