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
    for key in _keys(old, branches):
        before = old.get(key, _MISSING)
        changed = _changed(before, key, branches)
        if not changed:
            continue
        if _mappings_alike(before, changed):
            overlay(before, changed, seen)
        elif _lists_alike(before, changed, seen):
            _overlay_list(before, changed, seen)
        else:
            old[key] = _conditional(before, changed)


def _changed(before: Any, key: Any, branches: list[tuple[str, dict[Any, Any]]]) -> list[tuple[str, Any]]:
    """(condition, value) for each branch that leaves ``key`` other than it was (``_MISSING``: deleted)."""
    after = [(cond, new.get(key, _MISSING)) for cond, new in branches]
    return [(cond, value) for cond, value in after if not _same_or_missing(before, value)]


def _keys(old: dict[Any, Any], branches: list[tuple[str, dict[Any, Any]]]) -> list[Any]:
    """``old``'s keys, then each key a branch adds, once, in the order the branches add them."""
    keys = list(old)
    for _, new in branches:
        keys.extend(k for k in new if k not in old and k not in keys)
    return keys


def _mappings_alike(before: Any, changed: list[tuple[str, Any]]) -> bool:
    """Each branch leaves a mapping of ``before``'s own type: overlaid key by key, so the keys a
    branch does not touch stay plain."""
    return isinstance(before, dict) and all(type(v) is type(before) for _, v in changed)


def _lists_alike(before: Any, changed: list[tuple[str, Any]], seen: set[int]) -> bool:
    """Each branch leaves a list of ``before``'s length (one not overlaid yet): overlaid item by item."""
    if not isinstance(before, list) or id(before) in seen:
        return False
    return all(type(v) is list and len(v) == len(before) for _, v in changed)


def _overlay_list(before: list[Any], changed: list[tuple[str, list[Any]]], seen: set[int]) -> None:
    seen.add(id(before))
    for index, item in enumerate(before):
        moved = [(cond, v[index]) for cond, v in changed if not same(item, v[index])]
        if not moved:
            continue
        if _mappings_alike(item, moved):
            overlay(item, moved, seen)
        else:
            before[index] = _conditional(item, moved)


def _same_or_missing(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    return same(a, b)
