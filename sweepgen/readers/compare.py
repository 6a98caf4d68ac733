"""`sweepgen diff A B` as one function: both sides read the way their program reads them, compared
path by path, and gated by ``--allow`` globs. The CLI prints what ``compare`` returns.

How a side is read: ``SPEC.yaml:VARIANT`` (when no file has that name) is one resolved variant of a
sweep spec, from ``variant_config`` (the CLI hands in the compile API's, which readers never import);
a sweepgen spec is YAML 1.2, as the compiler reads it; any other YAML is read the way OmegaConf
reads it when either side uses ``${...}`` or ``defaults:`` (one reading for both sides, so a literal
and an interpolation agree), else as PyYAML's YAML 1.1; ``yaml_version`` overrides that choice.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sweepgen.readers import diff as semantic
from sweepgen.readers import inputsize
from sweepgen.readers.align import realign_occurrences, reconcile_argv_orders, same_order
from sweepgen.readers.configfile import kind_of, read_config
from sweepgen.readers.diff import Change
from sweepgen.readers.model import NotEvaluated, ReadResult, not_evaluated
from sweepgen.readers.structured import yamldocs

VariantConfig = Callable[[str, str], Any]  # (spec path, variant name) -> the resolved config
_SNIFF_BYTES = 1 << 20  # how much of a YAML file is searched for OmegaConf's features
_SPEC_HEAD_BYTES = 65536  # a spec's `sweepgen:` key comes first


@dataclass(frozen=True)
class Comparison:
    first: ReadResult
    second: ReadResult
    changes: list[semantic.Change]
    refused: set[tuple[Any, ...]]  # paths of changes --allow does not allow (no --allow: every change)
    warnings: list[str]  # what the readers warn about (scalars readings disagree on), once each
    opaque: list[NotEvaluated]  # parts compared by normalised source, both sides
    unmatched: dict[str, list[str]]  # --allow globs that match no path -> the closest paths

    @property
    def exit_code(self) -> int:
        """0 equal, or every change allowed; 1 a change --allow does not allow (like diff(1))."""
        return 1 if self.refused else 0


def compare(
    a: str,
    b: str,
    *,
    allow: Sequence[str] = (),
    resolve_bases: bool = False,
    yaml_version: str | None = None,
    variant_config: VariantConfig | None = None,
    kinds: tuple[str | None, str | None] = (None, None),
    max_bytes: int | None = None,
) -> Comparison:
    """Read ``a`` and ``b`` (files, or ``SPEC.yaml:VARIANT`` through ``variant_config``), diff them
    and gate the changes by the ``allow`` globs. ``kinds`` forces each side's reader (``--as``);
    ``max_bytes`` (``--max-bytes``) replaces each format's limit (``inputsize``)."""
    with inputsize.bounded(max_bytes):
        return _compare(a, b, allow, resolve_bases, yaml_version, variant_config, kinds)


def _compare(
    a: str,
    b: str,
    allow: Sequence[str],
    resolve_bases: bool,
    yaml_version: str | None,
    variant_config: VariantConfig | None,
    kinds: tuple[str | None, str | None],
) -> Comparison:
    # each YAML side's head, read once: it says both how to read the pair and whether a side is a spec
    heads = (_yaml_head(a, kinds[0]), _yaml_head(b, kinds[1]))
    if yaml_version is None:
        yaml_version = _shared_reading(heads)
    declared = _declared_reading(heads, yaml_version)
    first = _load(a, resolve_bases, yaml_version, variant_config, kinds[0], heads[0])
    second = _load(b, resolve_bases, yaml_version, variant_config, kinds[1], heads[1])
    first, second = _aligned(first, second)
    globs = semantic.parse_globs(allow)
    unmatched = semantic.unmatched_globs(allow, first.data, second.data)
    changes = semantic.diff(first.data, second.data)
    if yaml_version is None and _read_as_11(heads, first, second):
        changes = [*changes, *_changes_as_12((a, b), resolve_bases, kinds, changes)]
    if declared is not None:
        changes = [*changes, *_changes_as_12((a, b), resolve_bases, kinds, changes, reading=declared)]
    return Comparison(
        first=first,
        second=second,
        changes=changes,
        refused={change.path for change in semantic.disallowed(changes, globs)},
        warnings=list(
            dict.fromkeys([*first.warnings, *second.warnings, *_unfollowed(first, second, resolve_bases)])
        ),
        opaque=[*not_evaluated(first.data), *not_evaluated(second.data)],
        unmatched=unmatched,
    )


