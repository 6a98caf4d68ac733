"""Override operations and how they apply to a config, copy-on-write.

Rules (DESIGN.md): a dotted key replaces the value at a path that must already exist (a typo gets the
closest existing path as a hint); ``+path`` adds a key on purpose; ``~path: null`` deletes one; a
plain key whose value is a mapping merges into the existing mapping, key by key, with the same rules.

Applying never mutates its input: only the mappings on the way to a changed key are copied, the rest
is shared with the parent config. 10,000 variants of a 150-leaf base therefore cost a few small dict
copies each, not 10,000 deep copies. Shared structures must be treated as read-only downstream
(templates run in Jinja's immutable sandbox for that reason).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from sweepgen import paths
from sweepgen.errors import Location, SpecError
from sweepgen.formats.yamlio import Doc

SET, ADD, DELETE, MERGE = "set", "add", "delete", "merge"


@dataclass(frozen=True, slots=True)
class Op:
    kind: str  # SET | ADD | DELETE | MERGE (MERGE only asserts a mapping exists there)
    path: tuple[str, ...]
    value: Any
    loc: Location
    layer: str  # e.g. "variant:coma", "grid", "zip", "ablation:A2", "base.set"

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def split_key(key: str, loc: Location) -> tuple[str, tuple[str, ...]]:
    """``+a.b`` -> (ADD, ("a", "b")); ``~a`` -> (DELETE, ...); ``a.b`` -> (SET, ...)."""
    kind = SET
    if key[:1] == "+":
        kind, key = ADD, key[1:]
    elif key[:1] == "~":
        kind, key = DELETE, key[1:]
    parts = tuple(key.split("."))
    if not key or any(not p or p[0] in "+~" for p in parts):
        raise SpecError(
            f"malformed override path {key!r}",
            location=loc,
            hint="write dotted paths like `training.seed`, `+new.key` or `~old.key`",
        )
    return kind, parts


def parse(
    mapping: dict[str, Any],
    doc: Doc,
    at: tuple[Any, ...],
    layer: str,
    locs: dict[tuple[str, str], Location] | None = None,
    prefix: tuple[str, ...] = (),
) -> list[Op]:
    """Turn an override mapping written in the spec (at YAML path ``at``) into ordered ops."""
    ops: list[Op] = []
    for key, value in mapping.items():
        loc = doc.loc(at + (key,), key=True)
        kind, rel = split_key(key, loc)
        path = prefix + rel
        if kind == DELETE and value is not None:
            raise SpecError(
                f"`~{'.'.join(rel)}` deletes a key; its value must be null",
                location=loc,
                hint=f"write `~{'.'.join(rel)}: null`",
            )
        if kind == SET and len(rel) == 1 and isinstance(value, dict):
            ops.append(Op(MERGE, path, value, loc, layer))
            ops.extend(parse(value, doc, at + (key,), layer, locs, path))
        else:
            ops.append(Op(kind, path, value, loc, layer))
        if locs is not None:
            locs[(layer, ".".join(path))] = loc
    return ops


def apply_all(
    config: dict[str, Any], ops: list[Op], layers: dict[str, str], *, where: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply ``ops`` in order to ``config`` (copy-on-write); returns (new config, new layers)."""
    owned: dict[int, dict[str, Any]] = {}  # id -> dict this call created (kept alive so ids stay unique)
    root = config
    new_layers = dict(layers)
    for op in ops:
        root = _apply(root, op, owned, where)
        if op.kind != MERGE:
            new_layers[op.dotted] = op.layer
    return root, new_layers


def _own(node: dict[str, Any], owned: dict[int, dict[str, Any]]) -> dict[str, Any]:
    if id(node) in owned:
        return node
    copy = dict(node)
    owned[id(copy)] = copy
    return copy


def _apply(root: dict[str, Any], op: Op, owned: dict[int, dict[str, Any]], where: str) -> dict[str, Any]:
    # Walk first without copying, so an error leaves nothing half-done and the hint sees the config.
    node = _parent_of(root, op, where)
    _check_exists(root, node, op, where)
    if op.kind == MERGE:
        _check_merge(node[op.path[-1]], op, where)
        return root
    return _written(root, op, owned)


