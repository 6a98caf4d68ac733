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
from sweepgen.readers.align import realign_occurrences
from sweepgen.readers.configfile import kind_of, read_config
from sweepgen.readers.model import NotEvaluated, ReadResult, not_evaluated

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
) -> Comparison:
    """Read ``a`` and ``b`` (files, or ``SPEC.yaml:VARIANT`` through ``variant_config``), diff them
    and gate the changes by the ``allow`` globs. ``kinds`` forces each side's reader (``--as``)."""
    if yaml_version is None and _uses_omegaconf((a, kinds[0]), (b, kinds[1])):
        yaml_version = "omegaconf"
    first = _load(a, resolve_bases, yaml_version, variant_config, kinds[0])
    second = _load(b, resolve_bases, yaml_version, variant_config, kinds[1])
    for path in set(first.numbered) & set(second.numbered):
        second = _realigned(first, second, path)
    globs = semantic.parse_globs(allow)
    unmatched = semantic.unmatched_globs(allow, first.data, second.data)
    changes = semantic.diff(first.data, second.data)
    return Comparison(
        first=first,
        second=second,
        changes=changes,
        refused={change.path for change in semantic.disallowed(changes, globs)},
        warnings=list(dict.fromkeys([*first.warnings, *second.warnings])),
        opaque=[*not_evaluated(first.data), *not_evaluated(second.data)],
        unmatched=unmatched,
    )


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
    depth = len(path)
    lines = {
        (*p[:depth], renamed.get(p[depth], p[depth]), *p[depth + 1 :])
        if len(p) > depth and p[:depth] == path
        else p: line
        for p, line in second.lines.items()
    }
    return dataclasses.replace(second, lines=lines)


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _load(
    ref: str,
    resolve_bases: bool,
    yaml_version: str | None,
    variant_config: VariantConfig | None,
    kind: str | None = None,
) -> ReadResult:
    spec, sep, variant = ref.rpartition(":")
    if (
        variant_config is not None
        and not Path(ref).exists()
        and sep
        and variant
        and Path(spec).suffix in (".yaml", ".yml")
        and Path(spec).is_file()
    ):
        return ReadResult(ref, variant_config(spec, variant))
    if yaml_version is None:
        yaml_version = "1.2" if _is_spec(ref, kind) else "1.1"
    return read_config(ref, resolve_bases=resolve_bases, yaml_version=yaml_version, kind=kind)


def _uses_omegaconf(*sides: tuple[str, str | None]) -> bool:
    """Does either file (not a spec) use OmegaConf's features? Then both are read as OmegaConf does."""
    for ref, kind in sides:
        path = Path(ref)
        if kind_of(ref, kind) != "yaml" or not path.is_file() or _is_spec(ref, kind):
            continue
        # here, not at the top: PyYAML (which omegayaml loads) costs a shell or JSON diff ~25 ms
        from sweepgen.readers.omegayaml import uses_omegaconf  # noqa: PLC0415 - see above

        try:
            with path.open(encoding="utf-8", errors="replace") as handle:
                if uses_omegaconf(handle.read(_SNIFF_BYTES)):
                    return True
        except OSError:
            continue
    return False


def _is_spec(ref: str, kind: str | None = None) -> bool:
    """A sweepgen spec (read as YAML 1.2, like the compiler reads it) starts its mapping with `sweepgen:`."""
    path = Path(ref)
    if kind_of(ref, kind) != "yaml" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(_SPEC_HEAD_BYTES)
    except OSError:
        return False
    return re.search(r"^sweepgen:[ \t]*\d", head, re.M) is not None