def _read_as_11(heads: tuple[str | None, str | None], first: ReadResult, second: ReadResult) -> bool:
    """Both sides plain YAML read as YAML 1.1 (PyYAML's reading), with a scalar YAML 1.2 reads
    otherwise (``1e-3``, ``0o10``, ``yes``: warned), which OmegaConf may read otherwise too."""
    return _plain_pair(heads) and any(
        "in YAML 1.2" in warning for warning in [*first.warnings, *second.warnings]
    )


def _declared_reading(heads: tuple[str | None, str | None], chosen: str | None) -> str | None:
    """The reading a ``%YAML`` directive names where it is not the one the pair is read by: a
    YAML 1.2 loader (ruamel.yaml) reads a document as its directive says, so ``%YAML 1.2`` read as
    YAML 1.1 by default (PyYAML's, which ignores it) may still be read as 1.2 (``yes``, ``on``,
    ``017``, ``1:30`` otherwise), and ``%YAML 1.1`` read ``--yaml 1.2`` as 1.1 (``0o17`` a string)."""
    other = {None: "1.2", "1.2": "1.1"}.get(chosen)
    if other is None or not _plain_pair(heads):
        return None
    return other if any(_declares(head, other) for head in heads) else None


def _declares(head: str | None, version: str) -> bool:
    return re.search(rf"^%YAML[ \t]+{re.escape(version)}\b", head or "", re.M) is not None


def _plain_pair(heads: tuple[str | None, str | None]) -> bool:
    """Both sides YAML files, neither a sweepgen spec."""
    return all(head is not None and not _is_spec_text(head) for head in heads)


def _changes_as_12(
    refs: tuple[str, str],
    resolve_bases: bool,
    kinds: tuple[str | None, str | None],
    found: list[Change],
    reading: str = "omegaconf",
) -> list[Change]:
    """The changes another reading (OmegaConf's; YAML 1.2's for a file that declares it) sees that
    YAML 1.1 (PyYAML's) does not: a plain file's consumer may be either, so ``lr: 1e-3`` against
    ``lr: '1e-3'`` (one string to PyYAML, a float and a string to OmegaConf) is never "no
    differences"; ``yes`` against ``true`` (one bool to both) stays equal unless a file declares
    ``%YAML 1.2`` (a string to a YAML 1.2 loader)."""
    sides = [_load(ref, resolve_bases, reading, None, kind, None) for ref, kind in zip(refs, kinds)]
    first, second = _aligned(sides[0], sides[1])
    seen = {change.path for change in found}
    return [change for change in semantic.diff(first.data, second.data) if change.path not in seen]


def _aligned(first: ReadResult, second: ReadResult) -> tuple[ReadResult, ReadResult]:
    """The two sides made comparable: documents against documents, numbered entries met by
    content, and the order of entries whose order is meaning noted."""
    if first.several_documents != second.several_documents:
        # a YAML file of one document against one of several: both as streams of documents
        first, second = (side if side.several_documents else yamldocs.one(side) for side in (first, second))
    for path in set(first.numbered) & set(second.numbered):
        second = _realigned(first, second, path)
    if ("commands",) in first.numbered and ("commands",) in second.numbered:
        _note_order(first, second, ("commands",))
    for path in set(first.ordered) & set(second.ordered):
        _note_order(first, second, path)
    reconcile_argv_orders(first.data, second.data)
    return first, second