def _parent_of(root: dict[str, Any], op: Op, where: str) -> dict[str, Any]:
    """The mapping that holds ``op``'s key; a missing path or a non-mapping on it is an error."""
    parents = op.path[:-1]
    node: Any = root
    for i, part in enumerate(parents):
        if not isinstance(node, dict) or part not in node:
            raise _missing(root, op.path[: i + 1], op, where)
        node = node[part]
    if not isinstance(node, dict):
        raise SpecError(
            f"`{'.'.join(parents)}` is a {type(node).__name__}, not a mapping, in {where}",
            location=op.loc,
            key=op.dotted,
            hint="lists and scalars are replaced whole; override the parent path",
        )
    return node


def _check_exists(root: dict[str, Any], node: dict[str, Any], op: Op, where: str) -> None:
    """An ADD names a new key; a SET, DELETE or MERGE an existing one."""
    exists = op.path[-1] in node
    if op.kind == ADD and exists:
        raise SpecError(
            f"`+{op.dotted}` adds a key that already exists in {where}",
            location=op.loc,
            key=op.dotted,
            hint=f"to replace its value, drop the `+`: `{op.dotted}`",
        )
    if op.kind in (SET, DELETE, MERGE) and not exists:
        raise _missing(root, op.path, op, where)


def _written(root: dict[str, Any], op: Op, owned: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """``op`` (SET, ADD or DELETE) applied copy-on-write: each mapping on its path copied once
    (``owned``: the copies made so far), everything else shared."""
    parents, key = op.path[:-1], op.path[-1]
    root = _own(root, owned)
    node = root
    for part in parents:
        child = _own(node[part], owned)
        node[part] = child
        node = child
    if op.kind == DELETE:
        del node[key]
    else:
        node[key] = op.value
    return root


def _check_merge(current: Any, op: Op, where: str) -> None:
    """A merge goes into a mapping, and changes something."""
    if not isinstance(current, dict):
        raise SpecError(
            f"`{op.dotted}` is a {type(current).__name__} in {where}; a mapping cannot be merged into it",
            location=op.loc,
            key=op.dotted,
            hint=f"to replace it, write `~{op.dotted}: null` then `+{op.dotted}: {{...}}`",
        )
    if not op.value and current:
        raise SpecError(
            f"merging an empty mapping into `{op.dotted}` changes nothing",
            location=op.loc,
            key=op.dotted,
            hint=f"to empty it, write `~{op.dotted}: null` then `+{op.dotted}: {{}}`",
        )


def _type_clash(old: Any, new: Any) -> bool:
    """Strict types (DESIGN.md): an override keeps a number a number and a bool a bool: no bool or
    string for a number, no string or number for a bool, no float for an int (an int for a float is
    fine: ``lr: 1`` means 1.0). ``null`` on either side, strings and containers are not checked."""
    if old is None or new is None:
        return False
    if type(old) is bool:
        return type(new) is not bool
    if type(old) is int:
        return type(new) is not int
    if type(old) is float:
        return type(new) not in (float, int)
    return False


def check_types(config: dict[str, Any], ops: list[Op], where: str) -> None:
    """Strict types for the SET ops in ``ops`` against the values they replace in ``config``.

    Kept out of ``apply_all`` so that applying stays pure mechanics (the gate's property tests drive
    it with every type change); expansion calls this once per op, derive once per variant.
    """
    for op in ops:
        if op.kind == SET:
            old = paths.get(config, op.path)
            if old is not paths.MISSING:
                _check_type(old, op, where)


def _a(value: Any) -> str:
    name = type(value).__name__
    return ("an " if name[0] in "aeiou" else "a ") + name


def _check_type(old: Any, op: Op, where: str) -> None:
    if _type_clash(old, op.value):
        raise SpecError(
            f"`{op.dotted}` is {_a(old)} ({old!r}) in the config, "
            f"but {where} sets {_a(op.value)} ({op.value!r})",
            location=op.loc,
            key=op.dotted,
            hint=f"write {_a(old)} (no quotes around numbers; 2, not 2.0, for an int); if "
            "the key really takes another type, change it in the base too",
        )


def _missing(root: dict[str, Any], path: tuple[str, ...], op: Op, where: str) -> SpecError:
    dotted = ".".join(path)
    existing = paths.all_paths(root)
    close = difflib.get_close_matches(dotted, existing, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`?" if close else "check the path against the base config"
    if op.kind in (SET, MERGE) and path == op.path:
        hint += f" To add a new key on purpose, write `+{dotted}`."
    what = "path" if path == op.path else "parent path"
    return SpecError(
        f"override {what} `{dotted}` does not exist in {where}", location=op.loc, key=op.dotted, hint=hint
    )
