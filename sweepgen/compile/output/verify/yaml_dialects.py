"""A rendered YAML file reads the same in YAML 1.1 and YAML 1.2, or the render stops.

Many trainers read their config with PyYAML's ``safe_load`` (YAML 1.1); sweepgen, its lock and the
bundled trainer read YAML 1.2. A template that writes a value bare (``shard: {{ config.shard }}``)
can put a scalar the two read apart into the file: ``010`` is 8 to YAML 1.1 and 10 to YAML 1.2 (the
lock says ``"010"``), ``on`` is True and ``"on"``, ``1e-5`` the string ``"1e-5"`` and the float.
The lock would then record one value while the trainer runs another. ``to_yaml`` quotes what the
two read apart, so a template that uses it never meets this check.

Only a file holding a scalar that could read apart (``suspect``) is parsed both ways, so a sweep of
ordinary files pays one regular-expression scan per file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import yaml

from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.errors import SweepgenError, TemplateError
from sweepgen.formats import yamlio

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A plain scalar YAML 1.1 and 1.2 may read apart, after a blank, `[`, `{` or `,` (the text is
# searched with a newline before it): 1.1 ints (`010` octal, `0b1`, `1_000`, `1:30`), floats to 1.2
# only (`1e5`, `1.0e5`, `-.5`: 1.1 wants a dot, a signed exponent, no sign before `.`), a date, and
# 1.1's booleans, merge and value keys. Starting at a separator keeps the scan near 20 us per KB.
_SUSPECT = re.compile(
    r"[\s\[{,](?=[-+.0-9yYnNoO<=])(?:"  # the lookahead: most separators are passed at once
    r"[-+]?(?:0[0-9_box]|[0-9.]*_|[0-9]+:|[0-9]+[eE]|[0-9]*\.[0-9]*[eE][0-9]|\.[0-9])[0-9a-zA-Z._:+-]*"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\S*"
    r"|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|<<|="
    r")(?=[\s,\]}]|$)"
)


def check_reads_alike(text: str, out_path: str, spec: Spec, variant: Variant) -> None:
    """Exit 2 when the rendered YAML ``text`` of ``variant`` holds a value YAML 1.1 and 1.2 read apart."""
    if not suspect(text):
        return
    try:
        old = yaml.load(text, Loader=_LOADER)
        doc = yamlio.loads(text, out_path, max_nodes=None)
    except (yaml.YAMLError, SweepgenError, RecursionError, ValueError):
        return  # a file one of them cannot read fails loudly in the trainer that reads it
    found = next(_apart(old, doc.data, ()), None)
    if found is None:
        return
    path, one, two = found
    line = doc.loc(path).line
    dotted = ".".join(str(p) for p in path) or "the document"
    raise TemplateError(
        f"variant {variant.name!r}: {out_path} line {line}: `{dotted}` reads as {one!r} in YAML 1.1 "
        f"(PyYAML's safe_load, as many trainers read their config) but {two!r} in YAML 1.2 (sweepgen's "
        "lock, the bundled trainer)",
        location=spec.loc(("template",)),
        hint="write the value with `| to_yaml` (it quotes what the two read apart), or quote it in the "
        "template",
    )


def suspect(text: str) -> bool:
    """Whether ``text`` may hold a plain scalar YAML 1.1 and 1.2 read apart (never a false no)."""
    return _SUSPECT.search("\n" + text) is not None


def _apart(old: Any, new: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """(path, 1.1 value, 1.2 value) wherever the two readings differ, in type or value."""
    children = _paired(old, new)
    if children is None:
        if not _same(old, new):
            yield path, old, new
        return
    for key, one, two in children:
        yield from _apart(one, two, (*path, key))


def _paired(old: Any, new: Any) -> list[tuple[Any, Any, Any]] | None:
    """(key, 1.1 child, 1.2 child) of two mappings with the same keys or two lists of one length;
    None for anything else (compared whole)."""
    if isinstance(old, dict) and isinstance(new, dict) and list(old) == list(new):
        return [(key, old[key], new[key]) for key in old]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [(index, one, two) for index, (one, two) in enumerate(zip(old, new))]
    return None


def _same(a: Any, b: Any) -> bool:
    """Equal and of one type (1 is not 1.0 nor True); NaN is NaN."""
    nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    return type(a) is type(b) and (nan or bool(a == b))
