"""A config value keeps its type in the rendered file, or the render stops.

A template that writes a value bare (``name: {{ name }}``) turns the spec's string ``"1.5"`` into
the float 1.5, ``"1.10"`` into 1.1, ``"007"`` into 7 and ``"true"`` into True; one that quotes it
(``lr: "{{ lr }}"``) turns the float 0.1 into the string ``"0.1"``; ``{{ x }}`` of a null writes
the string ``None``. The file reads without a complaint, the lock records the spec's value, and the
trainer runs with another (a revision "1.10" that is 1.1, a learning rate its code compares as a
string). Each of the variant's values that could change so is looked for in the rendered YAML, JSON,
TOML or Python file at its own path (or, where the template moves it, under its own key name, when the file
has one key of that name); where it reads as the same text in another type, the render stops.

Only a file that may hold such a value (a string that reads as another type written bare, a number,
boolean or null written as text) is parsed, so an ordinary sweep pays a scan of its values.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from sweepgen.compile.output.verify import python_values
from sweepgen.compile.spec.model import Spec
from sweepgen.compile.spec.variants.expand import Variant
from sweepgen.errors import SweepgenError, TemplateError
from sweepgen.formats import yamlio
from sweepgen.formats.tomllines import toml_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KINDS = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml", ".py": "python"}
Path = tuple[Any, ...]


def check_types_kept(text: str, out_path: str, spec: Spec, variant: Variant) -> None:
    """Exit 2 when one of ``variant``'s values reads as another type in its rendered file."""
    kind = KINDS.get(os.path.splitext(out_path)[1].lower())
    if kind is None or not _suspect(kind, text, variant.config):
        return
    found = _first_changed(kind, text, out_path, variant.config)
    if found is not None:
        raise _changed(out_path, spec, variant, *found)


def _suspect(kind: str, text: str, config: dict[str, Any]) -> bool:
    """Whether any value may have changed type (the common case: one walk over the values, no parse)."""
    quoted = _quoted_scalars(text)
    return any(_may_change(kind, v, text, quoted) for v in _values(config))


def _first_changed(kind: str, text: str, out_path: str, config: dict[str, Any]) -> tuple[Any, ...] | None:
    """(path, value, what the file reads, its line) of the first value the file reads as another
    type, found at its own path or under its own unique key name."""
    read = _read(kind, text, out_path)
    if read is None:
        return None
    data, line_of = read
    found = dict(leaves(data, ()))
    by_key = _unique_last_keys(found)
    for path, value in leaves(config, ()):
        where = path if path in found else by_key.get(path[-1])
        if where is not None and _coerced(kind, value, found[where]):
            return path, value, found[where], line_of(where)
    return None


def leaves(value: Any, path: Path) -> Iterator[tuple[Path, Any]]:
    """(path, value) of every scalar below ``value``, through mappings and lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, (*path, index))
    elif path:
        yield path, value


def _values(config: dict[str, Any]) -> list[Any]:
    """Every scalar of ``config``, without paths (the fast walk of the common case)."""
    out: list[Any] = []
    stack: list[Any] = [config]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        else:
            out.append(value)
    return out


# text between quotes that could be a number or boolean printed by `{{ }}` (a lookbehind and a
# lookahead: an apostrophe elsewhere on the line cannot pair with the quote before the value)
_QUOTED = re.compile(r"(?<=[\"'])([-+.0-9TFin][^\"'\n]{0,40})(?=[\"'])")


def _quoted_scalars(text: str) -> frozenset[str]:
    return frozenset(m for m in _QUOTED.findall(text) if _printed_scalar(m))


def _printed_scalar(token: str) -> bool:
    if token in ("True", "False"):
        return True
    try:
        float(token)
    except ValueError:
        return False
    return True


def _may_change(kind: str, value: Any, text: str, quoted: frozenset[str]) -> bool:
    """Whether ``value`` could read as another type in ``text`` (never a false no for what
    ``_coerced`` finds): a string whose bare reading is no string, a scalar printed in quotes
    (``quoted``: the quoted tokens a number or boolean prints as), a null printed as ``None``."""
    if isinstance(value, str):
        return type(plain_reading(kind, value)) is not str and value in text
    if value is None:
        return "None" in text
    return bool(quoted) and isinstance(value, (bool, int, float)) and str(value) in quoted


@functools.lru_cache(maxsize=4096)
def plain_reading(kind: str, text: str) -> Any:
    """What ``text`` written bare (unquoted) reads as in a file of ``kind``."""
    if kind == "yaml":
        return yamlio.plain_value(text)
    if kind == "python":
        return python_values.literal_text(text)
    try:
        return json.loads(text) if kind == "json" else tomllib.loads(f"v = {text}")["v"]
    except (ValueError, tomllib.TOMLDecodeError, RecursionError):
        return text


def _coerced(kind: str, value: Any, got: Any) -> bool:
    """``got`` is ``value`` written as text of another type (not a value the template chose)."""
    if isinstance(value, str):
        bare = plain_reading(kind, value)
        return type(got) is type(bare) and got == bare and type(bare) is not str
    if isinstance(got, str):
        return got == ("None" if value is None else str(value))
    return False


def _unique_last_keys(found: dict[Path, Any]) -> dict[Any, Path]:
    seen: dict[Any, list[Path]] = {}
    for path in found:
        seen.setdefault(path[-1], []).append(path)
    return {key: paths[0] for key, paths in seen.items() if len(paths) == 1 and not isinstance(key, int)}


def _read(kind: str, text: str, out_path: str) -> tuple[Any, Any] | None:
    """The file's data and a function giving a path's line; None when it does not read (the
    read-back reports that)."""
    try:
        if kind == "python":
            return python_values.named_constants(text)
        if kind == "toml":
            lines = toml_lines(text)
            return tomllib.loads(text), lambda path: lines.get(path, 0)
        doc = yamlio.loads(text, out_path, max_nodes=None)  # JSON is YAML 1.2: it knows each line
        return (json.loads(text) if kind == "json" else doc.data), lambda path: doc.loc(path).line
    except (ValueError, SyntaxError, tomllib.TOMLDecodeError, SweepgenError, RecursionError):
        return None


def _changed(
    out_path: str, spec: Spec, variant: Variant, path: Path, value: Any, got: Any, line: int | None
) -> TemplateError:
    dotted = ".".join(str(p) for p in path)
    how = "bare" if isinstance(value, str) else "as text"
    return TemplateError(
        f"variant {variant.name!r}: {out_path} line {line}: `{dotted}` is {value!r} in the spec and "
        f"the lock, but the file reads {got!r}: the template writes it {how}",
        location=spec.loc(("template",)),
        hint="write the value with `| to_yaml` (YAML), `| to_json` (JSON, a TOML scalar) or `| pyrepr` "
        "(Python), which keep its type, or fix the quotes around it in the template",
    )
