"""The string branch of a JSON Schema property: whether it takes any string, and holding it to a
list of values (an ``enum``). One rule for `schema --export` (a field's ``choices``) and for the
values a package's code closes (code_choices)."""

from __future__ import annotations

from typing import Any


def takes_string(prop: dict[str, Any]) -> bool:
    return any(b.get("type") == "string" for b in _branches(prop))


def open_string(prop: dict[str, Any]) -> bool:
    """True for a property that takes any string: a string branch, and no values of its own."""
    return takes_string(prop) and not any("enum" in b or "const" in b for b in _branches(prop))


def restrict(prop: dict[str, Any], values: list[str]) -> None:
    """Hold the string branches of ``prop`` without values to ``values``; its other branches (None, a
    list) stay. No values restrict nothing."""
    for branch in _branches(prop) if values else []:
        if branch.get("type") == "string" and "enum" not in branch:
            branch["enum"] = values


def _branches(prop: dict[str, Any]) -> list[dict[str, Any]]:
    return [prop, *[b for b in prop.get("anyOf", []) if isinstance(b, dict)]]


def open_items(prop: dict[str, Any]) -> bool:
    """True for a property that takes a list of any strings (DPO's ``loss_type``)."""
    return any(b.get("type") == "array" and open_string(b.get("items", {})) for b in _branches(prop))


def restrict_items(prop: dict[str, Any], values: list[str]) -> None:
    """Hold the string items of ``prop``'s list branches to ``values``, and its string branches too
    (the class makes one string a one-item list)."""
    restrict(prop, values)
    for branch in _branches(prop) if values else []:
        if branch.get("type") == "array" and isinstance(branch.get("items"), dict):
            restrict(branch["items"], values)