def _unfollowed(first: ReadResult, second: ReadResult, resolve_bases: bool) -> list[str]:
    """Without ``--resolve-bases`` a file's bases are compared as named, never read: say so for each
    file that names some, since a change inside them does not show."""
    if resolve_bases:
        return []
    return [
        f"{side.path} names bases ({named}) that are not read: a change inside them is not compared "
        "(--resolve-bases follows them)"
        for side in (first, second)
        if Path(side.path).is_file() and (named := _bases_named(side.data, side.path))
    ]


def _bases_named(data: Any, path: str) -> str:
    """How a config names its bases: mmengine's ``_base_``, ``read_base()``, a relative import,
    a Hydra ``defaults:`` list (never a sweepgen spec's own key); empty when it names none."""
    if not isinstance(data, dict):
        return ""
    found = [key for key in ("_base_", "defaults") if key in data]
    if "defaults" in found and _is_spec_text(_yaml_head(path, None) or ""):
        found.remove("defaults")
    return ", ".join([*found, *_imported_bases(data)])


def _imported_bases(data: dict[Any, Any]) -> list[str]:
    """A Python config's bases by import: ``with read_base():`` and relative imports."""
    statements = data.get("__statements__")
    found = ["read_base()"] if "read_base()" in str(statements) else []
    relative = any(type(v).__name__ == "Ref" and str(v).startswith(".") for v in data.values())
    return [*found, "a relative import"] if relative else found


def _shared_reading(heads: tuple[str | None, str | None]) -> str | None:
    """OmegaConf's reading for both sides when either file (not a spec) uses its features; else
    None, each side read by its own kind."""
    if any(head is not None and not _is_spec_text(head) and _uses_omegaconf(head) for head in heads):
        return "omegaconf"
    return None


def _realigned(first: ReadResult, second: ReadResult, path: tuple[Any, ...]) -> ReadResult:
    """``second`` with the numbered entries of the mapping at ``path`` renamed to meet the entries
    of ``first`` they correspond to by content, and the lines of what was renamed moved with it."""
    old, new = _at(first.data, path), _at(second.data, path)
    if not isinstance(old, dict) or not isinstance(new, dict):
        return second
    renamed = realign_occurrences(old, new)
    if not renamed:
        return second
    _at(second.data, path[:-1])[path[-1]] = {renamed.get(k, k): v for k, v in new.items()}
    return dataclasses.replace(second, lines=_moved_lines(second.lines, path, renamed))


def _note_order(first: ReadResult, second: ReadResult, path: tuple[Any, ...]) -> None:
    """Entries whose order is meaning, both sides' mapping at ``path``: scripts run their commands
    in order (``cd out; python t.py`` against ``python t.py; cd out``, a train and an eval swapped),
    and Hydra merges a ``defaults:`` list in order, the later entry winning where two write one key
    (which only composing tells, so any other order is a change). The entries both sides have,
    taken in another order, are a change, ``@order``: each side's common entries in its order. An
    inserted or removed entry alone leaves it out."""
    old, new = _ordered_entries(first, path), _ordered_entries(second, path)
    if old is None or new is None:
        return
    common = old.keys() & new.keys()
    ran = [[key for key in side if key in common] for side in (old, new)]
    if ran[0] != ran[1] and not same_order(old, new, common):
        _set_orders(first, second, path, ran)


def _set_orders(first: ReadResult, second: ReadResult, path: tuple[Any, ...], ran: list[list[Any]]) -> None:
    """Each side's ``@order``: a script's commands, or a list's entries."""
    for result, keys in ((first, ran[0]), (second, ran[1])):
        (_set_order if path == ("commands",) else _set_list_order)(result, path, keys)


