"""The one YAML writer: block YAML of plain data that YAML 1.1 and 1.2 readers both type the same way
(``1.0e-05`` not ``1e-05``, ``"yes"`` quoted), written fast for many variants at once.

The templates' ``to_yaml`` / ``yaml_scalar`` filters (compile/template/yamlfilter.py) and the
trainer's config.yaml (``dumps``) both write through it, so a config reads back the same whichever
wrote it. The YAML *reader* is ``sweepgen.formats.yamlio``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_PLAIN_STR = re.compile(r"^[A-Za-z_/$][A-Za-z0-9_./${}-]*$")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, str):
        return _str_text(value)
    raise TypeError(f"to_yaml cannot write a {type(value).__name__}")


def _float_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if exponent and "." not in mantissa:  # 1e-05 is a string to YAML 1.1 readers; 1.0e-05 is not
        text = f"{mantissa}.0e{exponent}"
    return text


def _str_text(value: str) -> str:
    if _PLAIN_STR.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return _YAML_UNSAFE.sub(_escape, json.dumps(value, ensure_ascii=False))


# Characters a YAML reader does not give back as written inside a double-quoted scalar: NEL (U+0085)
# and the line/paragraph separators are line breaks to YAML (they read back as a space), and C1
# controls, DEL, BOM and non-characters are not printable. \uXXXX is a valid escape in YAML 1.1 and 1.2.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def _scalar_key(value: Any) -> tuple[type, Any]:
    """A cache key that tells apart what equality does not: 0.0 and -0.0 (and 1, 1.0, True by type)."""
    kind = type(value)
    return (kind, value.hex()) if kind is float else (kind, value)


def to_yaml(value: Any, indent: int = 0) -> str:
    """Block-style YAML of plain data, keys in their given order; no trailing newline."""
    return YamlWriter().block(value, indent)


def dumps(data: Any) -> str:
    """A YAML document of ``data`` (JSON-like), keys in their order, ending in a newline: what
    ``yamlio.loads`` and PyYAML's 1.1 ``safe_load`` both read back as ``data``."""
    return to_yaml(data) + "\n"


class YamlWriter:
    """``to_yaml`` with a cache of rendered subtrees, by identity.

    Variants share unchanged subtrees with the base (copy-on-write), so across 10,000 variants most
    sections are the very same dict objects: each is written once. Entries keep their object alive,
    so an ``id`` can never be reused by another object while the cache (one per render) exists.
    A subtree is cached when it is met a second time: the ones a single variant owns (its whole
    config, the sections its overrides changed) are met once, and caching their text would hold
    every file's bytes in memory again. ``_seen`` is forgotten every ``_SEEN_MAX`` first sightings.
    """

    _SEEN_MAX = 1 << 16

    def __init__(self) -> None:
        self._cache: dict[tuple[int, int], tuple[Any, str]] = {}
        self._seen: dict[tuple[int, int], Any] = {}  # met once; the value keeps its id unique
        self._scalars: dict[tuple[type, Any], str] = {}  # keyed by type too: 1, 1.0, True differ
        self._leaf_lines: dict[tuple[int, Any, type, Any], str] = {}

    def _scalar(self, value: Any) -> str:
        key = _scalar_key(value)
        text = self._scalars.get(key)
        if text is None:
            text = self._scalars[key] = self.scalar(value)
        return text

    def scalar(self, value: Any) -> str:
        """One scalar's text, for a value the cache has not seen; a writer that knows more kinds of
        value (the templates' undefined names) overrides it."""
        return yaml_scalar(value)

    def _inline(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{}"
        if isinstance(value, list):
            return "[]"
        return self._scalar(value)

    def __call__(self, value: Any, indent: int = 0) -> str:
        return self.block(value, indent)

    def block(self, value: Any, indent: int) -> str:
        if isinstance(value, (dict, list)):
            key = (id(value), indent)
            hit = self._cache.get(key)
            if hit is not None:
                return hit[1]
            text = self._mapping(value, indent) if isinstance(value, dict) else self._sequence(value, indent)
            if key in self._seen:
                self._cache[key] = (value, text)
            else:
                if len(self._seen) >= self._SEEN_MAX:
                    self._seen.clear()
                self._seen[key] = value
            return text
        return " " * indent + self._scalar(value)

    def _mapping(self, value: dict[str, Any], indent: int) -> str:
        pad = " " * indent
        if not value:
            return pad + "{}"
        lines = []
        leaf_lines = self._leaf_lines
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                if item:
                    lines.append(f"{pad}{self._scalar(str(key))}:\n{self.block(item, indent + 2)}")
                else:
                    lines.append(f"{pad}{self._scalar(str(key))}: {'{}' if isinstance(item, dict) else '[]'}")
                continue
            # `key: scalar` lines repeat across variants; cache them whole (typed: 1, 1.0, True differ;
            # a float by its value, but 0.0 and -0.0, equal and written differently, by their hex;
            # _scalar_key written out: this line runs for every leaf of every variant)
            kind = type(item)
            ck = (indent, key, kind, (item or item.hex()) if kind is float else item)
            line = leaf_lines.get(ck)
            if line is None:
                line = leaf_lines[ck] = f"{pad}{self._scalar(str(key))}: {self._scalar(item)}"
            lines.append(line)
        return "\n".join(lines)

    def _sequence(self, value: list[Any], indent: int) -> str:
        pad = " " * indent
        if not value:
            return pad + "[]"
        lines = []
        for item in value:
            if isinstance(item, (dict, list)) and item:
                lines.append(f"{pad}- {self.block(item, indent + 2)[indent + 2 :]}")
            else:
                lines.append(f"{pad}- {self._inline(item)}")
        return "\n".join(lines)