def _ordered_entries(result: ReadResult, path: tuple[Any, ...]) -> dict[Any, Any] | None:
    """The entries of the mapping at ``path`` whose order is meaning; None where it is no mapping."""
    entries = _at(result.data, path)
    if not isinstance(entries, dict):
        return None
    return {key: value for key, value in entries.items() if not _placed_elsewhere(path, key)}


def _placed_elsewhere(path: tuple[Any, ...], key: Any) -> bool:
    """A ``defaults:`` entry whose place is not its order: an ``override`` (it changes the option
    where the group is listed)."""
    return path == ("defaults",) and str(key).startswith("override ")


def _set_order(result: ReadResult, path: tuple[Any, ...], keys: list[str]) -> None:
    """A script's ``@order``, each item at the line of the command it names."""
    result.data["@order"] = keys
    for index, key in enumerate(keys):
        result.lines[("@order", index)] = result.lines.get((*path, key), 0)


def _set_list_order(result: ReadResult, path: tuple[Any, ...], keys: list[Any]) -> None:
    """A list's ``@order`` in its mapping, one value (one move is one change), at its first entry:
    its names joined, or the list where a name holds the separator (two orders never read alike)."""
    names = [str(key) for key in keys]
    joined = ", ".join(names)
    _at(result.data, path)["@order"] = names if any("," in name for name in names) else joined
    where = (*path, "@order")
    result.lines[where] = result.line_of((*path, keys[0]))


def _moved_lines(
    lines: dict[tuple[Any, ...], int], path: tuple[Any, ...], renamed: dict[str, str]
) -> dict[tuple[Any, ...], int]:
    """The line map with every path under a renamed entry of ``path`` following the new name."""
    depth = len(path)
    return {
        (*p[:depth], renamed.get(p[depth], p[depth]), *p[depth + 1 :])
        if len(p) > depth and p[:depth] == path
        else p: line
        for p, line in lines.items()
    }


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _spec_variant(ref: str) -> tuple[str, str] | None:
    """(spec, variant) when ``ref`` is no file but ``SPEC.yaml:VARIANT`` with the spec a file."""
    spec, sep, variant = ref.rpartition(":")
    if Path(ref).exists() or not (sep and variant) or Path(spec).suffix not in (".yaml", ".yml"):
        return None
    return (spec, variant) if Path(spec).is_file() else None


def _load(
    ref: str,
    resolve_bases: bool,
    yaml_version: str | None,
    variant_config: VariantConfig | None,
    kind: str | None,
    head: str | None,
) -> ReadResult:
    named = _spec_variant(ref) if variant_config is not None else None
    if variant_config is not None and named is not None:
        return ReadResult(ref, variant_config(*named))
    if yaml_version is None:
        yaml_version = "1.2" if head is not None and _is_spec_text(head) else "1.1"
    return read_config(ref, resolve_bases=resolve_bases, yaml_version=yaml_version, kind=kind)


def _yaml_head(ref: str, kind: str | None) -> str | None:
    """The first MiB of ``ref`` when it is a YAML file (read once, for both questions below)."""
    path = Path(ref)
    if kind_of(ref, kind) != "yaml" or not path.is_file():
        return None
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(_SNIFF_BYTES)
    except OSError:
        return None


def _uses_omegaconf(head: str) -> bool:
    """Does a file (not a spec) use OmegaConf's features? Then both sides are read as OmegaConf does."""
    # here, not at the top: PyYAML (which omegayaml loads) costs a shell or JSON diff ~25 ms
    from sweepgen.readers.structured.omegayaml import uses_omegaconf  # noqa: PLC0415 - see above

    return uses_omegaconf(head)


def _is_spec_text(head: str) -> bool:
    """A sweepgen spec (read as YAML 1.2, like the compiler reads it) starts its mapping with `sweepgen:`."""
    return re.search(r"^sweepgen:[ \t]*\d", head[:_SPEC_HEAD_BYTES], re.M) is not None
